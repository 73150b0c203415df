"""Shape manipulation: ``reshape``, ``flatten``, ``permute_dims``, ``concat``, ``split``,
``squeeze``, ``expand_dims``. Output shapes are computed symbolically (``reshape(x, (n*m,))``
of an ``(n, m)`` tensor is proven to keep the element count); legalized to TOPI's transform
computes."""

from __future__ import annotations

from irlab import topi
from irlab.errors import DiagnosticError
from irlab.ir.op import OpPattern
from irlab.relax import expr as rx
from irlab.relax.op.attrs import (ConcatAttrs, ExpandDimsAttrs, PermuteDimsAttrs, RepeatAttrs,
                                  SplitAttrs, SqueezeAttrs, TileAttrs)
from irlab.relax.op.common import (const_int, dims_equal, make_call, normalize_axes,
                                   normalize_axis, prod_dims, simplify_dim, tensor_arg,
                                   tensor_args)
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import (ShapeStructInfo, TensorStructInfo, TupleStructInfo,
                                     as_dim)
from irlab.tir import op as tir_op

__all__ = ["reshape", "flatten", "permute_dims", "concat", "split", "squeeze", "expand_dims"]


# -- reshape / flatten ------------------------------------------------------------------------
def _target_dims(call):
    target = call.args[1]
    sinfo = target.struct_info
    if not isinstance(sinfo, ShapeStructInfo):
        raise DiagnosticError(f"R.reshape: the new shape must be a shape, got {sinfo}", call)
    return sinfo


def _reshape_infer(call, bb):
    x = tensor_arg(call, 0)
    target = _target_dims(call)
    if target.values is None:
        return TensorStructInfo(dtype=x.dtype, ndim=target.ndim)
    values = list(target.values)
    holes = [k for k, v in enumerate(values) if const_int(v) == -1]
    if len(holes) > 1:
        raise DiagnosticError("R.reshape: at most one dim may be -1", call)
    if x.dims is None:
        if holes:
            return TensorStructInfo(dtype=x.dtype, ndim=len(values))
        return TensorStructInfo(values, x.dtype)
    total = prod_dims(x.dims)
    if holes:
        known = prod_dims([v for k, v in enumerate(values) if k != holes[0]])
        values[holes[0]] = simplify_dim(tir_op.floordiv(total, known))
    new_total = prod_dims(values)
    if not dims_equal(total, new_total):
        if const_int(total) is not None and const_int(new_total) is not None:
            raise DiagnosticError(f"R.reshape: cannot reshape {x} ({const_int(total)} "
                                  f"elements) to {const_int(new_total)} elements", call)
    return TensorStructInfo(values, x.dtype)


def _reshape_legalize(bb, call):
    out = call.struct_info
    return bb.call_te(topi.transform.reshape, call.args[0], rx.ShapeExpr(out.dims),
                      primfunc_name_hint="reshape")


register_relax_op("relax.reshape", _reshape_infer, num_inputs=2,
                  pattern=OpPattern.INJECTIVE, legalize=_reshape_legalize,
                  description="the same elements in a new shape")


def reshape(x, shape):
    """``x`` with shape ``shape`` (a ShapeExpr, or a list of dims; one may be -1)."""
    if isinstance(shape, (list, tuple)):
        shape = rx.ShapeExpr(shape)
    return make_call("relax.reshape", [x, shape])


def _flatten_infer(call, bb):
    (x,) = tensor_args(call, 1)
    if x.dims is None:
        return TensorStructInfo(dtype=x.dtype, ndim=1)
    return TensorStructInfo([prod_dims(x.dims)], x.dtype)


def _flatten_legalize(bb, call):
    return bb.call_te(topi.transform.reshape, call.args[0],
                      rx.ShapeExpr(call.struct_info.dims), primfunc_name_hint="reshape")


register_relax_op("relax.flatten", _flatten_infer, num_inputs=1, pattern=OpPattern.INJECTIVE,
                  legalize=_flatten_legalize, description="a 1-D view of all the elements")


def flatten(x):
    """``x`` as a 1-D tensor."""
    return make_call("relax.flatten", [x])


# -- permute_dims -----------------------------------------------------------------------------
def _axes_of(call, ndim):
    axes = call.attrs.axes
    if axes is None:
        return list(range(ndim - 1, -1, -1))
    if len(axes) != ndim:
        raise DiagnosticError(f"R.permute_dims: {len(axes)} axes for a tensor of {ndim} dims",
                              call)
    return normalize_axes(call, axes, ndim)


