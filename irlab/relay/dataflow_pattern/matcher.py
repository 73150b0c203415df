"""Matching a pattern against an expression (TVM's ``DFPatternMatcher``).

``match(pattern, expr)`` walks the pattern and the expression together. On success the matcher's
``memo`` maps every pattern node to the expression(s) it matched; a pattern node met again must
match the same expression (that is how ``add(x, x)`` is told from ``add(x, y)``)::

    matcher = DFPatternMatcher(expr)
    if matcher.match(is_op("add")(wildcard(), is_constant()), expr):
        matcher.memo          # {pattern: [expr, ...]}

As in TVM, ``add`` and ``multiply`` are matched commutatively, ``divide(multiply(a, b), c)``
also matches ``multiply(a, divide(b, c))`` (and the other way round), and attributes are
compared by value.
"""

from __future__ import annotations

from irlab.errors import IrlabError, RelayTypeError
from irlab.ir.attrs import Attrs, DictAttrs, normalize_attr_value
from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.ir.structural import structural_equal
from irlab.ir.type import TensorType
from irlab.relay.dataflow_pattern.graph import IndexedGraph
from irlab.relay.dataflow_pattern.pattern import (
    AltPattern, AttrPattern, CallPattern, ConstantPattern, DataTypePattern, DominatorPattern,
    ExprPattern, FunctionPattern, IfPattern, LetPattern, ShapePattern, TupleGetItemPattern,
    TuplePattern, TypePattern, VarPattern, WildcardPattern)
from irlab.relay.expr import Call, Constant, If, Let, Tuple, TupleGetItem, Var
from irlab.relay.function import Function


def _values_equal(expected, actual) -> bool:
    """An attribute value of a pattern against the one found (lists and tuples alike)."""
    expected, actual = normalize_attr_value(expected), normalize_attr_value(actual)
    if expected == actual:
        return True
    try:
        return structural_equal(expected, actual)
    except Exception:  # values that are not IR nodes and differ
        return False


def _call_attr_names(attrs) -> list:
    if attrs is None:
        return []
    if isinstance(attrs, (Attrs, DictAttrs)):
        return list(attrs.keys())
    return []


def type_of(expr):
    """The type of ``expr``: its checked type, or inferred on the spot (TVM's InferType(expr)).

    ``None`` when it has none: an operator or global name, or an expression that does not
    type-check on its own (an unannotated free variable, say): such a node matches no type
    constraint.
    """
    if isinstance(expr, (Op, GlobalVar)):
        return None
    if expr.has_checked_type():
        return expr.checked_type
    from irlab.relay.ty_infer import infer_expr

    try:
        typed = infer_expr(expr)
    except RelayTypeError:
        return None
    return typed.checked_type if typed.has_checked_type() else None


