"""CallTIRRewrite: the outputs of destination-passing calls become explicit allocations, and
the call a plain call of the PrimFunc (or packed function) with the outputs as last arguments::

    y = R.call_tir(cls.add, (a, b),            alloc = R.builtin.alloc_tensor(R.shape([n, 4]),
                   out_sinfo=R.Tensor((n, 4)))  =>                         R.dtype("float32"), 0)
                                               _ = cls.add(a, b, alloc)
                                               y = alloc

``tir_vars`` (symbolic values the PrimFunc takes) come after the outputs, as
``R.prim_value``s: ``cls.f(*args, *outputs, *tir_vars)``.
"""

from __future__ import annotations

from irlab.errors import DiagnosticError
from irlab.ir.op import Op
from irlab.relax.expr import (Call, PrimValue, ShapeExpr, Tuple, TupleGetItem, Var,
                              VarBinding)
from irlab.relax.op.builtin import alloc_tensor
from irlab.relax.struct_info import TensorStructInfo, TupleStructInfo
from irlab.relax.transform.binding_rewriter import BindingRewriter, update_functions
from irlab.transform import module_pass

_DPS_OPS = ("relax.call_tir", "relax.call_dps_packed")


class _CallTIRRewrite(BindingRewriter):
    def rewrite_binding(self, binding):
        call = binding.value
        if not (isinstance(call, Call) and isinstance(call.op, Op)
                and call.op.name in _DPS_OPS):
            return [binding]
        out = []
        outputs = [self._alloc(s, call, out) for s in _output_sinfos(call)]
        args = self._inputs(call.args[1], out) + outputs
        if len(call.args) > 2:  # tir_vars: a ShapeExpr of the symbolic values passed last
            args += [PrimValue(v) for v in _shape_values(call.args[2], call)]
        done = Var("_", TupleStructInfo([]))
        out.append(VarBinding(done, Call(call.args[0], args), binding.span))
        result = outputs[0] if not isinstance(call.sinfo_args[0], TupleStructInfo) \
            else Tuple(outputs)
        out.append(VarBinding(binding.var, result, binding.span))
        return out

    @staticmethod
    def _alloc(sinfo, call, out):
        if not isinstance(sinfo, TensorStructInfo) or sinfo.shape is None:
            raise DiagnosticError(f"{call.op.name}: every output needs a known shape to be "
                                  f"allocated, got {sinfo}", call)
        # a shape held by a variable (R.Tensor(lv3, ...): a shape computed at run time)
        # is allocated as is, like a ShapeExpr of dims
        shape = ShapeExpr(list(sinfo.dims)) if sinfo.dims is not None else sinfo.shape
        var = Var("alloc", TensorStructInfo(shape, sinfo.dtype))
        out.append(VarBinding(var, alloc_tensor(shape, sinfo.dtype, 0)))
        return var

    @staticmethod
    def _inputs(args, out):
        if isinstance(args, Tuple):
            return list(args.fields)
        sinfo = args.struct_info_
        if isinstance(sinfo, TupleStructInfo):  # a tuple-typed variable: unpack its fields
            fields = []
            for k, field in enumerate(sinfo.fields):
                var = Var("arg", field)
                out.append(VarBinding(var, TupleGetItem(args, k)))
                fields.append(var)
            return fields
        return [args]


def _output_sinfos(call):
    sinfo = call.sinfo_args[0] if call.sinfo_args else None
    if isinstance(sinfo, TupleStructInfo):
        return list(sinfo.fields)
    if sinfo is None:
        raise DiagnosticError(f"{call.op.name} has no output struct info", call)
    return [sinfo]


def _shape_values(shape, call):
    if isinstance(shape, ShapeExpr):
        return list(shape.values)
    raise DiagnosticError(f"{call.op.name}: tir_vars must be an R.shape of values", call)


def CallTIRRewrite():
    """Make ``call_tir`` / ``call_dps_packed`` outputs explicit allocations."""
    return module_pass(
        lambda mod, ctx: update_functions(mod, lambda gv, f: _CallTIRRewrite()
                                          .rewrite_function(f)),
        opt_level=0, name="CallTIRRewrite")


__all__ = ["CallTIRRewrite"]
