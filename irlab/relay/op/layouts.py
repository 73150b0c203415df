"""``layout_transform`` and the layout strings it reads (``NCHW``, ``NCHW16c``, ``OIHW64o``):
primal axes in upper case, sub-axes as a factor and a lower-case letter (TVM's ``Layout``).

Attrs and relation follow TVM v0.13 (``LayoutTransformAttrs``, ``LayoutTransformRel``); a
primal extent that the new factor does not divide is rounded up with zero padding, as TVM's
BijectiveLayout shape rule.
"""

from __future__ import annotations

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.attrs import Attrs
from irlab.ir.op import NOT_APPLICABLE, OpPattern, register_op
from irlab.ir.type import TensorType
from irlab.relay.op.op_common import make_call, out_array
from irlab.relay.op.transform import _DATA, _RaiseCtx
from irlab.tir.data_layout import parse_layout


class LayoutTransformAttrs(Attrs):
    _type_key = "relay.attrs.LayoutTransformAttrs"
    src_layout: str
    dst_layout: str




def _layout_factors(axes):
    return {a.upper(): f for a, f in axes if f is not None}


def _layout_plan(shape, src, dst, fail):
    """Check ``shape`` against layout ``src``; return (src axes, dst axes, logical extents)."""
    try:
        src_axes, dst_axes = parse_layout(src), parse_layout(dst)
    except IrlabError as err:
        fail(f"{err}")
    if len(shape) != len(src_axes):
        fail(f"data shape {tuple(shape)} has rank {len(shape)}, but "
             f"src_layout {src} has {len(src_axes)} axes")
    src_primal = {a for a, f in src_axes if f is None}
    dst_primal = {a for a, f in dst_axes if f is None}
    if src_primal != dst_primal:
        fail(f"cannot convert from {src} to {dst}: the primal axes differ "
             f"({''.join(sorted(src_primal))} vs {''.join(sorted(dst_primal))})")
    sfac = _layout_factors(src_axes)
    extent = {}
    for (a, f), d in zip(src_axes, shape):
        if f is not None and d != f:
            fail(f"data shape {tuple(shape)} does not match src_layout {src}: "
                 f"axis {a} has size {d}, expected {f}")
        if f is None:
            extent[a] = d * sfac.get(a, 1)
    return src_axes, dst_axes, extent


def _layout_transform_rel(ctx):
    data = ctx.tensor(0, "data")
    _, dst_axes, extent = _layout_plan(data.shape, ctx.attrs.src_layout, ctx.attrs.dst_layout,
                                       ctx.fail)
    dfac = _layout_factors(dst_axes)
    # Primal extents round up (ceil-div) when the new factor does not divide them; the extra
    # elements are zero padding, as TVM's BijectiveLayout shape rule and topi compute.
    oshape = tuple(f if f is not None else -(-extent[a] // dfac.get(a, 1)) for a, f in dst_axes)
    return TensorType(oshape, data.dtype)


def _layout_transform_reference(inputs, attrs, out_type):
    x = inputs[0]
    src_axes, dst_axes, extent = _layout_plan(x.shape, attrs.src_layout, attrs.dst_layout,
                                              _RaiseCtx.fail)
    # 1. src -> logical tensor: each primal axis followed by its sub-axis, merged.
    primal = [a for a, f in src_axes if f is None]
    pos = {a: i for i, (a, _) in enumerate(src_axes)}
    order = []
    for a in primal:
        order.append(pos[a])
        if a.lower() in pos:
            order.append(pos[a.lower()])
    logical = np.transpose(x, order).reshape([extent[a] for a in primal])
    # 2. logical -> dst: pad each primal axis to a multiple of its dst factor, split, permute.
    dfac = _layout_factors(dst_axes)
    pads = [(0, -extent[a] % dfac.get(a, 1)) for a in primal]
    if any(p for _, p in pads):
        logical = np.pad(logical, pads)
    split_shape, names = [], []
    for a, d in zip(primal, logical.shape):
        f = dfac.get(a)
        split_shape += [d] if f is None else [d // f, f]
        names += [a] if f is None else [a, a.lower()]
    parts = logical.reshape(split_shape)
    result = np.transpose(parts, [names.index(a) for a, _ in dst_axes])
    return out_array(result, out_type)


register_op("layout_transform", num_inputs=1, arguments=_DATA, attrs_type=LayoutTransformAttrs,
            type_rel=_layout_transform_rel, pattern=OpPattern.INJECTIVE, support_level=5,
            reference=_layout_transform_reference,
            description="Change the data layout, e.g. NCHW -> NHWC or NCHW -> NCHW16c.",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)


def layout_transform(data, src_layout, dst_layout):
    """Transform ``data`` from ``src_layout`` to ``dst_layout`` (e.g. ``NCHW`` to ``NCHW16c``)."""
    parse_layout(src_layout)
    parse_layout(dst_layout)
    return make_call("layout_transform", [data], LayoutTransformAttrs(
        src_layout=src_layout, dst_layout=dst_layout))


__all__ = ["LayoutTransformAttrs", "parse_layout", "layout_transform"]