def _permute_infer(call, bb):
    (x,) = tensor_args(call, 1)
    if x.is_unknown_ndim:
        return x
    axes = _axes_of(call, x.ndim)
    if x.dims is None:
        return TensorStructInfo(dtype=x.dtype, ndim=x.ndim)
    return TensorStructInfo([x.dims[a] for a in axes], x.dtype)


def _permute_legalize(bb, call):
    axes = _axes_of(call, call.args[0].struct_info.ndim)
    return bb.call_te(topi.transform.transpose, call.args[0], axes,
                      primfunc_name_hint="transpose")


register_relax_op("relax.permute_dims", _permute_infer, num_inputs=1,
                  attrs_type=PermuteDimsAttrs, pattern=OpPattern.INJECTIVE,
                  legalize=_permute_legalize, description="axes reordered")


def permute_dims(x, axes=None):
    """``x`` with its axes in the order ``axes`` (reversed when None)."""
    return make_call("relax.permute_dims", [x],
                     PermuteDimsAttrs(None if axes is None else tuple(int(a) for a in axes)))


# -- concat / split ---------------------------------------------------------------------------
def _tuple_fields(call):
    sinfo = call.args[0].struct_info
    if not isinstance(sinfo, TupleStructInfo):
        raise DiagnosticError(f"{call.op.name}: expects a tuple of tensors, got {sinfo}", call)
    for k, f in enumerate(sinfo.fields):
        if not isinstance(f, TensorStructInfo):
            raise DiagnosticError(f"{call.op.name}: field {k} is not a tensor ({f})", call)
    return list(sinfo.fields)


def _concat_infer(call, bb):
    fields = _tuple_fields(call)
    if not fields:
        raise DiagnosticError("R.concat of an empty tuple", call)
    dtype, ndim = fields[0].dtype, fields[0].ndim
    if any(f.dtype != dtype for f in fields) or any(f.ndim != ndim for f in fields):
        raise DiagnosticError(f"R.concat: fields differ in dtype or rank: "
                              f"{', '.join(map(str, fields))}", call)
    axis = normalize_axis(call, call.attrs.axis, ndim)
    if any(f.dims is None for f in fields):
        return TensorStructInfo(dtype=dtype, ndim=ndim)
    out = list(fields[0].dims)
    for f in fields[1:]:
        for k in range(ndim):
            if k != axis and not dims_equal(out[k], f.dims[k]):
                if const_int(out[k]) is not None and const_int(f.dims[k]) is not None:
                    raise DiagnosticError(f"R.concat: dim {k} differs: {fields[0]} vs {f}",
                                          call)
        out[axis] = out[axis] + f.dims[axis]
    out[axis] = simplify_dim(out[axis])
    return TensorStructInfo(out, dtype)


def _tensor_list(bb, tup):
    if isinstance(tup, rx.Tuple):
        return list(tup.fields)
    count = len(tup.struct_info.fields)
    return [bb.emit(rx.TupleGetItem(tup, k)) for k in range(count)]


def _concat_legalize(bb, call):
    tensors = _tensor_list(bb, call.args[0])
    axis = normalize_axis(call, call.attrs.axis, call.struct_info.ndim)
    return bb.call_te(topi.transform.concatenate, tensors, axis, primfunc_name_hint="concatenate")


register_relax_op("relax.concat", _concat_infer, num_inputs=1, attrs_type=ConcatAttrs,
                  pattern=OpPattern.INJECTIVE, legalize=_concat_legalize,
                  description="tensors joined along an axis")


def concat(tensors, axis=0):
    """The tensors (a tuple or list) joined along ``axis``."""
    if isinstance(tensors, (list, tuple)):
        tensors = rx.Tuple(tensors)
    return make_call("relax.concat", [tensors], ConcatAttrs(int(axis)))


def _split_bounds(call, dim):
    spec = call.attrs.indices_or_sections
    if isinstance(spec, int):
        if spec <= 0:
            raise DiagnosticError(f"R.split: {spec} sections", call)
        if const_int(dim) is not None and const_int(dim) % spec:
            raise DiagnosticError(f"R.split: dim {const_int(dim)} does not split into {spec} "
                                  f"equal sections", call)
        step = simplify_dim(tir_op.floordiv(dim, as_dim(spec)))
        points = [simplify_dim(step * k) for k in range(1, spec)]
    else:
        points = [as_dim(p) for p in spec]
    return [as_dim(0)] + points + [dim]


