"""``tir.VectorizeLoop``: a ``T.vectorized`` loop becomes one vector statement: the loop
variable becomes ``T.Ramp(min, 1, lanes)``, scalars meeting vectors are broadcast.

A body that cannot be expressed on vectors (inner loops, stores to a location not indexed by
the loop, branches on the lane, lets, non-elementwise calls, a non-constant extent) keeps a
scalar loop: the loop becomes serial, as TVM's scalarizing fallback gives the same values.
``VectorizeLoop(enable=False)`` (config ``tir.disable_vectorize``) makes every vectorized loop
serial.

Before::

    for j in T.vectorized(4):
        B[j] = A[j] * T.float32(2)

After::

    B[T.Ramp(0, 1, 4)] = A[T.Ramp(0, 1, 4)] * T.Broadcast(T.float32(2), 4)
"""

from __future__ import annotations

from irlab.runtime.dtype import parse_dtype
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.functor import (DEEP, StmtMutator, method_table, post_order_below, substitute,
                               visit_name)
from irlab.tir.intrinsics import INTRINSICS
from irlab.tir.transform.common import const_int, is_no_op

_BINARY = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max, E.EQ, E.NE,
           E.LT, E.LE, E.GT, E.GE)


class _NotVectorizable(Exception):
    """The body needs the scalar fallback."""


def _lanes(e):
    return parse_dtype(e.dtype).lanes


def _widen(e, lanes):
    """``e`` as a ``lanes``-wide vector (scalars are broadcast)."""
    n = _lanes(e)
    if n == lanes:
        return e
    if n == 1:
        return E.Broadcast(e, lanes)
    raise _NotVectorizable




class _IdKeys:
    """``node in _IdKeys(memo)``: whether a memo keyed by ``id`` holds the node."""

    def __init__(self, memo):
        self.memo = memo

    def __contains__(self, node):
        return id(node) in self.memo


