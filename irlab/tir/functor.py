"""TIR functors: ``ExprFunctor``/``StmtFunctor`` with visitors and copy-on-write mutators.

- ``visit_expr(e)`` / ``visit_stmt(s)`` dispatch to ``visit_<kind>`` (``visit_add``,
  ``visit_buffer_load``, ``visit_for``, ``visit_block_realize``...) through a per-class table
  built once per functor class; a subclass only overrides the kinds it cares about.
- Expression results are memoized by node identity (``self.memo_map``); statements are not
  (a mutator may depend on the enclosing loops).
- Long expression chains (a 10,000-term sum) do not overflow the stack: past a depth, the
  sub-expression is first visited iteratively in post-order so recursive calls hit the memo.
- Mutators return the very same node when no child changed.
- The same table (``MethodTable``, ``method_table(cls)``) and the same method names
  (``visit_add``, ``visit_for``: ``visit_name(node_cls)``) are the dispatch of every other
  TIR walker: the interpreter, both codegens, the C vector scalarizer, VectorizeLoop, the
  printers and the arith analyses; none builds method names at each call.
"""

from __future__ import annotations

import re

from irlab.errors import TIRError
from irlab.ir.functor import MethodTable, class_method_table  # noqa: F401  (MethodTable: API)
from irlab.runtime.lru import LRUCache
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.buffer import BufferRegion, Range

_EXPR_CLASSES = (E.Var, E.SizeVar, E.IntImm, E.FloatImm, E.StringImm, E.Cast, E.Add, E.Sub,
                 E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max, E.EQ, E.NE, E.LT,
                 E.LE, E.GT, E.GE, E.And, E.Or, E.Not, E.Select, E.BufferLoad, E.Ramp,
                 E.Broadcast, E.Shuffle, E.Let, E.Call)
_STMT_CLASSES = (S.BufferStore, S.For, S.While, S.IfThenElse, S.SeqStmt, S.LetStmt, S.Allocate,
                 S.AllocateConst, S.DeclBuffer, S.AttrStmt, S.AssertStmt, S.Evaluate, S.Block,
                 S.BlockRealize)
_NOT_VISITED = {"dtype", "data", "op", "lanes", "buffer", "span", "name_hint", "kind", "attr_key",
                "thread_binding", "annotations", "alloc_buffers", "match_buffers", "node"}

# Expression depth past which the recursive walkers (simplifier, printer, codegens...) first
# handle what lies below iteratively, so that their recursion stops there.
DEEP = 200


def _snake(name):
    special = {"EQ": "eq", "NE": "ne", "LT": "lt", "LE": "le", "GT": "gt", "GE": "ge"}
    return special.get(name) or re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def visit_name(node_cls) -> str:
    """The method a TIR walker defines for ``node_cls``: ``visit_`` + its snake-case name
    (``Add`` -> ``visit_add``, ``BufferLoad`` -> ``visit_buffer_load``, ``EQ`` -> ``visit_eq``)."""
    return "visit_" + _snake(node_cls.__name__)


def _method_name(cls):
    for klass in cls.__mro__:
        if klass in _EXPR_CLASSES or klass in _STMT_CLASSES:
            return visit_name(klass)
    return None


_FIELDS_CACHE: dict = {}


def child_fields(cls):
    """Fields of a node class that may hold sub-expressions/statements (not binding sites)."""
    fields = _FIELDS_CACHE.get(cls)
    if fields is None:
        skip = _NOT_VISITED | set(getattr(cls, "_bind_fields", ()))
        fields = tuple(f for f in cls._structural_fields if f not in skip)
        _FIELDS_CACHE[cls] = fields
    return fields


def expr_children(e):
    """Direct sub-expressions of ``e``, in field order."""
    out = []
    for name in child_fields(type(e)):
        value = getattr(e, name)
        if isinstance(value, E.PrimExpr):
            out.append(value)
        elif isinstance(value, tuple):
            out.extend(v for v in value if isinstance(v, E.PrimExpr))
    return out


