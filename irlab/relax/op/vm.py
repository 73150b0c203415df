"""VM-level memory operators (TVM's ``relax.op.vm``): what a program lowered for the VM may
spell directly (``R.vm.alloc_storage``, ``R.vm.alloc_tensor``, ``R.vm.kill_object``)."""

from __future__ import annotations

from irlab.ir.op import Op
from irlab.relax.expr import Call, Expr, StringImm
from irlab.relax.op.memory import dtype_arg, infer_object, infer_tensor_of, infer_void, prim, \
    shape_arg
from irlab.relax.op.registry import register_relax_op

__all__ = ["alloc_storage", "alloc_tensor", "kill_object"]

register_relax_op("relax.vm.alloc_storage", infer_object, num_inputs=4,
                  description="allocate a storage (size, device index, dtype, scope)")
register_relax_op("relax.vm.alloc_tensor", lambda call, bb: infer_tensor_of(call, 2, 3),
                  num_inputs=4,
                  description="a tensor inside a storage (storage, offset, shape, dtype)")
register_relax_op("relax.vm.kill_object", infer_void, num_inputs=1, pure=False,
                  description="drop the VM's reference to an object")


def alloc_storage(size, runtime_device_index=0, dtype="uint8",
                  storage_scope="global") -> Call:
    """``R.vm.alloc_storage``: ``prod(size)`` elements of ``dtype`` on a device."""
    scope = storage_scope if isinstance(storage_scope, Expr) else StringImm(storage_scope)
    return Call(Op.get("relax.vm.alloc_storage"),
                [shape_arg(size), prim(runtime_device_index), dtype_arg(dtype), scope])


def alloc_tensor(storage, offset, shape, dtype) -> Call:
    """``R.vm.alloc_tensor``: a tensor at byte ``offset`` of ``storage``."""
    return Call(Op.get("relax.vm.alloc_tensor"),
                [storage, prim(offset), shape_arg(shape), dtype_arg(dtype)])


def kill_object(obj) -> Call:
    return Call(Op.get("relax.vm.kill_object"), [obj])
