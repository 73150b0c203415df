"""``astype``: an elementwise dtype conversion."""

from __future__ import annotations

from irlab import topi
from irlab.ir.op import OpPattern
from irlab.relax.op.attrs import AstypeAttrs
from irlab.relax.op.common import make_call, tensor_args
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import TensorStructInfo
from irlab.runtime.dtype import normalize_dtype


def _infer(call, bb):
    (x,) = tensor_args(call, 1)
    return TensorStructInfo(x.shape, call.attrs.dtype, ndim=x.ndim)


def _legalize(bb, call):
    return bb.call_te(topi.cast, call.args[0], call.attrs.dtype, primfunc_name_hint="cast")


register_relax_op("relax.astype", _infer, num_inputs=1, attrs_type=AstypeAttrs,
                  pattern=OpPattern.ELEMWISE, legalize=_legalize,
                  description="cast each element to a dtype")


def astype(x, dtype):
    """``x`` with its elements converted to ``dtype``."""
    return make_call("relax.astype", [x], AstypeAttrs(normalize_dtype(dtype)))


__all__ = ["astype"]