def post_order_below(root, done=()):
    """The sub-expressions strictly below ``root``, children before parents, each once,
    without those in ``done`` (a memo) and without entering Let scopes (a visitor enters
    those itself). Computed with an explicit stack: a visitor that visits these first, in
    order, then ``root`` recurses only one level deep however deep the expression is."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in seen or node in done:
            continue
        seen.add(node)
        stack.append((node, True))
        if isinstance(node, E.Let):
            continue
        for child in reversed(expr_children(node)):
            stack.append((child, False))
    return order[:-1] if order and order[-1] is root else order


def method_table(functor_cls) -> MethodTable:
    """The table of ``functor_cls`` for its methods named after the node class itself
    (``visit_name``: ``visit_add``, ``visit_for``; no MRO walk: a subclass of a node class
    needs its own method), built once per class; a subclass of the walker gets its own."""
    return class_method_table(functor_cls, visit_name, "_method_table")


class _Dispatch:
    @classmethod
    def _method_for(cls, node_cls):
        method = class_method_table(cls, _method_name, "_dispatch_table")[node_cls]
        if method is None:
            raise TIRError(f"{cls.__name__} cannot visit a {node_cls.__name__}")
        return method


class ExprFunctor(_Dispatch):
    """``visit_expr`` dispatch with identity memo; subclasses define ``visit_<kind>``."""

    def __init__(self):
        self.memo_map = {}
        self._depth = 0

    def visit_expr(self, e):
        # the hottest function of the TIR passes: attribute and table lookups inlined
        state = self.__dict__
        memo = state.get("memo_map")
        if memo is None:  # a subclass that did not call __init__
            memo = state["memo_map"] = {}
        if isinstance(e, E.PrimExpr):
            result = memo.get(e, _MISSING)
            if result is not _MISSING:
                return result
        depth = state.get("_depth", 0)
        if depth > DEEP:
            self._visit_below_iteratively(e)
        table = type(self).__dict__.get("_dispatch_table")
        method = table.get(type(e)) if table is not None else None
        if method is None:
            method = self._method_for(type(e))
        state["_depth"] = depth + 1
        try:
            result = method(self, e)
        finally:
            state["_depth"] = depth
        memo[e] = result
        return result

    def _visit_below_iteratively(self, root):
        memo = self.memo_map
        saved = self._depth
        self._depth = 0
        try:
            for node in post_order_below(root, memo):
                if node not in memo:
                    self.visit_expr(node)
        finally:
            self._depth = saved

    visit = None  # set below: visit dispatches on expression vs statement


_MISSING = object()


class ExprVisitor(ExprFunctor):
    """Visits every sub-expression; override ``visit_<kind>`` and call the base to recurse."""

    def _visit_children(self, e):
        for child in expr_children(e):
            self.visit_expr(child)

    def visit_buffer_load(self, e):
        self._visit_children(e)


class ExprMutator(ExprFunctor):
    """Rebuilds an expression bottom-up; a node whose children are unchanged is returned as is."""

    def _mutate_children(self, e):
        changes = {}
        for name in child_fields(type(e)):
            value = getattr(e, name)
            new = self._mutate_value(value)
            if new is not value:
                changes[name] = new
        return e.with_fields(**changes) if changes else e

    def _mutate_value(self, value):
        if isinstance(value, E.PrimExpr):
            return self.visit_expr(value)
        if isinstance(value, tuple):
            new = tuple(self._mutate_value(v) for v in value)
            return value if all(a is b for a, b in zip(new, value)) else new
        return value


for _cls in _EXPR_CLASSES:
    _name = visit_name(_cls)
    setattr(ExprVisitor, _name, ExprVisitor._visit_children)
    setattr(ExprMutator, _name, ExprMutator._mutate_children)
for _leaf in (E.Var, E.SizeVar, E.IntImm, E.FloatImm, E.StringImm):
    _name = visit_name(_leaf)
    setattr(ExprVisitor, _name, lambda self, e: None)
    setattr(ExprMutator, _name, lambda self, e: e)


class StmtFunctor(_Dispatch):
    """``visit_stmt`` dispatch (no memo); expressions go to ``visit_expr``."""

    def visit_stmt(self, s):
        table = type(self).__dict__.get("_dispatch_table")
        method = table.get(type(s)) if table is not None else None
        if method is None:
            method = self._method_for(type(s))
        return method(self, s)


class StmtExprVisitor(ExprVisitor, StmtFunctor):
    """Visits every statement and expression of a statement tree."""

    def _visit_value(self, value):
        if isinstance(value, E.PrimExpr):
            self.visit_expr(value)
        elif isinstance(value, S.Stmt):
            self.visit_stmt(value)
        elif isinstance(value, tuple):
            for v in value:
                self._visit_value(v)
        elif isinstance(value, Range):
            self.visit_expr(value.min)
            self.visit_expr(value.extent)
        elif isinstance(value, S.IterVar):
            self._visit_value(value.dom)
        elif isinstance(value, BufferRegion):
            self._visit_value(value.region)

    def _visit_stmt_children(self, s):
        for name in child_fields(type(s)):
            self._visit_value(getattr(s, name))


class StmtExprMutator(ExprMutator, StmtFunctor):
    """Rebuilds statements and expressions copy-on-write."""

    def _mutate_value(self, value):
        if isinstance(value, E.PrimExpr):
            return self.visit_expr(value)
        if isinstance(value, S.Stmt):
            return self.visit_stmt(value)
        if isinstance(value, tuple):
            new = tuple(self._mutate_value(v) for v in value)
            return value if all(a is b for a, b in zip(new, value)) else new
        if isinstance(value, Range):
            lo, ext = self.visit_expr(value.min), self.visit_expr(value.extent)
            return value.with_fields(min=lo, extent=ext)
        if isinstance(value, S.IterVar):
            return value.with_fields(dom=self._mutate_value(value.dom))
        if isinstance(value, BufferRegion):
            return value.with_fields(region=self._mutate_value(value.region))
        return value

    def _mutate_stmt_children(self, s):
        changes = {}
        for name in child_fields(type(s)):
            value = getattr(s, name)
            new = self._mutate_value(value)
            if new is not value:
                changes[name] = new
        return s.with_fields(**changes) if changes else s


for _cls in _STMT_CLASSES:
    _name = visit_name(_cls)
    setattr(StmtExprVisitor, _name, StmtExprVisitor._visit_stmt_children)
    setattr(StmtExprMutator, _name, StmtExprMutator._mutate_stmt_children)


class StmtMutator(StmtExprMutator):
    """Rebuilds statements copy-on-write and leaves their expressions as they are (TVM's
    StmtMutator): for passes that only rewrite statements (blocks, loops, allocations). No
    expression holds a statement, so walking every index expression of a kernel to get it
    back unchanged is wasted; ``visit_expr`` still works when a pass calls it."""

    def _mutate_value(self, value):
        if isinstance(value, S.Stmt):
            return self.visit_stmt(value)
        if type(value) is tuple and any(isinstance(v, S.Stmt) for v in value):
            new = tuple(self.visit_stmt(v) if isinstance(v, S.Stmt) else v for v in value)
            return value if all(a is b for a, b in zip(new, value)) else new
        return value


def _visit_any(self, node):
    if isinstance(node, S.Stmt):
        return self.visit_stmt(node)
    return self.visit_expr(node)


for _klass in (ExprFunctor, StmtFunctor):
    _klass.visit = _visit_any
StmtExprVisitor.visit = _visit_any
StmtExprMutator.visit = _visit_any


class _PostOrder(StmtExprVisitor):
    # one class for every post_order_visit call, so that its dispatch table is built once
    def __init__(self, callback):
        super().__init__()
        self.callback = callback

    def visit_expr(self, e):
        if e in self.memo_map:
            return None
        super().visit_expr(e)
        self.callback(e)

    def visit_stmt(self, s):
        super().visit_stmt(s)
        self.callback(s)


def post_order_visit(node, callback):
    """Call ``callback`` on every expression and statement under ``node``, children first."""
    _PostOrder(callback).visit(node)


# id(block) -> (block, ids of the Vars under it). Blocks are immutable and shared by every
# schedule of a workload (primitives rebuild loops and realizes around them), so a tuner that
# replays thousands of traces asks about the same few blocks again and again.
_BLOCK_VARS = LRUCache(4096)


def _var_ids_in(block):
    hit = _BLOCK_VARS.get(id(block))
    if hit is not None and hit[0] is block:
        return hit[1]
    ids = set()
    post_order_visit(block, lambda n: ids.add(id(n)) if isinstance(n, E.Var) else None)
    ids = frozenset(ids)
    _BLOCK_VARS[id(block)] = (block, ids)
    return ids


class _Substitute(StmtExprMutator):
    # module level (not per call): the dispatch table is built once
    def __init__(self, lookup, var_ids=None):
        super().__init__()
        self.lookup = lookup
        self.var_ids = var_ids  # the replaced vars' ids when known: blocks without them stay

    def visit_var(self, v):
        new = self.lookup(v)
        return v if new is None else E.convert(new)

    visit_size_var = visit_var

    def visit_block(self, block):
        if self.var_ids is not None and self.var_ids.isdisjoint(_var_ids_in(block)):
            return block  # nothing to replace inside (a loop var only reaches its bindings)
        return self._mutate_stmt_children(block)


def substitute(node, mapping):
    """``node`` with variables replaced (``mapping``: Var -> PrimExpr, or a callable)."""
    if callable(mapping):
        return _Substitute(mapping).visit(node)
    return _Substitute(mapping.get, {id(v) for v in mapping}).visit(node)
