"""Memory operators (TVM's ``relax.op.memory``): explicit storages and tensors inside them.
StaticPlanBlockMemory turns ``builtin.alloc_tensor`` into these when lifetimes allow sharing."""

from __future__ import annotations

from irlab.errors import DiagnosticError
from irlab.ir.op import Op
from irlab.relax.expr import Call, DataTypeImm, Expr, PrimValue, ShapeExpr, StringImm
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import ObjectStructInfo, TensorStructInfo, TupleStructInfo

__all__ = ["alloc_storage", "alloc_tensor", "kill_storage", "kill_tensor"]


def infer_tensor_of(call, shape_index, dtype_index):
    """A tensor of the call's shape and dtype arguments."""
    shape, dtype = call.args[shape_index], call.args[dtype_index]
    if not isinstance(dtype, DataTypeImm):
        raise DiagnosticError(f"{call.op.name}: the dtype must be an R.dtype, got "
                              f"{type(dtype).__name__}", call)
    if isinstance(shape, ShapeExpr):
        return TensorStructInfo(shape, dtype.value)
    return TensorStructInfo(dtype=dtype.value, ndim=getattr(shape.struct_info_, "ndim", -1))


def infer_object(call, bb):
    return ObjectStructInfo()


def infer_void(call, bb):
    return TupleStructInfo([])


def shape_arg(shape) -> Expr:
    return shape if isinstance(shape, Expr) else ShapeExpr(shape)


def prim(value) -> Expr:
    return value if isinstance(value, Expr) else PrimValue(int(value))


def dtype_arg(dtype) -> Expr:
    return dtype if isinstance(dtype, Expr) else DataTypeImm(dtype)


register_relax_op("relax.memory.alloc_storage", infer_object, num_inputs=4,
                  description="allocate a storage (size, device index, scope, dtype)")
register_relax_op("relax.memory.alloc_tensor", lambda call, bb: infer_tensor_of(call, 2, 3),
                  num_inputs=4,
                  description="a tensor inside a storage (storage, offset, shape, dtype)")
register_relax_op("relax.memory.kill_storage", infer_void, num_inputs=1, pure=False,
                  description="end a storage's lifetime")
register_relax_op("relax.memory.kill_tensor", infer_void, num_inputs=1, pure=False,
                  description="end a tensor's lifetime")


def alloc_storage(size, virtual_device_index=0, storage_scope="global",
                  dtype="uint8") -> Call:
    """``R.memory.alloc_storage``: ``prod(size)`` elements of ``dtype`` of memory."""
    scope = storage_scope if isinstance(storage_scope, Expr) else StringImm(storage_scope)
    return Call(Op.get("relax.memory.alloc_storage"),
                [shape_arg(size), prim(virtual_device_index), scope, dtype_arg(dtype)])


def alloc_tensor(storage, offset, shape, dtype) -> Call:
    """``R.memory.alloc_tensor``: a tensor at byte ``offset`` of ``storage``."""
    return Call(Op.get("relax.memory.alloc_tensor"),
                [storage, prim(offset), shape_arg(shape), dtype_arg(dtype)])


def kill_storage(storage) -> Call:
    return Call(Op.get("relax.memory.kill_storage"), [storage])


def kill_tensor(tensor) -> Call:
    return Call(Op.get("relax.memory.kill_tensor"), [tensor])
