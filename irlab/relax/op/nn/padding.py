"""``nn.pad``: constant / edge / reflect padding, ``pad_width`` flat as TVM's
``(before_0, after_0, before_1, after_1, ...)``; legalized to ``topi.transform.pad``."""

from __future__ import annotations

from irlab import topi
from irlab.errors import DiagnosticError
from irlab.ir.op import OpPattern
from irlab.relax.op.attrs import PadAttrs
from irlab.relax.op.common import make_call, simplify_dim, tensor_args
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import TensorStructInfo, as_dim

__all__ = ["pad"]


def _pairs(call, ndim):
    width = call.attrs.pad_width
    if len(width) != 2 * ndim:
        raise DiagnosticError(f"R.nn.pad: pad_width has {len(width)} values for {ndim} dims "
                              f"(two per dim expected)", call)
    return [(width[2 * k], width[2 * k + 1]) for k in range(ndim)]


def _infer(call, bb):
    (x,) = tensor_args(call, 1)
    if x.dims is None:
        return TensorStructInfo(dtype=x.dtype, ndim=x.ndim)
    pairs = _pairs(call, x.ndim)
    return TensorStructInfo([simplify_dim(d + as_dim(b + a)) for d, (b, a) in
                             zip(x.dims, pairs)], x.dtype)


def _legalize(bb, call):
    x = call.args[0]
    pairs = _pairs(call, x.struct_info.ndim)
    return bb.call_te(topi.transform.pad, x, pairs, call.attrs.pad_value, call.attrs.pad_mode,
                      primfunc_name_hint="pad")


register_relax_op("relax.nn.pad", _infer, num_inputs=1, attrs_type=PadAttrs,
                  pattern=OpPattern.INJECTIVE, legalize=_legalize, description="padding")


def pad(data, pad_width, pad_value=0.0, pad_mode="constant"):
    """``data`` padded by ``pad_width`` (before/after per dim, flat)."""
    if pad_width and isinstance(pad_width[0], (list, tuple)):
        pad_width = [v for pair in pad_width for v in pair]
    return make_call("relax.nn.pad", [data],
                     PadAttrs(tuple(int(v) for v in pad_width), float(pad_value), pad_mode))