class _Vectorizer:
    """Rewrites the body of one vectorized loop; raises _NotVectorizable to fall back."""

    def __init__(self, var, ramp):
        self.var, self.ramp, self.lanes = var, ramp, ramp.lanes
        self.memo: dict = {}  # id(e) -> (e, result): a shared sub-expression is done once
        self.depth = 0

    # -- expressions ---------------------------------------------------------------------
    def expr(self, e):
        hit = self.memo.get(id(e))
        if hit is not None:
            return hit[1]
        if self.depth > DEEP:  # deep: what is below first, so that recursion stops there
            saved, self.depth = self.depth, 0
            try:
                for node in post_order_below(e, _IdKeys(self.memo)):
                    self.expr(node)
            finally:
                self.depth = saved
        self.depth += 1
        try:
            out = self._expr(e)
        finally:
            self.depth -= 1
        self.memo[id(e)] = (e, out)
        return out

    def _expr(self, e):
        """By the ``visit_<node>`` rules (``tir.functor.method_table``); a kind without one
        (Let, Shuffle, vectors already there) is not vectorized."""
        if e is self.var:
            return self.ramp
        rule = method_table(_Vectorizer)[type(e)]
        if rule is None:
            raise _NotVectorizable
        return rule(self, e)

    def _visit_leaf(self, e):
        return e

    visit_var = visit_size_var = visit_int_imm = visit_float_imm = visit_string_imm = _visit_leaf

    def _visit_binary(self, e):
        a, b = self.expr(e.a), self.expr(e.b)
        if a is e.a and b is e.b:
            return e
        # keep ramps (contiguous accesses) where the arithmetic allows it
        if isinstance(e, (E.Add, E.Sub)) and isinstance(a, E.Ramp) and _lanes(b) == 1:
            return E.Ramp(type(e)(a.base, b), a.stride, a.lanes)
        if isinstance(e, E.Add) and isinstance(b, E.Ramp) and _lanes(a) == 1:
            return E.Ramp(E.Add(a, b.base), b.stride, b.lanes)
        if isinstance(e, E.Mul) and isinstance(a, E.Ramp) and _lanes(b) == 1:
            return E.Ramp(E.Mul(a.base, b), E.Mul(a.stride, b), a.lanes)
        if isinstance(e, E.Mul) and isinstance(b, E.Ramp) and _lanes(a) == 1:
            return E.Ramp(E.Mul(a, b.base), E.Mul(a, b.stride), b.lanes)
        n = max(_lanes(a), _lanes(b))
        return type(e)(_widen(a, n), _widen(b, n))

    def _visit_logical(self, e):
        a, b = self.expr(e.a), self.expr(e.b)
        if a is e.a and b is e.b:
            return e
        n = max(_lanes(a), _lanes(b))
        return type(e)(_widen(a, n), _widen(b, n))

    visit_and = visit_or = _visit_logical

    def visit_not(self, e):
        a = self.expr(e.a)
        return e if a is e.a else E.Not(a)

    def visit_cast(self, e):
        v = self.expr(e.value)
        if v is e.value:
            return e
        return E.Cast(str(parse_dtype(e.dtype).with_lanes(_lanes(v))), v)

    def visit_select(self, e):
        parts = [self.expr(x) for x in (e.condition, e.true_value, e.false_value)]
        if all(a is b for a, b in zip(parts, (e.condition, e.true_value, e.false_value))):
            return e
        n = max(_lanes(p) for p in parts)
        return E.Select(*[_widen(p, n) for p in parts])

    def visit_buffer_load(self, e):
        indices = [self.expr(i) for i in e.indices]
        if all(a is b for a, b in zip(indices, e.indices)):
            return e
        n = max(_lanes(i) for i in indices)
        return E.BufferLoad(e.buffer, [_widen(i, n) for i in indices])

    def visit_call(self, e):
        """An ``elementwise`` intrinsic (``irlab.tir.intrinsics``) computes each lane as the
        scalar call would; a ``conditional`` one (``if_then_else``) keeps its condition
        scalar: a lane-wise condition would need both branches evaluated on every lane (an
        out-of-bounds load in the untaken one), so such a call stays scalar."""
        record = INTRINSICS.get(e.op)
        if record is None or not record.elementwise:
            raise _NotVectorizable
        args = [self.expr(a) for a in e.args]
        if record.conditional and _lanes(args[0]) != 1:
            raise _NotVectorizable
        if all(a is b for a, b in zip(args, e.args)):
            return e
        n = max(_lanes(a) for a in args)
        dtype = str(parse_dtype(e.dtype).with_lanes(n))
        if record.conditional:  # the condition stays scalar (one branch taken)
            return E.Call(dtype, e.op, [args[0]] + [_widen(a, n) for a in args[1:]])
        return E.Call(dtype, e.op, [_widen(a, n) for a in args])

    # -- statements ----------------------------------------------------------------------
    def stmt(self, s):
        """By the ``visit_<node>`` rules; any other statement must be a no-op."""
        rule = method_table(_Vectorizer)[type(s)]
        if rule is not None:
            return rule(self, s)
        if is_no_op(s):
            return s
        raise _NotVectorizable

    def visit_buffer_store(self, s):
        indices = [self.expr(i) for i in s.indices]
        if all(_lanes(i) == 1 for i in indices):
            # the same location every lane: sequential semantics differ from one store
            raise _NotVectorizable
        value = self.expr(s.value)
        n = max(_lanes(i) for i in indices)
        return S.BufferStore(s.buffer, _widen(value, n), [_widen(i, n) for i in indices])

    def visit_seq_stmt(self, s):
        return S.SeqStmt([self.stmt(x) for x in s.seq])

    def visit_if_then_else(self, s):
        cond = self.expr(s.condition)
        if _lanes(cond) != 1:
            raise _NotVectorizable  # a per-lane branch
        else_case = self.stmt(s.else_case) if s.else_case is not None else None
        return S.IfThenElse(cond, self.stmt(s.then_case), else_case)

    def visit_attr_stmt(self, s):
        return s.with_fields(body=self.stmt(s.body))

    visit_decl_buffer = visit_attr_stmt


for _kind in _BINARY:
    setattr(_Vectorizer, visit_name(_kind), _Vectorizer._visit_binary)


class _LoopVectorizer(StmtMutator):
    def __init__(self, enable):
        super().__init__()
        self.enable = enable

    def visit_for(self, s):
        s = self._mutate_stmt_children(s)  # inner loops first
        if s.kind != S.ForKind.VECTORIZED:
            return s
        serial = s.with_fields(kind=S.ForKind.SERIAL)
        lanes, lo = const_int(s.extent), s.min
        if not self.enable or lanes is None:
            return serial
        if lanes == 1:  # one lane: the body with the variable at its only value
            return substitute(s.body, {s.loop_var: lo})
        if lanes < 1:
            return serial
        ramp = E.Ramp(lo, E.IntImm(lo.dtype, 1), lanes)
        try:
            return _Vectorizer(s.loop_var, ramp).stmt(s.body)
        except _NotVectorizable:
            return serial


def vectorize_loop(func, mod=None, ctx=None, enable=True):
    """The function with its vectorized loops turned into vector statements."""
    return func.with_body(_LoopVectorizer(enable).visit_stmt(func.body))
