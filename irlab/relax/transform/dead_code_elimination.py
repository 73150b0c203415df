"""DeadCodeElimination: drop bindings whose value is never used and has no side effect, empty
blocks, and functions no entry function reaches::

    with R.dataflow():                        with R.dataflow():
        lv = R.call_tir(cls.exp, (x,), ...)       lv1 = R.call_tir(cls.log, (x,), ...)
        lv1 = R.call_tir(cls.log, (x,), ...)      R.output(lv1)
        R.output(lv1)                         return lv1       # and @exp removed
    return lv1

Entry functions are those named in ``entry_functions`` and every function with a
``global_symbol`` (externally visible). Match casts stay (they check at run time).
"""

from __future__ import annotations

from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.relax import expr as rx
from irlab.relax.analysis import all_global_vars
from irlab.relax.expr_functor import ExprMutator, ExprVisitor
from irlab.relax.op.registry import is_pure_op
from irlab.transform import module_pass

__all__ = ["DeadCodeElimination", "remove_unused_bindings"]


class _Uses(ExprVisitor):
    def __init__(self):
        self.used: set = set()

    def visit_var_(self, var):
        self.used.add(var)


def _is_pure_value(value, mod) -> bool:
    if not isinstance(value, rx.Call):
        return True
    op = value.op
    if isinstance(op, Op):
        return is_pure_op(op)
    if isinstance(op, GlobalVar):
        func = mod[op] if mod is not None and op in mod else None
        return isinstance(func, rx.Function) and func.is_pure
    return False


class _Remover(ExprMutator):
    def __init__(self, used, mod):
        super().__init__(mod)
        self.used = used
        self.mod = mod

    def visit_var_binding_(self, binding):
        if binding.var not in self.used and _is_pure_value(binding.value, self.mod):
            return
        super().visit_var_binding_(binding)


def remove_unused_bindings(func, mod=None):
    """``func`` without its dead pure bindings (repeated until nothing changes)."""
    while True:
        uses = _Uses()
        uses.visit_expr(func)
        new = _Remover(uses.used, mod).visit_expr(func)
        if new is func:
            return func
        func = new


def _reachable(mod, entries) -> set:
    seen, stack = set(), [mod.get_global_var(n) for n in entries if n in mod]
    while stack:
        gv = stack.pop()
        if gv.name_hint in seen:
            continue
        seen.add(gv.name_hint)
        func = mod[gv]
        if isinstance(func, rx.Function):
            stack.extend(g for g in all_global_vars(func) if g in mod)
    return seen


def DeadCodeElimination(entry_functions=None):  # noqa: N802 (TVM's name)
    """The pass removing dead bindings and unreachable functions."""

    def transform(mod, ctx):
        new = mod.copy()
        for gv, func in mod.items():
            if isinstance(func, rx.Function):
                new[gv] = remove_unused_bindings(func, mod)
        entries = set(entry_functions or [])
        for gv, func in new.items():
            if func.attrs is not None and "global_symbol" in func.attrs.keys():
                entries.add(gv.name_hint)
        if not entries:
            return new
        keep = _reachable(new, entries)
        for gv in list(new.get_global_vars()):
            if gv.name_hint not in keep:
                new.remove(gv)
        return new

    return module_pass(transform, opt_level=0, name="DeadCodeElimination")


