"""Elementwise unary operators (``exp``, ``sqrt``, ``tanh``, ``negative``, ``abs``...), and the
``is*`` predicates giving bool tensors; legalized to TOPI's elementwise computes."""

from __future__ import annotations

from irlab import te, topi
from irlab.ir.op import OpPattern
from irlab.relax.op.attrs import ClipAttrs
from irlab.relax.op.common import make_call, tensor_args
from irlab.relax.struct_info import TensorStructInfo
from irlab.relax.op.registry import register_relax_op


def _square(x):
    return te.compute(x.shape, lambda *i: x(*i) * x(*i), name="T_square", tag="elemwise")


_MATH = {
    "exp": topi.exp, "log": topi.log, "sqrt": topi.sqrt, "rsqrt": topi.rsqrt,
    "sigmoid": topi.sigmoid, "tanh": topi.tanh, "erf": topi.erf, "negative": topi.negative,
    "abs": topi.abs, "floor": topi.floor, "ceil": topi.ceil, "round": topi.round,
    "sign": topi.sign, "sin": topi.sin, "cos": topi.cos, "tan": topi.tan, "square": _square,
    "logical_not": topi.logical_not,
}
_PREDICATES = {"isnan": topi.isnan, "isinf": topi.isinf, "isfinite": topi.isfinite}


def _infer(bool_out):
    def infer(call, bb):
        (x,) = tensor_args(call, 1)
        if not bool_out:
            return x
        return TensorStructInfo(x.shape, "bool", ndim=x.ndim)

    return infer


def _define(name, compute, bool_out=False):
    def legalize(bb, call):
        return bb.call_te(compute, call.args[0], primfunc_name_hint=name)

    register_relax_op(f"relax.{name}", _infer(bool_out), num_inputs=1,
                      pattern=OpPattern.ELEMWISE, legalize=legalize,
                      description=f"elementwise {name}")

    def make(x):
        return make_call(f"relax.{name}", [x])

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"Elementwise ``{name}``."
    return make


for _name, _compute in _MATH.items():
    globals()[_name] = _define(_name, _compute)
for _name, _compute in _PREDICATES.items():
    globals()[_name] = _define(_name, _compute, bool_out=True)

__all__ = list(_MATH) + list(_PREDICATES)


def _clip_legalize(bb, call):
    return bb.call_te(topi.clip, call.args[0], call.attrs.min, call.attrs.max,
                      primfunc_name_hint="clip")


register_relax_op("relax.clip", _infer(False), num_inputs=1, attrs_type=ClipAttrs,
                  pattern=OpPattern.ELEMWISE, legalize=_clip_legalize,
                  description="values limited to [min, max]")


def clip(x, min, max):  # noqa: A002 (TVM's names)
    """``x`` limited to ``[min, max]``."""
    return make_call("relax.clip", [x], ClipAttrs(float(min), float(max)))


__all__ += ["clip"]
