"""Variables of Relax expressions: free, bound, all; global references; the value of each
bound variable."""

from __future__ import annotations

from irlab.relax import expr as rx
from irlab.relax.expr_functor import ExprVisitor

__all__ = ["free_vars", "bound_vars", "all_vars", "all_global_vars", "get_var2val",
           "free_symbolic_vars"]


class _VarCollector(ExprVisitor):
    def __init__(self):
        self.bound: list = []
        self.used: list = []
        self.globals: list = []
        self.var2val: dict = {}

    def visit_var_def_(self, var):
        if var not in self.bound:
            self.bound.append(var)

    def visit_var_(self, var):
        if var not in self.used:
            self.used.append(var)

    def visit_global_var_(self, gv):
        if gv not in self.globals:
            self.globals.append(gv)

    def visit_var_binding_(self, binding):
        self.var2val[binding.var] = binding.value
        super().visit_var_binding_(binding)


def _collect(expr) -> _VarCollector:
    collector = _VarCollector()
    collector.visit_expr(expr)
    return collector


def free_vars(expr) -> list:
    """Variables used in ``expr`` but not defined in it, in order of first use."""
    c = _collect(expr)
    bound = set(c.bound)
    return [v for v in c.used if v not in bound]


def bound_vars(expr) -> list:
    """Variables defined in ``expr`` (parameters and bindings)."""
    return _collect(expr).bound


def all_vars(expr) -> list:
    c = _collect(expr)
    return c.bound + [v for v in c.used if v not in set(c.bound)]


def all_global_vars(expr) -> list:
    """GlobalVars referenced by ``expr``."""
    return _collect(expr).globals


def get_var2val(func) -> dict:
    """Each variable bound by a VarBinding in ``func`` to its value."""
    return _collect(func).var2val


def free_symbolic_vars(expr) -> list:
    """Symbolic tir.Vars used in struct infos within ``expr`` and not defined by a parameter
    or match_cast."""
    defined, used = [], []

    class _Sym(ExprVisitor):
        def visit_function_(self, func):
            for p in func.params:
                defined.extend(rx.symbolic_vars(p.struct_info_))
            super().visit_function_(func)

        def visit_match_cast_(self, binding):
            super().visit_match_cast_(binding)
            defined.extend(rx.symbolic_vars(binding.struct_info))

        def visit_var_binding_(self, binding):
            super().visit_var_binding_(binding)
            used.extend(rx.symbolic_vars(binding.var.struct_info_))

    _Sym().visit_expr(expr)
    seen = set(defined)
    out = []
    for v in used:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


