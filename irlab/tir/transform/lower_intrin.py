"""``tir.LowerIntrin``: operators a C-like target lacks become ones it has.

Integer ``floordiv``/``floormod`` become truncating ``/`` and ``%`` (what C and LLVM provide):
directly when the dividend is provably non-negative and the divisor positive, else with a
``Select`` correcting the rounding toward zero. Float ``floordiv`` becomes ``floor(a / b)``
and float ``floormod`` ``a - floor(a / b) * b``. Math intrinsics (``T.exp``...) are kept: the
targets irlab runs (the interpreter) implement them directly.

Before::

    B[i] = A[floordiv(i - 2, 4)]

After::

    B[i] = A[T.Select(T.truncmod(i - 2, 4) >= 0, T.truncdiv(i - 2, 4),
                      T.truncdiv(i - 2, 4) - 1)]
"""

from __future__ import annotations

from irlab.arith import Analyzer
from irlab.runtime.dtype import parse_dtype
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.tir.buffer import Range
from irlab.tir.functor import StmtExprMutator


def _zero(dtype):
    return E.IntImm(dtype, 0)


class _IntrinLowerer(StmtExprMutator):
    def __init__(self):
        super().__init__()
        self.analyzer = Analyzer(memoize=True)

    def visit_for(self, s):
        # the sign of a dividend often follows from the loop ranges
        self.analyzer.bind(s.loop_var, Range.from_min_extent(s.min, s.extent))
        self.memo_map = {}
        return self._mutate_stmt_children(s)

    def _parts(self, e):
        e = self._mutate_children(e)
        return e, e.a, e.b, parse_dtype(e.dtype)

    def _positive_const(self, b):
        return isinstance(b, E.IntImm) and b.value > 0

    def _same_sign(self, a, b, rmod):
        """True when truncation already rounds down: remainder has the divisor's sign."""
        zero = _zero(a.dtype)
        if self._positive_const(b):
            return E.GE(rmod, zero)
        return E.Or(E.And(E.GE(b, zero), E.GE(rmod, zero)),
                    E.And(E.LT(b, zero), E.LE(rmod, zero)))

    def visit_floor_div(self, e):
        e, a, b, t = self._parts(e)
        if t.is_float:
            return O.floor(E.Div(a, b))
        if t.lanes != 1:
            return e
        if self._positive_const(b) and self.analyzer.can_prove(E.GE(a, _zero(a.dtype))):
            return E.Div(a, b)
        rdiv, rmod = E.Div(a, b), E.Mod(a, b)
        one = E.IntImm(a.dtype, 1)
        return E.Select(self._same_sign(a, b, rmod), rdiv, E.Sub(rdiv, one))

    def visit_floor_mod(self, e):
        e, a, b, t = self._parts(e)
        if t.is_float:
            return E.Sub(a, E.Mul(O.floor(E.Div(a, b)), b))
        if t.lanes != 1:
            return e
        if self._positive_const(b) and self.analyzer.can_prove(E.GE(a, _zero(a.dtype))):
            return E.Mod(a, b)
        rmod = E.Mod(a, b)
        return E.Select(self._same_sign(a, b, rmod), rmod, E.Add(rmod, b))


def lower_intrin(func, mod=None, ctx=None):
    """The function with floor division and modulo in truncating form."""
    return func.with_body(_IntrinLowerer().visit_stmt(func.body))