def _split_infer(call, bb):
    (x,) = tensor_args(call, 1)
    spec = call.attrs.indices_or_sections
    count = spec if isinstance(spec, int) else len(spec) + 1
    if x.dims is None:
        return TupleStructInfo([TensorStructInfo(dtype=x.dtype, ndim=x.ndim)] * count)
    axis = normalize_axis(call, call.attrs.axis, x.ndim)
    bounds = _split_bounds(call, x.dims[axis])
    fields = []
    for lo, hi in zip(bounds, bounds[1:]):
        dims = list(x.dims)
        dims[axis] = simplify_dim(hi - lo)
        fields.append(TensorStructInfo(dims, x.dtype))
    return TupleStructInfo(fields)


def _split_legalize(bb, call):
    x = call.args[0]
    axis = normalize_axis(call, call.attrs.axis, x.struct_info.ndim)
    spec = call.attrs.indices_or_sections
    return bb.call_te(topi.transform.split, x, spec if isinstance(spec, int) else list(spec),
                      axis, primfunc_name_hint="split")


register_relax_op("relax.split", _split_infer, num_inputs=1, attrs_type=SplitAttrs,
                  pattern=OpPattern.INJECTIVE, legalize=_split_legalize,
                  description="a tensor cut along an axis into a tuple")


def split(x, indices_or_sections, axis=0):
    """A tuple of pieces of ``x`` along ``axis``: ``n`` equal sections or at cut points."""
    spec = indices_or_sections if isinstance(indices_or_sections, int) \
        else tuple(int(i) for i in indices_or_sections)
    return make_call("relax.split", [x], SplitAttrs(spec, int(axis)))


# -- squeeze / expand_dims --------------------------------------------------------------------
def _squeeze_axes(call, x):
    axis = call.attrs.axis
    if axis is None:
        return [k for k, d in enumerate(x.dims) if const_int(d) == 1]
    axes = normalize_axes(call, axis, x.ndim)
    for a in axes:
        if x.dims is not None and const_int(x.dims[a]) not in (1, None):
            raise DiagnosticError(f"R.squeeze: axis {a} of {x} is not of size 1", call)
    return axes


def _squeeze_infer(call, bb):
    (x,) = tensor_args(call, 1)
    if x.dims is None:
        if call.attrs.axis is None or x.is_unknown_ndim:
            return TensorStructInfo(dtype=x.dtype, ndim=-1)
        return TensorStructInfo(dtype=x.dtype, ndim=x.ndim - len(call.attrs.axis))
    axes = _squeeze_axes(call, x)
    return TensorStructInfo([d for k, d in enumerate(x.dims) if k not in axes], x.dtype)


def _squeeze_legalize(bb, call):
    x = call.args[0]
    return bb.call_te(topi.transform.squeeze, x, _squeeze_axes(call, x.struct_info),
                      primfunc_name_hint="squeeze")


register_relax_op("relax.squeeze", _squeeze_infer, num_inputs=1, attrs_type=SqueezeAttrs,
                  pattern=OpPattern.INJECTIVE, legalize=_squeeze_legalize,
                  description="size-1 axes removed")


def squeeze(x, axis=None):
    """``x`` without the size-1 axes ``axis`` (every size-1 axis when None)."""
    if isinstance(axis, int):
        axis = (axis,)
    return make_call("relax.squeeze", [x],
                     SqueezeAttrs(None if axis is None else tuple(int(a) for a in axis)))


def _expand_axes(call, ndim):
    return sorted(normalize_axes(call, call.attrs.axis, ndim + len(call.attrs.axis)))


def _expand_infer(call, bb):
    (x,) = tensor_args(call, 1)
    if x.is_unknown_ndim:
        return x
    out_ndim = x.ndim + len(call.attrs.axis)
    axes = _expand_axes(call, x.ndim)
    if x.dims is None:
        return TensorStructInfo(dtype=x.dtype, ndim=out_ndim)
    it = iter(x.dims)
    return TensorStructInfo([as_dim(1) if k in axes else next(it) for k in range(out_ndim)],
                            x.dtype)


def _expand_legalize(bb, call):
    return bb.call_te(topi.transform.reshape, call.args[0],
                      rx.ShapeExpr(call.struct_info.dims), primfunc_name_hint="expand_dims")


register_relax_op("relax.expand_dims", _expand_infer, num_inputs=1,
                  attrs_type=ExpandDimsAttrs, pattern=OpPattern.INJECTIVE,
                  legalize=_expand_legalize, description="size-1 axes inserted")


def expand_dims(x, axis):
    """``x`` with size-1 axes inserted at ``axis`` (an int or a list, output positions)."""
    if isinstance(axis, int):
        axis = (axis,)
    return make_call("relax.expand_dims", [x], ExpandDimsAttrs(tuple(int(a) for a in axis)))


