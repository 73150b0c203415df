"""VM-builtin operators (TVM's ``relax.op.builtin`` and the builtin calls of ``op.base``):
``builtin.alloc_tensor`` (what CallTIRRewrite allocates outputs with), ``call_builtin_with_ctx``
(a ``vm.builtin.*`` call taking the VM first) and ``null_value``."""

from __future__ import annotations

from irlab.ir.op import Op
from irlab.relax.expr import Call, Expr, ExternFunc, Tuple
from irlab.relax.op.registry import register_relax_op
from irlab.relax.op.memory import infer_tensor_of, infer_object, prim, shape_arg, dtype_arg
from irlab.relax.struct_info import ObjectStructInfo, TupleStructInfo

__all__ = ["alloc_tensor", "call_builtin_with_ctx", "null_value"]


def _infer_with_ctx(call, bb):
    if not call.sinfo_args:
        return ObjectStructInfo()
    if len(call.sinfo_args) == 1:
        return call.sinfo_args[0]
    return TupleStructInfo(call.sinfo_args)


register_relax_op("relax.builtin.alloc_tensor", lambda call, bb: infer_tensor_of(call, 0, 1),
                  num_inputs=3,
                  description="allocate a tensor (shape, dtype, runtime device index)")
register_relax_op("relax.call_builtin_with_ctx", _infer_with_ctx, num_inputs=2,
                  description="call a VM builtin with the VM as its first argument")
register_relax_op("relax.null_value", infer_object, num_inputs=0,
                  description="the null object")


def alloc_tensor(shape, dtype, runtime_device_index=0) -> Call:
    """``R.builtin.alloc_tensor``: a new tensor (its own memory)."""
    return Call(Op.get("relax.builtin.alloc_tensor"),
                [shape_arg(shape), dtype_arg(dtype), prim(runtime_device_index)])


def call_builtin_with_ctx(func, args, sinfo_args=None) -> Call:
    """Call the VM builtin ``func`` with the VM first, then ``args``."""
    func = func if isinstance(func, Expr) else ExternFunc(func)
    sinfo = [] if sinfo_args is None else (
        list(sinfo_args) if isinstance(sinfo_args, (list, tuple)) else [sinfo_args])
    args = args if isinstance(args, Tuple) else Tuple(list(args))
    return Call(Op.get("relax.call_builtin_with_ctx"), [func, args], sinfo_args=sinfo)


def null_value() -> Call:
    return Call(Op.get("relax.null_value"), [])
