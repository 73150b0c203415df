"""Visitors and mutators of Relax IR (TVM's ``relax.expr_functor``).

``ExprVisitor`` walks an expression; ``ExprMutator`` rebuilds it through its ``builder_`` (a
``BlockBuilder``), so a rewrite may emit new bindings (``self.builder_.emit(...)``) before the
binding being visited and every result is normalized. Override ``visit_<kind>_`` methods
(``visit_call_``, ``visit_var_binding_``, ``visit_dataflow_block_``...), as in TVM. A
variable whose value's struct info changes is re-created and later uses are remapped.

    @relax.expr_functor.mutator
    class ReluToGelu(relax.PyExprMutator):
        def visit_call_(self, call):
            call = super().visit_call_(call)
            if call.op == relax.op.Op.get("relax.nn.relu"):
                return relax.op.nn.gelu(call.args[0])
            return call
"""

from __future__ import annotations

from irlab.ir.structural import structural_equal
from irlab.relax import expr as rx
from irlab.relax.block_builder import BlockBuilder
from irlab.relax.expr_dispatch import method_of, visit_method  # noqa: F401  (visit_method: API)

__all__ = ["ExprFunctor", "ExprVisitor", "ExprMutator", "PyExprVisitor", "PyExprMutator",
           "visitor", "mutator"]


class ExprFunctor:
    """Dispatch of ``visit_expr`` on the node class to ``visit_<kind>_``."""

    def visit_expr(self, expr):
        return method_of(type(self), expr)(self, expr)


class ExprVisitor(ExprFunctor):
    """Walks every expression, binding and variable definition."""

    # -- expressions ------------------------------------------------------------------------
    def _leaf(self, expr):
        return None

    visit_constant_ = visit_shape_expr_ = visit_extern_func_ = _leaf
    visit_global_var_ = visit_op_ = visit_prim_value_ = _leaf
    visit_string_imm_ = visit_data_type_imm_ = _leaf

    def visit_var_(self, var):
        return None

    def visit_dataflow_var_(self, var):
        return self.visit_var_(var)

    def visit_tuple_(self, tup):
        for field in tup.fields:
            self.visit_expr(field)

    def visit_tuple_getitem_(self, item):
        self.visit_expr(item.tuple_value)

    def visit_call_(self, call):
        self.visit_expr(call.op)
        for arg in call.args:
            self.visit_expr(arg)

    def visit_if_(self, node):
        self.visit_expr(node.cond)
        self.visit_expr(node.true_branch)
        self.visit_expr(node.false_branch)

    def visit_seq_expr_(self, seq):
        for block in seq.blocks:
            self.visit_binding_block(block)
        self.visit_expr(seq.body)

    def visit_function_(self, func):
        for param in func.params:
            self.visit_var_def(param)
        self.visit_expr(func.body)

    # -- bindings ---------------------------------------------------------------------------
    def visit_binding_block(self, block):
        if isinstance(block, rx.DataflowBlock):
            return self.visit_dataflow_block_(block)
        return self.visit_binding_block_(block)

    def visit_binding_block_(self, block):
        for binding in block.bindings:
            self.visit_binding(binding)

    def visit_dataflow_block_(self, block):
        for binding in block.bindings:
            self.visit_binding(binding)

    def visit_binding(self, binding):
        if isinstance(binding, rx.MatchCast):
            return self.visit_match_cast_(binding)
        return self.visit_var_binding_(binding)

    def visit_var_binding_(self, binding):
        self.visit_expr(binding.value)
        self.visit_var_def(binding.var)

    def visit_match_cast_(self, binding):
        self.visit_expr(binding.value)
        self.visit_var_def(binding.var)

    def visit_var_def(self, var):
        if isinstance(var, rx.DataflowVar):
            return self.visit_dataflow_var_def_(var)
        return self.visit_var_def_(var)

    def visit_var_def_(self, var):
        return None

    def visit_dataflow_var_def_(self, var):
        return self.visit_var_def_(var)

    def visit_span(self, span):
        return None


