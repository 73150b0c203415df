"""Binary broadcasting operators: arithmetic (``add``, ``subtract``, ``multiply``, ``divide``,
...) and comparisons (``equal``, ``less``, ... giving bool tensors). Shapes broadcast as numpy's,
symbolic dims included; legalized to TOPI's broadcast computes."""

from __future__ import annotations

from irlab import topi
from irlab.errors import DiagnosticError
from irlab.ir.op import OpPattern
from irlab.relax.op.common import broadcast_sinfo, make_call, tensor_args
from irlab.relax.op.registry import register_relax_op

_ARITHMETIC = {
    "add": topi.add, "subtract": topi.subtract, "multiply": topi.multiply,
    "divide": topi.divide, "floor_divide": topi.floor_divide, "floor_mod": topi.floor_mod,
    "power": topi.power, "maximum": topi.maximum, "minimum": topi.minimum,
}
_COMPARISON = {
    "equal": topi.equal, "not_equal": topi.not_equal, "less": topi.less,
    "less_equal": topi.less_equal, "greater": topi.greater, "greater_equal": topi.greater_equal,
}
_LOGICAL = {"logical_and": topi.logical_and, "logical_or": topi.logical_or}


def _infer(out_dtype):
    def infer(call, bb):
        lhs, rhs = tensor_args(call, 2)
        if lhs.dtype != rhs.dtype and not (lhs.is_unknown_dtype or rhs.is_unknown_dtype):
            raise DiagnosticError(f"{call.op.name}: operand dtypes differ ({lhs.dtype} vs "
                                  f"{rhs.dtype}); insert R.astype", call)
        dtype = out_dtype or (rhs.dtype if lhs.is_unknown_dtype else lhs.dtype)
        return broadcast_sinfo(call, lhs, rhs, dtype)

    return infer


def _legalize(name, compute):
    def legalize(bb, call):
        return bb.call_te(compute, call.args[0], call.args[1], primfunc_name_hint=name)

    return legalize


def _define(name, compute, out_dtype=None):
    register_relax_op(f"relax.{name}", _infer(out_dtype), num_inputs=2,
                      pattern=OpPattern.BROADCAST, legalize=_legalize(name, compute),
                      description=f"broadcasting {name}")

    def make(x1, x2):
        return make_call(f"relax.{name}", [x1, x2])

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"Broadcasting ``{name}`` of two tensors."
    return make


for _name, _compute in _ARITHMETIC.items():
    globals()[_name] = _define(_name, _compute)
for _name, _compute in {**_COMPARISON, **_LOGICAL}.items():
    globals()[_name] = _define(_name, _compute, "bool")

__all__ = list(_ARITHMETIC) + list(_COMPARISON) + list(_LOGICAL)
