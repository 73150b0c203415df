"""CanonicalizeBindings: remove bindings that only rename a value, so every use refers to the
original variable::

    lv1 = lv0                 (dropped; uses of lv1 use lv0)
    gv = lv1                  lv0 becomes gv: gv = R.call_tir(...), and R.output(gv)

A ``Var`` bound to a ``DataflowVar`` of its block takes that variable's binding over (a
DataflowVar cannot be used after its block); ``TupleGetItem`` of a tuple bound in the same
function becomes the field; a ``match_cast`` whose value already has the target struct info
becomes a renaming too.
"""

from __future__ import annotations

from irlab.ir.structural import structural_equal
from irlab.relax import expr as rx
from irlab.relax.expr_functor import ExprMutator
from irlab.relax.analysis import get_var2val
from irlab.transform import module_pass

__all__ = ["CanonicalizeBindings", "canonicalize_bindings"]


def _output_renames(func) -> dict:
    """DataflowVar -> the output Var it is first copied into (in its block)."""
    renames: dict = {}
    stack = [func.body]
    while stack:
        expr = stack.pop()
        if not isinstance(expr, rx.SeqExpr):
            continue
        for block in expr.blocks:
            if not isinstance(block, rx.DataflowBlock):
                continue
            defined = {b.var for b in block.bindings}
            alias: dict = {}  # DataflowVar -> the variable it copies
            for b in block.bindings:
                value = b.value
                if not isinstance(b, rx.VarBinding) or not isinstance(value, rx.Var):
                    continue
                while value in alias:
                    value = alias[value]
                if isinstance(b.var, rx.DataflowVar):
                    alias[b.var] = value
                elif isinstance(value, rx.DataflowVar) and value in defined \
                        and value not in renames:
                    renames[value] = b.var
    return renames


class _Canonicalizer(ExprMutator):
    def __init__(self, renames, var2val):
        super().__init__()
        self.renames = renames
        self.var2val = var2val

    def visit_var_def_(self, var):
        return self.renames.get(var, var)

    def visit_var_(self, var):
        var = self.renames.get(var, var)
        return self.var_remap_.get(var, var)

    def visit_tuple_getitem_(self, item):
        item = super().visit_tuple_getitem_(item)
        tup = item.tuple_value
        bound = self.var2val.get(tup) if isinstance(tup, rx.Var) else tup
        if isinstance(bound, rx.Tuple):
            field = self.visit_expr(bound.fields[item.index])
            if isinstance(field, (rx.Var, rx.Constant)) and self._visible(field):
                return field
        return item

    def _visible(self, value) -> bool:
        """A DataflowVar is only usable inside a dataflow block."""
        return not isinstance(value, rx.DataflowVar) or self.builder_.current_block_is_dataflow()

    def visit_var_binding_(self, binding):
        value = self.visit_expr(binding.value)
        var = self.visit_var_def(binding.var)
        if value is var:
            return  # the renamed output binding ``gv = gv``
        if isinstance(value, rx.Var) and self._can_replace(var, value):
            self.var_remap_[binding.var] = value
            return
        new_var = self.with_struct_info(var, value.struct_info)
        if new_var is not binding.var:
            self.var_remap_[binding.var] = new_var
        if new_var is binding.var and value is binding.value:
            self.builder_.emit_normalized(binding)
        else:
            self.builder_.emit_normalized(rx.VarBinding(new_var, value, binding.span))

    def visit_match_cast_(self, binding):
        value = self.visit_expr(binding.value)
        if isinstance(value, rx.Var) and value.struct_info_ is not None and \
                structural_equal(value.struct_info_, binding.struct_info) and \
                self._can_replace(binding.var, value):
            self.var_remap_[binding.var] = value
            return
        super().visit_match_cast_(binding)

    @staticmethod
    def _can_replace(var, value) -> bool:
        """Uses of ``var`` may use ``value`` instead (a DataflowVar may not replace a Var)."""
        return isinstance(var, rx.DataflowVar) or not isinstance(value, rx.DataflowVar)


def canonicalize_bindings(func):
    """``func`` with its renaming bindings removed."""
    return _Canonicalizer(_output_renames(func), get_var2val(func)).visit_expr(func)


def CanonicalizeBindings():  # noqa: N802 (TVM's name)
    """The pass removing renaming bindings."""

    def transform(mod, ctx):
        new = mod.copy()
        for gv, func in mod.items():
            if isinstance(func, rx.Function):
                new[gv] = canonicalize_bindings(func)
        return new

    return module_pass(transform, opt_level=0, name="CanonicalizeBindings")