class ExprMutator(ExprFunctor):
    """Rebuilds expressions (copy-on-write) through ``self.builder_``."""

    def __init__(self, mod=None):
        self.builder_ = BlockBuilder(mod)
        self.var_remap_: dict = {}

    # -- expressions ------------------------------------------------------------------------
    def visit_expr(self, expr):
        return self.builder_.normalize(super().visit_expr(expr))

    def visit_expr_post_order(self, expr):
        """``expr`` with its children visited but not itself (no ``visit_<kind>_`` override of
        a subclass runs on it): a rewrite of a call first calls this, then matches."""
        method = method_of(ExprMutator, expr)
        return self.builder_.normalize(method(self, expr))

    def _leaf(self, expr):
        return expr

    visit_constant_ = visit_shape_expr_ = visit_extern_func_ = _leaf
    visit_global_var_ = visit_op_ = visit_prim_value_ = _leaf
    visit_string_imm_ = visit_data_type_imm_ = _leaf

    def visit_var_(self, var):
        return self.var_remap_.get(var, var)

    def visit_dataflow_var_(self, var):
        return self.visit_var_(var)

    def visit_tuple_(self, tup):
        fields = [self.visit_expr(f) for f in tup.fields]
        if all(a is b for a, b in zip(fields, tup.fields)):
            return tup
        return rx.Tuple(fields, tup.span)

    def visit_tuple_getitem_(self, item):
        value = self.visit_expr(item.tuple_value)
        if value is item.tuple_value:
            return item
        return rx.TupleGetItem(value, item.index, item.span)

    def visit_call_(self, call):
        op = self.visit_expr(call.op)
        args = [self.visit_expr(a) for a in call.args]
        if op is call.op and all(a is b for a, b in zip(args, call.args)):
            return call
        return rx.Call(op, args, call.attrs, call.sinfo_args, call.span)

    def visit_if_(self, node):
        cond = self.visit_expr(node.cond)
        then = self.visit_with_new_scope(node.true_branch)
        other = self.visit_with_new_scope(node.false_branch)
        if cond is node.cond and then is node.true_branch and other is node.false_branch:
            return node
        return rx.If(cond, then, other, node.span)

    def visit_seq_expr_(self, seq):
        builder = self.builder_
        builder.begin_scope()
        changed = False
        try:
            for block in seq.blocks:
                new_block = self.visit_binding_block(block)
                changed |= new_block is not block
            builder.begin_binding_block()
            body = self.visit_expr(seq.body)
            changed |= body is not seq.body
        finally:
            blocks = builder.end_scope()
        if not changed and len(blocks) == len(seq.blocks):
            return seq
        return rx.SeqExpr(blocks, body, seq.span)

    def visit_with_new_scope(self, expr):
        """Visit a function body or an If branch (a SeqExpr of its own)."""
        if not isinstance(expr, rx.SeqExpr):
            expr = rx.SeqExpr([], expr)
        return self.visit_expr(expr)

    def visit_function_(self, func):
        params = [self.visit_var_def(p) for p in func.params]
        body = self.visit_with_new_scope(func.body)
        if body is func.body and all(a is b for a, b in zip(params, func.params)):
            return func
        return rx.Function(params, body, func.ret_struct_info, func.is_pure, func.attrs,
                           func.span)

    # -- bindings ---------------------------------------------------------------------------
    def visit_binding_block(self, block):
        if isinstance(block, rx.DataflowBlock):
            return self.visit_dataflow_block_(block)
        return self.visit_binding_block_(block)

    def _visit_block(self, block, is_dataflow):
        builder = self.builder_
        if is_dataflow:
            builder.begin_dataflow_block()
        else:
            builder.begin_binding_block()
        for binding in block.bindings:
            self.visit_binding(binding)
        new_block = builder.end_block()
        if len(new_block.bindings) == len(block.bindings) and all(
                a is b for a, b in zip(new_block.bindings, block.bindings)):
            return block
        return new_block

    def visit_binding_block_(self, block):
        return self._visit_block(block, False)

    def visit_dataflow_block_(self, block):
        return self._visit_block(block, True)

    def visit_binding(self, binding):
        if isinstance(binding, rx.MatchCast):
            return self.visit_match_cast_(binding)
        return self.visit_var_binding_(binding)

    def visit_var_binding_(self, binding):
        value = self.visit_expr(binding.value)
        var = self.visit_var_def(binding.var)
        var = self.with_struct_info(var, value.struct_info)
        if var is not binding.var:
            self.var_remap_[binding.var] = var
        if var is binding.var and value is binding.value:
            self.builder_.emit_normalized(binding)
        else:
            self.builder_.emit_normalized(rx.VarBinding(var, value, binding.span))

    def visit_match_cast_(self, binding):
        value = self.visit_expr(binding.value)
        var = self.visit_var_def(binding.var)
        if var is not binding.var:
            self.var_remap_[binding.var] = var
        if var is binding.var and value is binding.value:
            self.builder_.emit_normalized(binding)
        else:
            self.builder_.emit_normalized(rx.MatchCast(var, value, binding.struct_info,
                                                       binding.span))

    def visit_var_def(self, var):
        if isinstance(var, rx.DataflowVar):
            return self.visit_dataflow_var_def_(var)
        return self.visit_var_def_(var)

    def visit_var_def_(self, var):
        return var

    def visit_dataflow_var_def_(self, var):
        return self.visit_var_def_(var)

    def with_struct_info(self, var, sinfo):
        """``var``, or a new variable of the same kind and name with ``sinfo`` when its struct
        info differs."""
        old = var.struct_info_
        if old is sinfo or (old is not None and structural_equal(old, sinfo,
                                                                  map_free_vars=False)):
            return var
        return type(var)(var.name_hint, sinfo, var.span)

    # -- helpers ----------------------------------------------------------------------------
    def lookup_binding(self, var):
        """The value bound to ``var`` (as emitted by this mutator's builder), or None."""
        return self.builder_.lookup_binding(var)

    def set_var_remap(self, old_var, new_var):
        self.var_remap_[old_var] = new_var

    def get_var_remap(self, var):
        return self.var_remap_.get(var, var)

    def visit_span(self, span):
        return span


# TVM's Python subclassing API: PyExprVisitor / PyExprMutator with @visitor / @mutator.
PyExprVisitor = ExprVisitor
PyExprMutator = ExprMutator


def visitor(cls):
    """Decorator of TVM's API; irlab's visitors are plain Python classes already."""
    return cls


def mutator(cls):
    """Decorator of TVM's API; irlab's mutators are plain Python classes already."""
    return cls
