"""``BindingRewriter``: the walk the passes lowering Relax to the VM share.

In normal form a function body is a ``SeqExpr`` of blocks of bindings whose values have leaf
arguments; lowering rewrites one binding into zero or more bindings. The rewriter visits the
bindings in order (``If`` branches included), substitutes variables already replaced, and lets
a subclass return the bindings that replace each one.

Lowered IR calls PrimFuncs directly (``cls.add(a, b, out)``), which the normalizer does not
accept, so new nodes get their struct info from ``fill_struct_info`` instead: the IR stays
fully annotated for printing, the well-formedness checker and the pass stepper.
"""

from __future__ import annotations

from irlab.errors import DiagnosticError
from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.relax.expr import (BindingBlock, Call, Function, If, MatchCast,
                              SeqExpr, Tuple, TupleGetItem, Var, VarBinding)
from irlab.relax.block_builder import BlockBuilder
from irlab.relax.op.registry import INFER_STRUCT_INFO
from irlab.relax.struct_info import (FuncStructInfo, ObjectStructInfo, TensorStructInfo,
                                     TupleStructInfo, struct_info_lca)


class BindingRewriter:
    """Rewrites a function binding by binding; ``var_map`` maps replaced variables to their
    replacement expressions."""

    def __init__(self):
        self.var_map: dict = {}

    # -- what subclasses override ------------------------------------------------------------
    def rewrite_binding(self, binding) -> list:
        """The bindings replacing ``binding`` (whose value is already substituted)."""
        return [binding]

    def make_block(self, block, bindings):
        """The block holding the rewritten ``bindings`` of ``block`` (same kind by default)."""
        return type(block)(bindings, block.span)

    def rewrite_result(self, body):
        """(bindings to add before it, the new result) for a SeqExpr's result."""
        return [], body

    def prologue(self, func) -> list:
        """Bindings placed before the body's first block (e.g. shape checks of parameters)."""
        return []

    # -- the walk ------------------------------------------------------------------------------
    def rewrite_function(self, func: Function) -> Function:
        first = self.prologue(func)
        body = self.rewrite_seq(func.body, first)
        if body is func.body:
            return func
        return Function(func.params, body, func.ret_struct_info, func.is_pure, func.attrs,
                        func.span)

    def rewrite_seq(self, seq: SeqExpr, prologue=()) -> SeqExpr:
        blocks = [BindingBlock(list(prologue))] if prologue else []
        changed = bool(prologue)
        for block in seq.blocks:
            new = self.rewrite_block(block)
            changed |= new is not block
            if new.bindings:
                blocks.append(new)
        extra, body = self.rewrite_result(self.substitute(seq.body))
        if extra:
            blocks.append(BindingBlock(extra))
        if not changed and body is seq.body:
            return seq
        return SeqExpr(blocks, body, seq.span)

    def rewrite_block(self, block):
        out, changed = [], False
        for binding in block.bindings:
            binding_in = self.substitute_binding(binding)
            new = self.rewrite_binding(binding_in)
            changed |= binding_in is not binding or len(new) != 1 or new[0] is not binding
            out.extend(new)
        block_out = self.make_block(block, out)
        return block if (not changed and type(block_out) is type(block)) else block_out

    def substitute_binding(self, binding):
        value = self.substitute(binding.value)
        if value is binding.value:
            return binding
        if isinstance(binding, MatchCast):
            return MatchCast(binding.var, value, binding.struct_info, binding.span)
        return VarBinding(binding.var, value, binding.span)

    def substitute(self, expr):
        """``expr`` with replaced variables substituted (``If`` branches rewritten)."""
        if isinstance(expr, Var):
            return self.var_map.get(expr, expr)
        if isinstance(expr, Call):
            args = [self.substitute(a) for a in expr.args]
            op = self.substitute(expr.op) if isinstance(expr.op, Var) else expr.op
            sinfo_args = [self.substitute_sinfo(s) for s in expr.sinfo_args]
            if op is expr.op and all(a is b for a, b in zip(args, expr.args)) and \
                    all(a is b for a, b in zip(sinfo_args, expr.sinfo_args)):
                return expr
            return Call(op, args, expr.attrs, sinfo_args, expr.span)
        if isinstance(expr, Tuple):
            fields = [self.substitute(f) for f in expr.fields]
            if all(a is b for a, b in zip(fields, expr.fields)):
                return expr
            return Tuple(fields, expr.span)
        if isinstance(expr, TupleGetItem):
            value = self.substitute(expr.tuple_value)
            return expr if value is expr.tuple_value else TupleGetItem(value, expr.index,
                                                                      expr.span)
        if isinstance(expr, If):
            cond = self.substitute(expr.cond)
            then, other = self.rewrite_seq(expr.true_branch), self.rewrite_seq(expr.false_branch)
            if (cond, then, other) == (expr.cond, expr.true_branch, expr.false_branch):
                return expr
            return If(cond, then, other, expr.span)
        if isinstance(expr, Function):
            raise DiagnosticError("local functions (closures) are not supported by the "
                                  "lowering to the VM yet; lift them to the module", expr)
        return expr


    def substitute_sinfo(self, sinfo):
        """``sinfo`` with a replaced variable holding a tensor's shape substituted
        (``R.Tensor(lv3, ...)`` where ``lv3`` is a shape computed at run time)."""
        if isinstance(sinfo, TensorStructInfo) and isinstance(sinfo.shape, Var):
            shape = self.var_map.get(sinfo.shape, sinfo.shape)
            return sinfo if shape is sinfo.shape else \
                TensorStructInfo(shape, sinfo.dtype, ndim=sinfo.ndim, span=sinfo.span)
        if isinstance(sinfo, TupleStructInfo):
            fields = [self.substitute_sinfo(f) for f in sinfo.fields]
            return sinfo if all(a is b for a, b in zip(fields, sinfo.fields)) else \
                TupleStructInfo(fields, sinfo.span)
        return sinfo


