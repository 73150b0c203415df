"""Memory and VM-builtin operators the lowering to the VM introduces (TVM's
``relax.builtin.alloc_tensor``, ``relax.memory.*``, ``relax.call_builtin_with_ctx``,
``relax.null_value``): CallTIRRewrite makes the outputs of ``call_tir`` explicit allocations,
StaticPlanBlockMemory places them in reused storages, VMShapeLower calls shape builtins."""

from __future__ import annotations

from irlab.errors import DiagnosticError
from irlab.ir.op import Op
from irlab.relax.expr import (Call, DataTypeImm, Expr, ExternFunc, PrimValue, ShapeExpr,
                              StringImm, Tuple)
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import ObjectStructInfo, TensorStructInfo, TupleStructInfo

__all__ = ["alloc_tensor", "alloc_storage", "memory_alloc_tensor", "call_builtin_with_ctx",
           "null_value"]


def _tensor_of(call, shape_index, dtype_index):
    shape, dtype = call.args[shape_index], call.args[dtype_index]
    if not isinstance(dtype, DataTypeImm):
        raise DiagnosticError(f"{call.op.name}: the dtype must be an R.dtype, got "
                              f"{type(dtype).__name__}", call)
    if isinstance(shape, ShapeExpr):
        return TensorStructInfo(shape, dtype.value)
    return TensorStructInfo(dtype=dtype.value, ndim=getattr(shape.struct_info_, "ndim", -1))


def _infer_builtin_alloc_tensor(call, bb):
    return _tensor_of(call, 0, 1)


def _infer_memory_alloc_tensor(call, bb):
    return _tensor_of(call, 2, 3)


def _infer_object(call, bb):
    return ObjectStructInfo()


def _infer_with_ctx(call, bb):
    if not call.sinfo_args:
        return ObjectStructInfo()
    if len(call.sinfo_args) == 1:
        return call.sinfo_args[0]
    return TupleStructInfo(call.sinfo_args)


register_relax_op("relax.builtin.alloc_tensor", _infer_builtin_alloc_tensor, num_inputs=3,
                  description="allocate a tensor (shape, dtype, runtime device index)")
register_relax_op("relax.memory.alloc_storage", _infer_object, num_inputs=4,
                  description="allocate a storage of size bytes (size, device, scope, dtype)")
register_relax_op("relax.memory.alloc_tensor", _infer_memory_alloc_tensor, num_inputs=4,
                  description="a tensor inside a storage (storage, offset, shape, dtype)")
register_relax_op("relax.call_builtin_with_ctx", _infer_with_ctx, num_inputs=2,
                  description="call a VM builtin with the VM as its first argument")
register_relax_op("relax.null_value", _infer_object, num_inputs=0,
                  description="the null object")


def _shape(shape) -> Expr:
    return shape if isinstance(shape, Expr) else ShapeExpr(shape)


def _prim(value) -> Expr:
    return value if isinstance(value, Expr) else PrimValue(int(value))


def _dtype(dtype) -> Expr:
    return dtype if isinstance(dtype, Expr) else DataTypeImm(dtype)


def alloc_tensor(shape, dtype, runtime_device_index=0) -> Call:
    """``R.builtin.alloc_tensor``: a new tensor (its own memory)."""
    return Call(Op.get("relax.builtin.alloc_tensor"),
                [_shape(shape), _dtype(dtype), _prim(runtime_device_index)])


def alloc_storage(size, virtual_device_index=0, storage_scope="global",
                  dtype="uint8") -> Call:
    """``R.memory.alloc_storage``: ``prod(size)`` elements of ``dtype`` of memory."""
    scope = storage_scope if isinstance(storage_scope, Expr) else StringImm(storage_scope)
    return Call(Op.get("relax.memory.alloc_storage"),
                [_shape(size), _prim(virtual_device_index), scope, _dtype(dtype)])


def memory_alloc_tensor(storage, offset, shape, dtype) -> Call:
    """``R.memory.alloc_tensor``: a tensor at byte ``offset`` of ``storage``."""
    return Call(Op.get("relax.memory.alloc_tensor"),
                [storage, _prim(offset), _shape(shape), _dtype(dtype)])


def call_builtin_with_ctx(func, args, sinfo_args=None) -> Call:
    """Call the VM builtin ``func`` with the VM first, then ``args``."""
    func = func if isinstance(func, Expr) else ExternFunc(func)
    sinfo = [] if sinfo_args is None else (
        list(sinfo_args) if isinstance(sinfo_args, (list, tuple)) else [sinfo_args])
    return Call(Op.get("relax.call_builtin_with_ctx"), [func, Tuple(list(args))],
                sinfo_args=sinfo)


def null_value() -> Call:
    return Call(Op.get("relax.null_value"), [])