class DFPatternMatcher:
    """Matches patterns against sub-expressions of one root expression."""

    def __init__(self, root, graph: IndexedGraph | None = None):
        self.root = root
        self._graph = graph
        self.memo: dict = {}  # pattern -> [expr, ...]
        self._matched: list = []  # patterns in the order they matched (to undo a failure)
        self.memoize = True

    @property
    def graph(self) -> IndexedGraph:
        # Only dominator patterns need users and dominators: build the graph on first use.
        if self._graph is None:
            self._graph = IndexedGraph(self.root)
        return self._graph

    def match(self, pattern, expr) -> bool:
        self.memo = {}
        self._matched = []
        return self.visit(pattern, expr)

    # -- core -----------------------------------------------------------------------------------
    def visit(self, pattern, expr) -> bool:
        if self.memoize and pattern in self.memo:
            return self.memo[pattern][0] is expr
        watermark = len(self._matched)
        matched = self._dispatch(pattern, expr)
        if matched:
            self.memo.setdefault(pattern, []).append(expr)
            self._matched.append(pattern)
        else:
            self._clear(watermark)
        return matched

    def _clear(self, watermark):
        for pattern in self._matched[watermark:]:
            self.memo.pop(pattern, None)
        del self._matched[watermark:]

    def _dispatch(self, pattern, expr) -> bool:
        method = _DISPATCH.get(type(pattern))
        if method is None:
            raise IrlabError(f"cannot match a {type(pattern).__name__}: not a pattern")
        return method(self, pattern, expr)

    # -- leaves ---------------------------------------------------------------------------------
    def _expr(self, p, expr):
        target = p.expr
        if isinstance(target, Op):
            return expr is target
        if type(target) is not type(expr):
            return False
        return expr is target or structural_equal(target, expr)

    def _var(self, p, expr):
        return isinstance(expr, Var) and (not p.name or p.name == expr.name_hint)

    def _constant(self, p, expr):
        return isinstance(expr, Constant)

    def _wildcard(self, p, expr):
        return True

    def _alt(self, p, expr):
        return self.visit(p.left, expr) or self.visit(p.right, expr)

    # -- attributes and types -------------------------------------------------------------------
    def _attr(self, p, expr):
        if not self.visit(p.pattern, expr):
            return False
        wanted = p.attrs.items
        if isinstance(expr, Op):
            return all(expr.has_attr(k) and _values_equal(v, expr.get_attr(k)) for k, v in wanted)
        if isinstance(expr, Call):
            names = _call_attr_names(expr.attrs)
            return all(k in names and _values_equal(v, expr.attrs[k]) for k, v in wanted)
        if isinstance(expr, Function):
            attrs = expr.attrs
            return all(attrs is not None and k in attrs and _values_equal(v, attrs[k])
                       for k, v in wanted)
        return False

    def _type(self, p, expr):
        return type_of(expr) == p.type and self.visit(p.pattern, expr)

    def _shape(self, p, expr):
        ty = type_of(expr)
        return isinstance(ty, TensorType) and ty.shape == p.shape and self.visit(p.pattern, expr)

    def _dtype(self, p, expr):
        ty = type_of(expr)
        return isinstance(ty, TensorType) and ty.dtype == p.dtype and self.visit(p.pattern, expr)

    # -- compound -------------------------------------------------------------------------------
    def _args(self, patterns, exprs) -> bool:
        watermark = len(self._matched)
        ok = True
        if patterns is not None:
            if len(patterns) != len(exprs):
                ok = False
            else:
                for p, e in zip(patterns, exprs):
                    if not self.visit(p, e):
                        ok = False
                        break
        if not ok:
            self._clear(watermark)
        return ok

    def _call(self, p, expr):
        if not isinstance(expr, Call):
            return False
        watermark = len(self._matched)
        if self.visit(p.op, expr.op):
            if self._args(p.args, expr.args):
                return True
            # add and multiply commute.
            if _pattern_op_name(p) in ("add", "multiply") and p.args is not None:
                return self._args(tuple(reversed(p.args)), expr.args)
            return False
        self._clear(watermark)
        return self._associate(p, expr, watermark)

    def _associate(self, p, expr, watermark):
        """divide(multiply(a, b), c) also matches multiply(a, divide(b, c)) and back."""
        name = _pattern_op_name(p)
        if p.args is None or len(p.args) != 2 or len(expr.args) != 2:
            return False
        if name == "divide":
            inner = p.args[0]
            if (isinstance(inner, CallPattern) and _pattern_op_name(inner) == "multiply"
                    and inner.args is not None and len(inner.args) == 2
                    and _expr_op_name(expr) == "multiply"
                    and "divide" in (_expr_op_name(expr.args[0]), _expr_op_name(expr.args[1]))):
                for i in range(2):
                    div = CallPattern(p.op, [inner.args[i], p.args[1]])
                    mul = CallPattern(inner.op, [inner.args[(i + 1) % 2], div])
                    if self.visit(mul, expr):
                        return True
                    self._clear(watermark)
                return False
        if name == "multiply":
            for i in range(2):
                inner = p.args[i]
                if (isinstance(inner, CallPattern) and _pattern_op_name(inner) == "divide"
                        and inner.args is not None and len(inner.args) == 2
                        and _expr_op_name(expr) == "divide"
                        and "multiply" in (_expr_op_name(expr.args[0]),
                                           _expr_op_name(expr.args[1]))):
                    mul = CallPattern(p.op, [inner.args[0], p.args[(i + 1) % 2]])
                    div = CallPattern(inner.op, [mul, inner.args[1]])
                    return self.visit(div, expr)
        return False

    def _function(self, p, expr):
        if not isinstance(expr, Function):
            return False
        if p.params is not None:
            if len(p.params) != len(expr.params):
                return False
            if not all(self.visit(a, b) for a, b in zip(p.params, expr.params)):
                return False
        return self.visit(p.body, expr.body)

    def _tuple_getitem(self, p, expr):
        return (isinstance(expr, TupleGetItem) and (p.index == -1 or p.index == expr.index)
                and self.visit(p.tuple, expr.tuple_value))

    def _tuple(self, p, expr):
        if not isinstance(expr, Tuple):
            return False
        if p.fields is None:
            return True
        if len(p.fields) != len(expr.fields):
            return False
        return all(self.visit(a, b) for a, b in zip(p.fields, expr.fields))

    def _if(self, p, expr):
        return (isinstance(expr, If) and self.visit(p.cond, expr.cond)
                and self.visit(p.true_branch, expr.true_branch)
                and self.visit(p.false_branch, expr.false_branch))

    def _let(self, p, expr):
        return (isinstance(expr, Let) and self.visit(p.var, expr.var)
                and self.visit(p.value, expr.value) and self.visit(p.body, expr.body))

    # -- domination -----------------------------------------------------------------------------
    def _dominator(self, p, expr):
        if self.visit(p.child, expr):
            on_path = self._matches_path(p, expr)
            self.memoize = True
            if on_path:
                return self._dominates_parent(p, expr)
        return False

    def _matches_path(self, p, expr) -> bool:
        """Every input path of ``expr`` reaches ``parent`` through nodes matching ``path``.

        Depth-first and iterative (TVM recurses): each node must have at least one input that
        is not its callee. The parent is matched memoized (one parent); the path is not.
        """
        graph = self.graph
        frames = [[iter(self._path_inputs(graph, expr)), 0]]
        while frames:
            frame = frames[-1]
            node = next(frame[0], None)
            if node is None:
                if frame[1] == 0:
                    return False
                frames.pop()
                continue
            frame[1] += 1
            self.memoize = True
            if self.visit(p.parent, node):
                continue
            self.memoize = False
            if not self.visit(p.path, node):
                return False
            frames.append([iter(self._path_inputs(graph, node)), 0])
        return True

    @staticmethod
    def _path_inputs(graph, expr):
        callee = expr.op if isinstance(expr, Call) else None
        return [n.ref for n in graph.node(expr).inputs if n.ref is not callee]

    def _dominates_parent(self, p, expr) -> bool:
        stack = [self.graph.node(expr)]
        seen = set()
        while stack:
            current = stack.pop()
            for child in current.dominator_children:
                if child in seen:
                    continue
                if self.visit(p.parent, child.ref):
                    return True
                stack.append(child)
                seen.add(child)
        return False


