"""Substituting symbolic dims in a Relax function (TVM's ``Function.bind_symbolic_vars``):
every struct info, shape, prim value and ``sinfo_args`` gets the new values, and the dims
are simplified (``n * 4`` with ``n = 2`` becomes ``8``)."""

from __future__ import annotations

from irlab.arith import Analyzer
from irlab.errors import IrlabError
from irlab.relax import expr as rx
from irlab.relax.expr_functor import ExprMutator
from irlab.relax.normalizer import substitute_struct_info
from irlab.relax.struct_info import as_dim
from irlab.tir import expr as tir_expr
from irlab.tir.functor import substitute

__all__ = ["bind_symbolic_vars"]


class _SymbolBinder(ExprMutator):
    def __init__(self, mapping):
        super().__init__()
        self.mapping = mapping

    def sinfo(self, sinfo):
        return None if sinfo is None else substitute_struct_info(sinfo, self.mapping)

    def prim(self, value):
        return Analyzer().simplify(substitute(value, self.mapping))

    def visit_var_def_(self, var):
        if not any(v in self.mapping for v in rx.symbolic_vars(var.struct_info_)):
            return var
        new = type(var)(var.name_hint, self.sinfo(var.struct_info_), var.span)
        self.var_remap_[var] = new
        return new

    def visit_shape_expr_(self, shape):
        return rx.ShapeExpr([self.prim(v) for v in shape.values], shape.span)

    def visit_prim_value_(self, prim):
        return rx.PrimValue(self.prim(prim.value), prim.span)

    def visit_call_(self, call):
        call = super().visit_call_(call)
        if not call.sinfo_args:
            return call
        return rx.Call(call.op, call.args, call.attrs,
                       [self.sinfo(s) for s in call.sinfo_args], call.span)

    def visit_match_cast_(self, binding):
        value = self.visit_expr(binding.value)
        var = self.visit_var_def(binding.var)
        self.builder_.emit_normalized(rx.MatchCast(var, value, self.sinfo(binding.struct_info),
                                                   binding.span))

    def visit_function_(self, func):
        params = [self.visit_var_def(p) for p in func.params]
        body = self.visit_with_new_scope(func.body)
        return rx.Function(params, body, self.sinfo(func.ret_struct_info), func.is_pure,
                           func.attrs, func.span)


def bind_symbolic_vars(func, binding):
    """``func`` with its symbolic dims replaced: ``binding`` maps ``tir.Var``s (or their names)
    to values (ints or PrimExprs)."""
    names = {v.name_hint: v for p in func.params for v in rx.symbolic_vars(p.struct_info_)}
    mapping = {}
    for key, value in binding.items():
        var = key if isinstance(key, tir_expr.Var) else names.get(str(key))
        if var is None:
            raise IrlabError(f"bind_symbolic_vars: the function has no symbolic variable "
                             f"{key!r} (it has: {', '.join(sorted(names)) or 'none'})")
        mapping[var] = as_dim(value) if not isinstance(value, tir_expr.PrimExpr) else value
    return _SymbolBinder(mapping).visit_expr(func)