def fill_struct_info(expr, mod):
    """Deduce the struct info of the nodes of ``expr`` that have none (bottom-up)."""
    if expr.struct_info_ is not None and not isinstance(expr, (SeqExpr, Function, If)):
        return expr
    for child in _children(expr):
        fill_struct_info(child, mod)
    if expr.struct_info_ is None:
        expr._set_struct_info(_deduce(expr, mod))
    return expr


def _children(expr):
    if isinstance(expr, Call):
        return [a for a in expr.args if not isinstance(a, (GlobalVar, Op))]
    if isinstance(expr, Tuple):
        return list(expr.fields)
    if isinstance(expr, TupleGetItem):
        return [expr.tuple_value]
    if isinstance(expr, If):
        return [expr.true_branch, expr.false_branch]
    if isinstance(expr, SeqExpr):
        return [b.value for block in expr.blocks for b in block.bindings] + [expr.body]
    if isinstance(expr, Function):
        return [expr.body]
    return []


def _deduce(expr, mod):
    if isinstance(expr, Tuple):
        return TupleStructInfo([f.struct_info for f in expr.fields])
    if isinstance(expr, TupleGetItem):
        sinfo = expr.tuple_value.struct_info
        return sinfo.fields[expr.index] if isinstance(sinfo, TupleStructInfo) else \
            ObjectStructInfo()
    if isinstance(expr, SeqExpr):
        return expr.body.struct_info
    if isinstance(expr, If):
        return struct_info_lca(expr.true_branch.struct_info, expr.false_branch.struct_info)
    if isinstance(expr, Function):
        ret = expr.ret_struct_info or expr.body.struct_info
        return FuncStructInfo([p.struct_info for p in expr.params], ret, expr.is_pure)
    if isinstance(expr, Call):
        return _call_struct_info(expr, mod)
    return ObjectStructInfo()


def _call_struct_info(call, mod):
    op = call.op
    if isinstance(op, Op) and op.get_attr(INFER_STRUCT_INFO) is not None:
        return op.get_attr(INFER_STRUCT_INFO)(call, BlockBuilder(mod))
    if isinstance(op, GlobalVar) and op in mod:
        func = mod[op]
        if isinstance(func, Function):
            return func.ret_struct_info or ObjectStructInfo()
        return TupleStructInfo([])  # a PrimFunc writes its outputs and returns nothing
    if len(call.sinfo_args) == 1:
        return call.sinfo_args[0]
    if call.sinfo_args:
        return TupleStructInfo(call.sinfo_args)
    return ObjectStructInfo()


def relax_functions(mod):
    """(GlobalVar, Function) pairs of the module's Relax functions."""
    return [(gv, f) for gv, f in mod.functions.items() if isinstance(f, Function)]


def update_functions(mod, rewrite):
    """A copy of ``mod`` with each Relax function replaced by ``rewrite(gv, func)`` (its new
    nodes given struct info); ``mod`` itself when nothing changed."""
    changes = {}
    for gv, func in relax_functions(mod):
        new = rewrite(gv, func)
        if new is not func:
            changes[gv] = fill_struct_info(new, mod)
    if not changes:
        return mod
    out = mod.copy()
    for gv, func in changes.items():
        out[gv] = func
    return out


__all__ = ["BindingRewriter", "fill_struct_info", "relax_functions", "update_functions"]
