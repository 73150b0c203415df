"""Cross-level calls: ``call_tir`` (a PrimFunc of the module, destination-passing),
``call_dps_packed`` (a packed function, destination-passing), ``call_pure_packed`` and
``call_packed`` (a packed function returning its result)."""

from __future__ import annotations

from irlab.errors import DiagnosticError, IrlabError
from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.relax.expr import Call, Expr, ExternFunc, ShapeExpr, StringImm, Tuple, Var
from irlab.relax.struct_info import (ObjectStructInfo, StructInfo, TensorStructInfo,
                                     TupleStructInfo)
from irlab.relax.op.registry import register_relax_op

__all__ = ["call_tir", "call_dps_packed", "call_pure_packed", "call_packed", "shape_of"]


def _out_sinfo(out_sinfo, what) -> StructInfo:
    """``out_sinfo`` as one struct info (a list of several becomes a TupleStructInfo)."""
    if isinstance(out_sinfo, (list, tuple)):
        items = [_expect_tensor_sinfo(s, what) for s in out_sinfo]
        return items[0] if len(items) == 1 else TupleStructInfo(items)
    return _expect_tensor_sinfo(out_sinfo, what)


def _expect_tensor_sinfo(sinfo, what):
    as_sinfo = getattr(sinfo, "as_struct_info", None)
    if callable(as_sinfo):
        sinfo = as_sinfo()
    if not isinstance(sinfo, TensorStructInfo):
        raise IrlabError(f"{what}: out_sinfo must be R.Tensor struct infos, "
                         f"got {sinfo!r}")
    return sinfo


def _args_tuple(args) -> Expr:
    if isinstance(args, Expr) and not isinstance(args, Tuple):
        sinfo = args.struct_info_
        if not (isinstance(args, Var) and isinstance(sinfo, TupleStructInfo)):
            args = Tuple([args])
    elif isinstance(args, (list, tuple)):
        args = Tuple(list(args))
    return args


def _infer_from_sinfo_args(call, bb):
    if not call.sinfo_args:
        raise DiagnosticError(f"{call.op.name} needs its output struct info (out_sinfo / "
                              f"sinfo_args)", call)
    if len(call.sinfo_args) == 1:
        return call.sinfo_args[0]
    return TupleStructInfo(call.sinfo_args)


def _infer_call_tir(call, bb):
    if len(call.args) not in (2, 3):
        raise DiagnosticError("R.call_tir takes (func, args tuple[, tir_vars shape])", call)
    if not isinstance(call.args[0], GlobalVar):
        raise DiagnosticError(f"R.call_tir calls a PrimFunc by its GlobalVar, got "
                              f"{type(call.args[0]).__name__}", call)
    return _infer_from_sinfo_args(call, bb)


def _infer_call_dps_packed(call, bb):
    if len(call.args) != 2:
        raise DiagnosticError("R.call_dps_packed takes (func, args tuple)", call)
    return _infer_from_sinfo_args(call, bb)


def _infer_call_pure_packed(call, bb):
    if not call.args or not isinstance(call.args[0], ExternFunc):
        raise DiagnosticError("R.call_pure_packed's first argument must name the packed "
                              "function", call)
    if not call.sinfo_args:
        return ObjectStructInfo()
    return _infer_from_sinfo_args(call, bb)


def _infer_shape_of(call, bb):
    from irlab.relax.struct_info import ShapeStructInfo

    sinfo = call.args[0].struct_info
    if not isinstance(sinfo, TensorStructInfo):
        raise DiagnosticError(f"R.shape_of takes a tensor, got {sinfo}", call)
    if sinfo.dims is not None:
        return ShapeStructInfo(sinfo.dims)
    return ShapeStructInfo(ndim=sinfo.ndim)


register_relax_op("relax.call_tir", _infer_call_tir,
                  description="call a PrimFunc of the module, destination-passing style")
register_relax_op("relax.call_dps_packed", _infer_call_dps_packed,
                  description="call a packed function, destination-passing style")
register_relax_op("relax.call_pure_packed", _infer_call_pure_packed,
                  description="call a packed function known to be pure")
register_relax_op("relax.shape_of", _infer_shape_of, num_inputs=1,
                  description="the shape of a tensor")


def call_tir(gvar, args, out_sinfo, tir_vars=None) -> Call:
    """``R.call_tir(gvar, args, out_sinfo)``: allocate the outputs, call the PrimFunc ``gvar``
    on ``args`` + outputs (+ ``tir_vars``, symbolic values it needs), return the outputs."""
    if not isinstance(gvar, GlobalVar):
        raise IrlabError(f"call_tir calls a PrimFunc by its GlobalVar, got "
                         f"{type(gvar).__name__}")
    call_args = [gvar, _args_tuple(args)]
    if tir_vars is not None:
        call_args.append(tir_vars if isinstance(tir_vars, Expr) else ShapeExpr(tir_vars))
    return Call(Op.get("relax.call_tir"), call_args,
                sinfo_args=[_out_sinfo(out_sinfo, "call_tir")])


def _extern(func) -> Expr:
    if isinstance(func, str):
        return ExternFunc(func)
    if isinstance(func, StringImm):
        return ExternFunc(func.value)
    if isinstance(func, Expr):
        return func
    raise IrlabError(f"a packed function is given by name or ExternFunc, got "
                     f"{type(func).__name__}")


def call_dps_packed(func, args, out_sinfo) -> Call:
    """``R.call_dps_packed("f", args, out_sinfo)``: like call_tir, into a packed function."""
    return Call(Op.get("relax.call_dps_packed"), [_extern(func), _args_tuple(args)],
                sinfo_args=[_out_sinfo(out_sinfo, "call_dps_packed")])


def _sinfo_list(sinfo_args):
    if sinfo_args is None:
        return []
    if isinstance(sinfo_args, (list, tuple)):
        return list(sinfo_args)
    return [sinfo_args]


def call_pure_packed(func, *args, sinfo_args) -> Call:
    """A call of a packed function the compiler may treat as pure (allowed in dataflow)."""
    return Call(Op.get("relax.call_pure_packed"), [_extern(func), *args],
                sinfo_args=_sinfo_list(sinfo_args))


def call_packed(func, *args, sinfo_args=None) -> Call:
    """``R.call_packed("f", *args, sinfo_args=...)``: a call of a packed function (impure)."""
    return Call(_extern(func), list(args), sinfo_args=_sinfo_list(sinfo_args))


def shape_of(expr) -> Call:
    """The shape of a tensor, as a shape value."""
    return Call(Op.get("relax.shape_of"), [expr])
