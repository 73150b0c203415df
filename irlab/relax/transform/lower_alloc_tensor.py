"""LowerAllocTensor: each remaining ``R.builtin.alloc_tensor`` (symbolic shapes the static
planner left) gets its own storage::

    y = R.builtin.alloc_tensor(R.shape([n, 4]),     s = R.memory.alloc_storage(R.shape([n, 4]),
                               "float32", 0)    =>                          0, "global", "float32")
                                                    y = R.memory.alloc_tensor(s, 0,
                                                                R.shape([n, 4]), "float32")

The storage is sized in elements of the tensor's dtype, so no byte count has to be computed.
"""

from __future__ import annotations

from irlab.ir.op import Op
from irlab.relax.expr import Call, Var, VarBinding
from irlab.relax.op.memory import alloc_storage, alloc_tensor
from irlab.relax.struct_info import ObjectStructInfo
from irlab.relax.transform.binding_rewriter import BindingRewriter, update_functions
from irlab.transform import module_pass


class _LowerAllocTensor(BindingRewriter):
    def rewrite_binding(self, binding):
        value = binding.value
        if not (isinstance(value, Call) and isinstance(value.op, Op)
                and value.op.name == "relax.builtin.alloc_tensor"):
            return [binding]
        shape, dtype, device = value.args
        storage = Var("storage", ObjectStructInfo())
        return [VarBinding(storage, alloc_storage(shape, device, "global", dtype)),
                VarBinding(binding.var, alloc_tensor(storage, 0, shape, dtype), binding.span)]


def LowerAllocTensor():
    """Give every remaining ``builtin.alloc_tensor`` a storage of its own."""
    return module_pass(
        lambda mod, ctx: update_functions(mod, lambda gv, f: _LowerAllocTensor()
                                          .rewrite_function(f)),
        opt_level=0, name="LowerAllocTensor")


__all__ = ["LowerAllocTensor"]