# -- broadcast_to / tile / repeat -------------------------------------------------------------
def _broadcast_to_infer(call, bb):
    x = tensor_arg(call, 0)
    target = _target_dims(call)
    if target.values is None:
        return TensorStructInfo(dtype=x.dtype, ndim=target.ndim)
    out = TensorStructInfo(list(target.values), x.dtype)
    if x.dims is not None:
        from irlab.relax.op.common import broadcast_sinfo

        got = broadcast_sinfo(call, x, out, x.dtype)
        if got.dims is not None and not all(dims_equal(a, b)
                                            for a, b in zip(got.dims, target.values)):
            raise DiagnosticError(f"R.broadcast_to: {x} does not broadcast to "
                                  f"{list(target.values)}", call)
    return out


def _broadcast_to_legalize(bb, call):
    return bb.call_te(topi.transform.broadcast_to, call.args[0],
                      rx.ShapeExpr(call.struct_info.dims), primfunc_name_hint="broadcast_to")


register_relax_op("relax.broadcast_to", _broadcast_to_infer, num_inputs=2,
                  pattern=OpPattern.BROADCAST, legalize=_broadcast_to_legalize,
                  description="a tensor broadcast to a shape")


def broadcast_to(x, shape):
    """``x`` broadcast (numpy rules) to ``shape``."""
    if isinstance(shape, (list, tuple)):
        shape = rx.ShapeExpr(shape)
    return make_call("relax.broadcast_to", [x, shape])


def _tile_infer(call, bb):
    (x,) = tensor_args(call, 1)
    reps = list(call.attrs.repeats)
    if x.dims is None:
        return TensorStructInfo(dtype=x.dtype, ndim=-1 if x.ndim == -1 else
                                max(x.ndim, len(reps)))
    n = max(x.ndim, len(reps))
    dims = [as_dim(1)] * (n - x.ndim) + list(x.dims)
    reps = [1] * (n - len(reps)) + reps
    return TensorStructInfo([simplify_dim(d * as_dim(r)) for d, r in zip(dims, reps)],
                            x.dtype)


def _tile_legalize(bb, call):
    return bb.call_te(topi.transform.tile, call.args[0], list(call.attrs.repeats),
                      primfunc_name_hint="tile")


register_relax_op("relax.tile", _tile_infer, num_inputs=1, attrs_type=TileAttrs,
                  pattern=OpPattern.INJECTIVE, legalize=_tile_legalize,
                  description="a tensor repeated as a whole along each axis")


def tile(x, repeats):
    """``x`` tiled ``repeats`` times along each axis (numpy's tile)."""
    if isinstance(repeats, int):
        repeats = (repeats,)
    return make_call("relax.tile", [x], TileAttrs(tuple(int(r) for r in repeats)))


def _repeat_infer(call, bb):
    (x,) = tensor_args(call, 1)
    reps, axis = call.attrs.repeats, call.attrs.axis
    if x.dims is None:
        return TensorStructInfo(dtype=x.dtype, ndim=1 if axis is None else x.ndim)
    if axis is None:
        return TensorStructInfo([simplify_dim(prod_dims(x.dims) * as_dim(reps))], x.dtype)
    axis = normalize_axis(call, axis, x.ndim)
    dims = list(x.dims)
    dims[axis] = simplify_dim(dims[axis] * as_dim(reps))
    return TensorStructInfo(dims, x.dtype)


def _repeat_legalize(bb, call):
    x = call.args[0]
    axis = call.attrs.axis
    if axis is None:
        def compute(data):
            flat = topi.transform.reshape(data, (topi.utils.prod(topi.utils.dims(data)),))
            return topi.transform.repeat(flat, call.attrs.repeats, 0)

        return bb.call_te(compute, x, primfunc_name_hint="repeat")
    axis = normalize_axis(call, axis, x.struct_info.ndim)
    return bb.call_te(topi.transform.repeat, x, call.attrs.repeats, axis,
                      primfunc_name_hint="repeat")


register_relax_op("relax.repeat", _repeat_infer, num_inputs=1, attrs_type=RepeatAttrs,
                  pattern=OpPattern.INJECTIVE, legalize=_repeat_legalize,
                  description="each element repeated along an axis")


def repeat(x, repeats, axis=None):
    """Each element of ``x`` repeated ``repeats`` times along ``axis`` (flattened if None)."""
    return make_call("relax.repeat", [x], RepeatAttrs(int(repeats), axis))


__all__ += ["broadcast_to", "tile", "repeat"]
