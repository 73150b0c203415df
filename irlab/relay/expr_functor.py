"""``ExprFunctor``, ``ExprVisitor`` and ``ExprMutator`` with TVM's method names.

- Dispatch goes through a per-class table (node class -> ``visit_<kind>`` function) built once,
  so a subclass's overrides are found without an isinstance ladder.
- ``visit`` memoizes by node identity (``self.memo_map``): a shared sub-DAG is visited once and
  a mutator keeps it shared.
- Deep programs do not hit Python's recursion limit: when the visit recursion gets deep, the
  functor first visits the dataflow sub-graph below the current node iteratively, in post-order
  (as TVM's MixedModeVisitor does), so the recursive calls that follow are all memo hits.
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.expr import GlobalVar
from irlab.ir.functor import class_method_table, mro_method_name
from irlab.ir.op import Op
from irlab.ir.adt import Constructor
from irlab.relay.adt import Clause, Match, PatternConstructor, PatternTuple, PatternVar
from irlab.relay.expr import (Call, Constant, If, Let, RefCreate, RefRead, RefWrite, Tuple,
                              TupleGetItem, Var)
from irlab.relay.function import Function

# Which method handles which node class. A subclass of a node class uses its base's entry.
_VISIT_METHOD = {
    Function: "visit_function",
    Call: "visit_call",
    Let: "visit_let",
    Var: "visit_var",
    GlobalVar: "visit_global_var",
    If: "visit_if",
    Tuple: "visit_tuple",
    TupleGetItem: "visit_tuple_getitem",
    Constant: "visit_constant",
    Op: "visit_op",
    Constructor: "visit_constructor",
    Match: "visit_match",
    RefCreate: "visit_ref_create",
    RefRead: "visit_ref_read",
    RefWrite: "visit_ref_write",
}

# Expression-valued fields of each node class, in TVM's visiting order.
_EXPR_FIELDS = {
    Call: ("op", "args"),
    Tuple: ("fields",),
    TupleGetItem: ("tuple_value",),
    Let: ("var", "value", "body"),
    If: ("cond", "true_branch", "false_branch"),
    Function: ("params", "body"),
    Var: (),
    Constant: (),
    Op: (),
    GlobalVar: (),
    Constructor: (),
    Match: ("data", "clauses"),
    RefCreate: ("value",),
    RefRead: ("ref",),
    RefWrite: ("ref", "value"),
}

# Nodes whose sub-graph is expanded iteratively when recursion gets deep. Scopes (Let, If,
# Function) are not: a visitor may track scope in visit_let/visit_function, so their insides
# are visited only when the visitor itself enters them. Let chains are iterated in
# ExprVisitor/ExprMutator.visit_let instead.
_DATAFLOW = (Call, Tuple, TupleGetItem)

# Visit depth after which the iterative pre-pass kicks in. Each level costs ~3 Python frames.
_DEEP = 48


def visit_method(visitor_cls, node_cls):
    """The function ``visitor_cls`` handles ``node_cls`` with (its ``visit_<kind>``, found
    through the node class's bases), or None. Looked up once per pair and cached on the
    visitor class: the one dispatch of every Relay visitor (functors, the interpreter, the
    printer)."""
    return class_method_table(visitor_cls, _NAME_OF, "_dispatch_table")[node_cls]


_NAME_OF = mro_method_name(_VISIT_METHOD)


def _fields_of(cls):
    for klass in cls.__mro__:
        if klass in _EXPR_FIELDS:
            return _EXPR_FIELDS[klass]
    raise IrlabError(f"{cls.__name__} is not a Relay expression")


def expr_children(expr):
    """The sub-expressions of ``expr`` in visiting order (Call: op then args, ...)."""
    out = []
    for name in _fields_of(type(expr)):
        value = getattr(expr, name)
        if name == "clauses":  # a Match: the clauses' right-hand sides
            out.extend(c.rhs for c in value)
        elif isinstance(value, tuple):
            out.extend(value)
        else:
            out.append(value)
    return out


def post_order(expr, *, into_functions=True, stop=None, dataflow_only=False):
    """Every node reachable from ``expr`` once, children before parents, iteratively.

    ``into_functions=False`` does not enter Function nodes (they are still listed);
    ``dataflow_only=True`` enters only Call/Tuple/TupleGetItem (scopes such as Let, If and
    Function are listed as leaves). ``stop`` is a set of nodes that are listed but not entered
    (already-visited nodes, for instance).
    """
    order = []
    seen = set()
    stack = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        if stop is not None and node in stop:
            continue
        if not into_functions and isinstance(node, Function):
            continue
        if dataflow_only and not isinstance(node, _DATAFLOW):
            continue
        children = expr_children(node)
        for child in reversed(children):
            if child not in seen:
                stack.append((child, False))
    return order


class DeepSafeMemoVisitor:
    """A visitor that memoizes each node's result in ``self.memo`` and never recurses deeper
    than ``DEEP`` dataflow nodes: past that depth it first visits what lies below, children
    before parents (the order the recursion would take), so the recursion stops at nodes
    already in the memo however long a chain of calls is. Subclasses define ``_visit(e)``."""

    DEEP = _DEEP
    _DATAFLOW = _DATAFLOW

    def __init__(self):
        self.memo: dict = {}
        self._depth = 0

    def visit(self, e):
        hit = self.memo.get(e)
        if hit is None:
            if self._depth > self.DEEP and isinstance(e, self._DATAFLOW):
                self._visit_below(e)
            self._depth += 1
            try:
                hit = self.memo[e] = self._visit(e)
            finally:
                self._depth -= 1
        return hit

    def _visit_below(self, e):
        saved, self._depth = self._depth, 0
        try:
            for node in post_order(e, dataflow_only=True, stop=self.memo.keys()):
                if node is not e and isinstance(node, self._DATAFLOW):
                    self.visit(node)
        finally:
            self._depth = saved

    def _visit(self, e):
        raise NotImplementedError


class ExprFunctor:
    """Base functor: ``visit(expr)`` dispatches to ``visit_<kind>(expr)``, memoized by identity."""

    def __init__(self):
        self.memo_map = {}
        self._visit_depth = 0

    def visit(self, expr):
        memo = self.memo_map
        if expr in memo:
            return memo[expr]
        depth = getattr(self, "_visit_depth", None)
        if depth is None:  # a subclass forgot to call ExprFunctor.__init__
            self._visit_depth = depth = 0
            if not hasattr(self, "memo_map"):
                self.memo_map = memo = {}
        if depth > _DEEP and isinstance(expr, _DATAFLOW):
            self._visit_below_iteratively(expr)
        self._visit_depth = depth + 1
        try:
            result = self._dispatch(expr)
        finally:
            self._visit_depth = depth
        memo[expr] = result
        return result

    def _visit_below_iteratively(self, expr):
        memo = self.memo_map
        nodes = post_order(expr, dataflow_only=True, stop=memo.keys())
        saved = self._visit_depth
        self._visit_depth = 0
        try:
            # Children come first, so each visit below finds its children memoized and
            # recurses one level only. Going through self.visit keeps subclass hooks working.
            for node in nodes[:-1]:  # the last one is expr itself, visited by the caller
                if node not in memo:
                    self.visit(node)
        finally:
            self._visit_depth = saved

    def _dispatch(self, expr):
        fn = visit_method(type(self), type(expr))
        if fn is None:
            raise IrlabError(f"{type(self).__name__} cannot visit a {type(expr).__name__}: "
                             f"not a Relay expression")
        return fn(self, expr)

    def visit_type(self, t):
        return t

    def visit_function(self, fn):
        raise NotImplementedError("visit_function")

    def visit_let(self, let):
        raise NotImplementedError("visit_let")

    def visit_call(self, call):
        raise NotImplementedError("visit_call")

    def visit_var(self, var):
        raise NotImplementedError("visit_var")

    def visit_type_var(self, tv):
        return tv

    def visit_global_var(self, gv):
        raise NotImplementedError("visit_global_var")

    def visit_if(self, ite):
        raise NotImplementedError("visit_if")

    def visit_tuple(self, tup):
        raise NotImplementedError("visit_tuple")

    def visit_tuple_getitem(self, t):
        raise NotImplementedError("visit_tuple_getitem")

    def visit_constant(self, const):
        raise NotImplementedError("visit_constant")

    def visit_op(self, op):
        raise NotImplementedError("visit_op")

    def visit_constructor(self, con):
        raise NotImplementedError("visit_constructor")

    def visit_match(self, m):
        raise NotImplementedError("visit_match")

    def visit_ref_create(self, r):
        raise NotImplementedError("visit_ref_create")

    def visit_ref_read(self, r):
        raise NotImplementedError("visit_ref_read")

    def visit_ref_write(self, r):
        raise NotImplementedError("visit_ref_write")


class ExprVisitor(ExprFunctor):
    """Visits every node once (shared sub-DAGs once); returns nothing."""

    def visit_tuple(self, tup):
        for x in tup.fields:
            self.visit(x)

    def visit_call(self, call):
        self.visit(call.op)
        for a in call.args:
            self.visit(a)

    def visit_var(self, var):
        pass

    def visit_let(self, let):
        # A let chain (ANF) can be thousands deep: walk it in a loop, not by recursion.
        body = let
        while isinstance(body, Let):
            self.visit(body.var)
            self.visit(body.value)
            if body is not let:
                self.memo_map[body] = None
            body = body.body
        self.visit(body)

    def visit_function(self, fn):
        for x in fn.params:
            self.visit(x)
        self.visit(fn.body)

    def visit_if(self, i):
        self.visit(i.cond)
        self.visit(i.true_branch)
        self.visit(i.false_branch)

    def visit_global_var(self, gv):
        pass

    def visit_constant(self, const):
        pass

    def visit_op(self, op):
        pass

    def visit_tuple_getitem(self, t):
        self.visit(t.tuple_value)

    def visit_constructor(self, con):
        pass

    def visit_match(self, m):
        self.visit(m.data)
        for clause in m.clauses:
            self.visit_clause(clause)

    def visit_clause(self, clause):
        self.visit_pattern(clause.lhs)
        self.visit(clause.rhs)

    def visit_pattern(self, pattern):
        if isinstance(pattern, PatternVar):
            self.visit(pattern.var)
        elif isinstance(pattern, (PatternConstructor, PatternTuple)):
            for p in pattern.patterns:
                self.visit_pattern(p)

    def visit_ref_create(self, r):
        self.visit(r.value)

    def visit_ref_read(self, r):
        self.visit(r.ref)

    def visit_ref_write(self, r):
        self.visit(r.ref)
        self.visit(r.value)


class ExprMutator(ExprFunctor):
    """Rebuilds the expression bottom-up, copy-on-write: an unchanged node is returned as is.

    Function attrs and return type are kept; a shared sub-DAG stays shared.
    """

    def visit_function(self, fn):
        new_params = [self.visit(x) for x in fn.params]
        new_body = self.visit(fn.body)
        if new_body is fn.body and all(a is b for a, b in zip(new_params, fn.params)):
            return fn
        return Function(new_params, new_body, fn.ret_type, fn.type_params, fn.attrs, fn.span)

    def visit_let(self, let):
        # Iterate down the let chain, then rebuild it bottom-up (no recursion per binding).
        chain = []
        body = let
        while isinstance(body, Let) and (body is let or body not in self.memo_map):
            chain.append((body, self.visit(body.var), self.visit(body.value)))
            body = body.body
        result = self.visit(body)
        for node, new_var, new_val in reversed(chain):
            if not (new_var is node.var and new_val is node.value and result is node.body):
                result = Let(new_var, new_val, result, node.span)
            else:
                result = node
            if node is not let:
                self.memo_map[node] = result
        return result

    def visit_call(self, call):
        new_fn = self.visit(call.op)
        new_args = [self.visit(arg) for arg in call.args]
        if new_fn is call.op and all(a is b for a, b in zip(new_args, call.args)):
            return call
        return Call(new_fn, new_args, call.attrs, call.type_args, call.span)

    def visit_var(self, var):
        return var

    def visit_global_var(self, gv):
        return gv

    def visit_if(self, ite):
        cond = self.visit(ite.cond)
        t = self.visit(ite.true_branch)
        f = self.visit(ite.false_branch)
        if cond is ite.cond and t is ite.true_branch and f is ite.false_branch:
            return ite
        return If(cond, t, f, ite.span)

    def visit_tuple(self, tup):
        fields = [self.visit(field) for field in tup.fields]
        if all(a is b for a, b in zip(fields, tup.fields)):
            return tup
        return Tuple(fields, tup.span)

    def visit_tuple_getitem(self, op):
        tuple_value = self.visit(op.tuple_value)
        if tuple_value is op.tuple_value:
            return op
        return TupleGetItem(tuple_value, op.index, op.span)

    def visit_constant(self, const):
        return const

    def visit_op(self, op):
        return op

    def visit_constructor(self, con):
        return con

    def visit_match(self, m):
        data = self.visit(m.data)
        clauses = [self.visit_clause(c) for c in m.clauses]
        if data is m.data and all(a is b for a, b in zip(clauses, m.clauses)):
            return m
        return Match(data, clauses, m.complete, m.span)

    def visit_clause(self, clause):
        lhs = self.visit_pattern(clause.lhs)
        rhs = self.visit(clause.rhs)
        if lhs is clause.lhs and rhs is clause.rhs:
            return clause
        return Clause(lhs, rhs)

    def visit_pattern(self, pattern):
        """Patterns are rebuilt when a bound variable changes (``visit_var``)."""
        if isinstance(pattern, PatternVar):
            var = self.visit(pattern.var)
            return pattern if var is pattern.var else PatternVar(var, pattern.span)
        if isinstance(pattern, (PatternConstructor, PatternTuple)):
            patterns = [self.visit_pattern(p) for p in pattern.patterns]
            if all(a is b for a, b in zip(patterns, pattern.patterns)):
                return pattern
            if isinstance(pattern, PatternTuple):
                return PatternTuple(patterns, pattern.span)
            return PatternConstructor(pattern.constructor, patterns, pattern.span)
        return pattern

    def visit_ref_create(self, r):
        value = self.visit(r.value)
        return r if value is r.value else RefCreate(value, r.span)

    def visit_ref_read(self, r):
        ref = self.visit(r.ref)
        return r if ref is r.ref else RefRead(ref, r.span)

    def visit_ref_write(self, r):
        ref, value = self.visit(r.ref), self.visit(r.value)
        if ref is r.ref and value is r.value:
            return r
        return RefWrite(ref, value, r.span)
