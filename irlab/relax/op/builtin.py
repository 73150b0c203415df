"""VM-builtin operators (TVM's ``relax.op.builtin`` and the builtin calls of ``op.base``):
``builtin.alloc_tensor`` (what CallTIRRewrite allocates outputs with), ``call_builtin_with_ctx``
(a ``vm.builtin.*`` call taking the VM first) and ``null_value``."""

from __future__ import annotations

from irlab.ir.op import Op
from irlab.relax.expr import Call, Expr, ExternFunc, Tuple
from irlab.relax.op.registry import register_relax_op
from irlab.relax.op.memory import infer_tensor_of, infer_object, prim, shape_arg, dtype_arg
from irlab.relax.struct_info import FuncStructInfo, ObjectStructInfo, TupleStructInfo

__all__ = ["alloc_tensor", "call_builtin_with_ctx", "null_value", "make_closure",
           "invoke_closure", "invoke_pure_closure"]


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
register_relax_op("relax.make_closure", lambda call, bb: FuncStructInfo.opaque_func(),
                  num_inputs=2, description="a function with its first arguments bound")
register_relax_op("relax.invoke_closure", _infer_with_ctx, num_inputs=2, pure=False,
                  description="call a closure (may have side effects)")
register_relax_op("relax.invoke_pure_closure", _infer_with_ctx, num_inputs=2,
                  description="call a closure known to be pure")


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


def _tuple(args) -> Tuple:
    return args if isinstance(args, Tuple) else Tuple(list(args))


def make_closure(func, args) -> Call:
    """``R.make_closure(cls.f, (x,))``: ``f`` with its first arguments bound to ``args``."""
    return Call(Op.get("relax.make_closure"), [func, _tuple(args)])


def invoke_closure(closure, args, sinfo_args) -> Call:
    """Call ``closure`` on ``args``; ``sinfo_args`` give the result's struct info."""
    sinfo = list(sinfo_args) if isinstance(sinfo_args, (list, tuple)) else [sinfo_args]
    return Call(Op.get("relax.invoke_closure"), [closure, _tuple(args)], sinfo_args=sinfo)


def invoke_pure_closure(closure, args, sinfo_args) -> Call:
    """``invoke_closure`` of a closure known to be pure (allowed in dataflow blocks)."""
    sinfo = list(sinfo_args) if isinstance(sinfo_args, (list, tuple)) else [sinfo_args]
    return Call(Op.get("relax.invoke_pure_closure"), [closure, _tuple(args)],
                sinfo_args=sinfo)
