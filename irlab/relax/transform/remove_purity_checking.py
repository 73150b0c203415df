"""RemovePurityChecking: ``R.call_pure_packed(f, args)`` becomes the plain call ``f(args)`` and
every function is marked ``relax.force_pure`` (after this, purity is no longer checked; the VM
only sees calls)::

    y = R.call_pure_packed("my.func", x, sinfo_args=...)   =>   y = my.func(x)
"""

from __future__ import annotations

from irlab.ir.op import Op
from irlab.relax.expr import Call, VarBinding
from irlab.relax.transform.binding_rewriter import BindingRewriter, update_functions
from irlab.transform import module_pass


class _Unwrap(BindingRewriter):
    def rewrite_binding(self, binding):
        value = binding.value
        if isinstance(value, Call) and isinstance(value.op, Op) and \
                value.op.name == "relax.call_pure_packed":
            call = Call(value.args[0], value.args[1:], value.attrs, value.sinfo_args,
                        value.span)
            return [VarBinding(binding.var, call, binding.span)]
        return [binding]


def _rewrite(gv, func):
    func = _Unwrap().rewrite_function(func)
    if func.attrs is not None and func.attrs.get("relax.force_pure"):
        return func
    return func.with_attr("relax.force_pure", True)


def RemovePurityChecking():
    """Unwrap ``call_pure_packed`` and mark functions ``relax.force_pure``."""
    return module_pass(lambda mod, ctx: update_functions(mod, _rewrite), opt_level=0,
                       name="RemovePurityChecking")


__all__ = ["RemovePurityChecking"]