def _pattern_op_name(p):
    if isinstance(p, CallPattern) and isinstance(p.op, ExprPattern) and isinstance(p.op.expr, Op):
        return p.op.expr.name
    return None


def _expr_op_name(expr):
    if isinstance(expr, Call) and isinstance(expr.op, Op):
        return expr.op.name
    return None


_DISPATCH = {
    ExprPattern: DFPatternMatcher._expr,
    VarPattern: DFPatternMatcher._var,
    ConstantPattern: DFPatternMatcher._constant,
    WildcardPattern: DFPatternMatcher._wildcard,
    AltPattern: DFPatternMatcher._alt,
    AttrPattern: DFPatternMatcher._attr,
    TypePattern: DFPatternMatcher._type,
    ShapePattern: DFPatternMatcher._shape,
    DataTypePattern: DFPatternMatcher._dtype,
    CallPattern: DFPatternMatcher._call,
    FunctionPattern: DFPatternMatcher._function,
    TupleGetItemPattern: DFPatternMatcher._tuple_getitem,
    TuplePattern: DFPatternMatcher._tuple,
    IfPattern: DFPatternMatcher._if,
    LetPattern: DFPatternMatcher._let,
    DominatorPattern: DFPatternMatcher._dominator,
}


def match(pattern, expr) -> bool:
    """Whether ``expr`` matches ``pattern`` (``pattern.match(expr)``)."""
    from irlab.relay.dataflow_pattern.pattern import DFPattern

    if not isinstance(pattern, DFPattern):
        raise IrlabError(f"match takes a pattern, got {type(pattern).__name__}")
    return DFPatternMatcher(expr).match(pattern, expr)


__all__ = ["DFPatternMatcher", "match", "type_of"]
