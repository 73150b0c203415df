"""How a per-channel scale moves through an op: the per-op facts ``FoldScaleAxis`` reads.

An op says which rule it follows (``TScaleAxisRule``); an op whose weight absorbs the scale
(conv2d, dense) also says along which axes (``FScaleAxisChannels(call) -> ScaleAxes | None``).
The pass (``relay/transform/fold_scale_axis.py``) implements each rule once, for every op that
declares it.
"""

from __future__ import annotations

import enum
from typing import NamedTuple


class ScaleAxisRule(enum.Enum):
    """The identity that lets a scale ``s`` (along some axes) cross the op."""

    POSITIVE_HOMOGENEOUS = "f(x * s) == f(x) * s for s > 0"  # relu, leaky_relu
    ADDITIVE = "(x * s) + b == (x + b / s) * s"  # add, subtract
    SCALE = "x * s: where a scale comes from"  # multiply
    BIAS_ADD = "bias_add(x, b) * s == bias_add(x * s, b * s)"  # backward only
    WEIGHT = "op(x * s, w) == op(x, w * s) along the weight's matching axis"  # conv2d, dense


class ScaleAxes(NamedTuple):
    """The axes of a ``WEIGHT`` op's call that a scale runs along."""

    data: int  # axis of the data input (forward folding)
    output: int  # axis of the output (backward folding)
    weight_of_data: int  # weight axis that absorbs a data scale
    weight_of_output: int  # weight axis that absorbs an output scale


__all__ = ["ScaleAxisRule", "ScaleAxes"]
