"""Helpers shared by the ``relay.nn`` op modules: layouts, padding tuples, accumulator dtypes."""

from __future__ import annotations

import numbers

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.dtype import normalize_dtype
from irlab.tir.data_layout import split_kernel_layout


# ---------------------------------------------------------------------------------------------
# Python-constructor side (TVM's python/tvm/relay/op/nn/utils.py)
def get_pad_tuple2d(padding) -> tuple:
    """``padding`` as (top, left, bottom, right): an int pads all sides, a pair (h, w) pads
    both sides of each axis, four values are taken as they are."""
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        return (int(padding),) * 4
    if isinstance(padding, (tuple, list)):
        if len(padding) == 4:
            return tuple(int(p) for p in padding)
        if len(padding) == 2:
            pad_h, pad_w = int(padding[0]), int(padding[1])
            return (pad_h, pad_w, pad_h, pad_w)
        raise IrlabError(f"padding must have 2 or 4 values, got {tuple(padding)}")
    raise IrlabError(f"unknown padding option {padding!r}")


def int_pair(value, what: str):
    """An int becomes ``(v, v)``; sequences are kept (the relation checks their length)."""
    if value is None:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value), int(value))
    if isinstance(value, (tuple, list)):
        return tuple(value)
    raise IrlabError(f"{what} must be an int or a tuple of ints, got {value!r}")


def dtype_or_empty(dtype) -> str:
    """``""`` (unset, TVM's NullValue<DataType>) stays empty, anything else is normalized."""
    return normalize_dtype(dtype) if dtype else ""


# ---------------------------------------------------------------------------------------------
# type-relation side
def check_pair(value, what: str, ctx, minimum: int = 1) -> tuple:
    """A 2-value attribute (strides, dilation, kernel_size) checked for length and range."""
    value = tuple(value) if value is not None else ()
    ctx.expect(len(value) == 2, f"{what} must have 2 values (height, width), got {value}")
    ctx.expect(all(isinstance(v, int) and v >= minimum for v in value),
               f"{what} must be integers >= {minimum}, got {value}")
    return value


def padding4(padding, ctx) -> tuple:
    """Attrs padding (1, 2 or 4 values, as TVM's C++ accepts) as (top, left, bottom, right)."""
    pad = tuple(padding) if padding is not None else ()
    if len(pad) == 1:
        pad = pad * 4
    elif len(pad) == 2:
        pad = pad + pad
    ctx.expect(len(pad) == 4, f"padding must have 1, 2 or 4 values, got {tuple(padding)}")
    ctx.expect(all(isinstance(p, int) and p >= 0 for p in pad),
               f"padding must be non-negative integers, got {tuple(padding)}")
    return pad


def layout_axes(layout: str, letters: str, what: str, ctx) -> dict:
    """Position of each letter of ``letters`` in ``layout``, which must be a permutation of them
    (packed layouts such as NCHW16c are not supported by these ops)."""
    if sorted(layout) != sorted(letters):
        ctx.fail(f"{what} {layout!r} is not supported: expected a permutation of {letters!r}")
    return {c: layout.index(c) for c in letters}


def kernel_out_channels(weight_shape, layout: str) -> int:
    """Output channels of a conv2d weight of ``weight_shape`` in ``layout`` (split or not)."""
    primal, block = split_kernel_layout(layout)
    return int(weight_shape[primal.index("O")]) * (block or 1)


def unpack_kernel(weight: np.ndarray, layout: str) -> np.ndarray:
    """A numpy weight in ``layout`` (e.g. ``OIHW64o``) as the same weight in its primal
    layout (``OIHW``): the block axis merged back behind O."""
    primal, block = split_kernel_layout(layout)
    if block is None:
        return weight
    o_axis = primal.index("O")
    merged = np.moveaxis(weight, -1, o_axis + 1)
    shape = list(weight.shape[:-1])
    shape[o_axis] *= block
    return merged.reshape(shape)


def spatial_axes(layout: str, ndim: int, ctx) -> tuple:
    """(H axis, W axis) of a pooling layout: any layout naming H and W once, unsplit
    (NCHW, NHWC, NCHW16c...), whose number of dimensions matches the data."""
    dims = [c for c in layout if c.isalpha()]
    ctx.expect(dims.count("H") == 1 and dims.count("W") == 1
               and "h" not in dims and "w" not in dims,
               f"layout {layout!r} must contain H and W exactly once, neither of them split")
    ctx.expect(len(set(dims)) == len(dims), f"layout {layout!r} repeats a dimension")
    ctx.expect(len(dims) == ndim,
               f"layout {layout!r} has {len(dims)} dimensions but the data has rank {ndim}")
    return dims.index("H"), dims.index("W")


# ---------------------------------------------------------------------------------------------
# reference side
def acc_dtype(dtype) -> np.dtype:
    """The dtype references accumulate in: float64 for floats (so the oracle is closer to the
    exact result than any float32 kernel), int64 for integers and bool."""
    dtype = np.dtype(dtype)
    return np.dtype("float64") if dtype.kind in "fc" else np.dtype("int64")


def trunc_div(numer: np.ndarray, denom) -> np.ndarray:
    """Division as TVM's ``div``: true division for floats, C-style truncation for integers."""
    if numer.dtype.kind in "iub":
        denom = np.asarray(denom, dtype=np.int64)
        quotient = np.abs(numer) // np.maximum(denom, 1)
        return np.where(denom == 0, 0, np.sign(numer) * quotient)
    with np.errstate(divide="ignore", invalid="ignore"):
        return numer / denom
