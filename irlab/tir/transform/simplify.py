"""``tir.Simplify``: every expression through the arithmetic Analyzer (with the bounds of the
enclosing loops and the values of Let bindings known); statements whose condition becomes a
constant are resolved.

Before::

    for i in range(4):
        if i < 8:
            B[i * 2 + 1 - 1] = A[floordiv(i, 4)]

After::

    for i in range(4):
        B[i * 2] = A[0]
"""

from __future__ import annotations

import math

from irlab.arith import Analyzer
from irlab.runtime.dtype import parse_dtype
from irlab.tir import expr as E
from irlab.tir.buffer import Range
from irlab.tir.functor import StmtExprMutator
from irlab.tir.transform.common import fold_select, no_op


def _const_bool(e):
    return bool(e.value) if isinstance(e, E.IntImm) else None


def _float_const(e):
    """The value of a float constant or of a vector of one, else None."""
    if isinstance(e, E.Broadcast):
        e = e.value
    return e.value if isinstance(e, E.FloatImm) else None


def _negative_zero(e):
    value = _float_const(e)
    return value == 0 and math.copysign(1.0, value) < 0


class _Simplifier(StmtExprMutator):
    def __init__(self, analyzer=None):
        super().__init__()
        self.analyzer = analyzer or Analyzer(memoize=True)

    def _simplify(self, e):
        # a scalar expression goes to the Analyzer whole, once: it simplifies every
        # sub-expression itself (simplifying each subtree first and then the whole again
        # would cost the square of the depth on deep expressions). Vectors: the Analyzer
        # works on scalars, so their scalar parts (a Ramp's base, loads' indices) go in.
        if parse_dtype(e.dtype).lanes == 1:
            return self.analyzer.simplify(e)
        return self.visit_expr(e)

    def _mutate_value(self, value):
        if isinstance(value, E.PrimExpr):
            return self._simplify(value)
        return super()._mutate_value(value)

    def visit_buffer_load(self, e):
        indices = tuple(self._simplify(i) for i in e.indices)
        if all(a is b for a, b in zip(indices, e.indices)):
            return e
        return E.BufferLoad(e.buffer, indices)

    def visit_select(self, e):
        # a vector select (scalar ones go to the Analyzer whole): a constant condition picks
        # its branch before the other is visited -- a Winograd transform's coefficients are
        # Select chains over the unrolled tile positions, of which one branch stays
        return fold_select(e, self._simplify)

    # vectors (scalars go to the Analyzer): the exact identities x + -0.0 = x and x * 1 = x,
    # which a Winograd transform's dropped terms and unit coefficients leave
    def visit_add(self, e):
        a, b = self._simplify(e.a), self._simplify(e.b)
        if _negative_zero(b):
            return a
        if _negative_zero(a):
            return b
        return e if a is e.a and b is e.b else E.Add(a, b)

    def visit_mul(self, e):
        a, b = self._simplify(e.a), self._simplify(e.b)
        if _float_const(b) == 1:
            return a
        if _float_const(a) == 1:
            return b
        return e if a is e.a and b is e.b else E.Mul(a, b)

    def visit_for(self, s):
        lo, ext = self._simplify(s.min), self._simplify(s.extent)
        self.analyzer.bind(s.loop_var, Range.from_min_extent(lo, ext))
        self.memo_map = {}  # results may now use this loop's range
        body = self.visit_stmt(s.body)
        return s.with_fields(min=lo, extent=ext, body=body)

    def visit_let_stmt(self, s):
        value = self._simplify(s.value)
        self.analyzer.bind(s.var, value)
        self.memo_map = {}
        return s.with_fields(value=value, body=self.visit_stmt(s.body))

    def visit_if_then_else(self, s):
        cond = self._simplify(s.condition)
        known = _const_bool(cond)
        if known is True:
            return self.visit_stmt(s.then_case)
        if known is False:
            return self.visit_stmt(s.else_case) if s.else_case is not None else no_op()
        then_case = self.visit_stmt(s.then_case)
        else_case = self.visit_stmt(s.else_case) if s.else_case is not None else None
        return s.with_fields(condition=cond, then_case=then_case, else_case=else_case)

    def visit_assert_stmt(self, s):
        cond = self._simplify(s.condition)
        if _const_bool(cond) is True:
            return self.visit_stmt(s.body)
        return s.with_fields(condition=cond, body=self.visit_stmt(s.body))

    def visit_block_realize(self, s):
        predicate = self._simplify(s.predicate)
        values = tuple(self._simplify(v) for v in s.iter_values)
        block = s.block
        for iv, value in zip(block.iter_vars, values):
            self.analyzer.bind(iv.var, iv.dom)
        return s.with_fields(iter_values=values, predicate=predicate,
                             block=self.visit_stmt(block))


def simplify(func, mod=None, ctx=None):
    """The function with its expressions simplified and constant branches resolved."""
    return func.with_body(_Simplifier().visit_stmt(func.body))
