"""VMBuiltinLower: memory operators become the VM's (``R.memory.alloc_storage`` ->
``R.vm.alloc_storage``, ``R.memory.alloc_tensor`` -> ``R.vm.alloc_tensor``, kills ->
``R.vm.kill_object``), the forms VMCodeGen emits::

    s = R.memory.alloc_storage(size, 0, "global", "uint8")  =>  s = R.vm.alloc_storage(size,
                                                                       0, "uint8", "global")

``R.builtin.alloc_tensor`` must be gone by now (StaticPlanBlockMemory, LowerAllocTensor).
"""

from __future__ import annotations

from irlab.errors import DiagnosticError
from irlab.ir.op import Op
from irlab.relax.expr import Call, VarBinding
from irlab.relax.op import vm as vm_op
from irlab.relax.transform.binding_rewriter import BindingRewriter, update_functions
from irlab.transform import module_pass


def _alloc_storage(call):
    size, device, scope, dtype = call.args
    return vm_op.alloc_storage(size, device, dtype, scope)


def _alloc_tensor(call):
    return vm_op.alloc_tensor(*call.args)


def _kill(call):
    return vm_op.kill_object(call.args[0])


_LOWER = {"relax.memory.alloc_storage": _alloc_storage,
          "relax.memory.alloc_tensor": _alloc_tensor,
          "relax.memory.kill_storage": _kill, "relax.memory.kill_tensor": _kill}


class _VMBuiltinLower(BindingRewriter):
    def rewrite_binding(self, binding):
        value = binding.value
        if not (isinstance(value, Call) and isinstance(value.op, Op)):
            return [binding]
        if value.op.name == "relax.builtin.alloc_tensor":
            raise DiagnosticError("VMBuiltinLower: R.builtin.alloc_tensor is left; run "
                                  "StaticPlanBlockMemory and LowerAllocTensor first", value)
        lower = _LOWER.get(value.op.name)
        if lower is None:
            return [binding]
        return [VarBinding(binding.var, lower(value), binding.span)]


def VMBuiltinLower():
    """Lower memory operators to the VM's."""
    return module_pass(
        lambda mod, ctx: update_functions(mod, lambda gv, f: _VMBuiltinLower()
                                          .rewrite_function(f)),
        opt_level=0, name="VMBuiltinLower")


__all__ = ["VMBuiltinLower"]
