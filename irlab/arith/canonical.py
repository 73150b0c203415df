"""Canonical form of integer index expressions: ``sum(coeff * term) + const``.

An index expression is read as a ``Linear`` form: a constant plus coefficients on *terms*
(variables and anything non-affine: ``floordiv(y, c)``, ``floormod(y, c)``, ``x * y``,
``min``...). Like terms merge, constants fold, and divisions by positive constants move the
parts they can out of the division, using variable bounds:

    floordiv(i_0 * 4 + i_1, 4)  =>  i_0 + floordiv(i_1, 4)  =>  i_0      (0 <= i_1 < 4)
    floormod(i_0 * 4 + i_1, 4)  =>  floormod(i_1, 4)        =>  i_1
    floordiv(f, 8) * 8 + floormod(f, 8)  =>  f

Comparisons of index expressions become ``terms < terms + const`` (or are decided by
bounds). Every step that changes the shape of an expression reports a readable rule name
through ``fired`` so that ``Analyzer.rules_fired`` shows what happened.
"""

from __future__ import annotations

import math

from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.tir.functor import DEEP, ExprMutator, child_fields, post_order_below
from irlab.arith.int_set import is_index_dtype

# Node class -> the op builder, so that rebuilt nodes get the builders' constant folding.
_BUILD = {E.Add: O.add, E.Sub: O.subtract, E.Mul: O.multiply, E.Div: O.div, E.Mod: O.truncmod,
          E.FloorDiv: O.floordiv, E.FloorMod: O.floormod, E.Min: O.min, E.Max: O.max,
          E.EQ: O.equal, E.NE: O.not_equal, E.LT: O.less, E.LE: O.less_equal,
          E.GT: O.greater, E.GE: O.greater_equal, E.And: O.logical_and, E.Or: O.logical_or}
_NEGATE = {E.LT: E.GE, E.LE: E.GT, E.GT: E.LE, E.GE: E.LT, E.EQ: E.NE, E.NE: E.EQ}


class Linear:
    """``sum(coeff * term) + const`` in one dtype; ``terms`` maps a term key to [expr, coeff]."""

    __slots__ = ("dtype", "terms", "const")

    def __init__(self, dtype, terms=None, const=0):
        self.dtype, self.terms, self.const = dtype, dict(terms or {}), const

    def copy(self):
        return Linear(self.dtype, {k: list(v) for k, v in self.terms.items()}, self.const)

    def add(self, other, scale=1):
        out = self.copy()
        out.const += scale * other.const
        for key, (term, coeff) in other.terms.items():
            if key in out.terms:
                out.terms[key][1] += scale * coeff
                if out.terms[key][1] == 0:
                    del out.terms[key]
            else:
                out.terms[key] = [term, scale * coeff]
        return out

    def scale(self, c):
        if c == 0:
            return Linear(self.dtype, {}, 0)
        return Linear(self.dtype, {k: [t, q * c] for k, (t, q) in self.terms.items()},
                      self.const * c)

    def is_const(self):
        return not self.terms


class Canonicalizer(ExprMutator):
    """One canonical-simplification run; ``analyzer`` supplies bounds, ``fired`` takes names."""

    def __init__(self, analyzer, fired):
        super().__init__()
        self.analyzer, self.fired = analyzer, fired
        self._keys = {}
        self._lin = {}

    # -- entry points --------------------------------------------------------------------
    def visit_expr(self, e):
        memo = self.memo_map
        if e in memo:
            return memo[e]
        self._enter(e)
        try:
            if isinstance(e, E.PrimExpr) and is_index_dtype(e.dtype):
                result = self.to_expr(self.linear(e))
            else:
                result = self._other(e)
        finally:
            self._depth -= 1
        memo[e] = result
        return result

    def linear(self, e) -> Linear:
        """The Linear form of an index expression (memoized by identity)."""
        lin = self._lin.get(e)
        if lin is None:
            self._enter(e)
            try:
                lin = self._linear(e)
            finally:
                self._depth -= 1
            self._lin[e] = lin
        return lin

    def _enter(self, e):
        """One level deeper; past ``DEEP`` levels, the sub-expressions of ``e`` are done
        first, children before parents, so that the recursion on ``e`` stops at them."""
        depth = self._depth
        if depth > DEEP:
            self._depth = 0
            for node in post_order_below(e, self.memo_map):
                if isinstance(node, E.PrimExpr) and is_index_dtype(node.dtype):
                    self.linear(node)
                else:
                    self.visit_expr(node)
        self._depth = depth + 1

    def to_expr(self, lin: Linear):
        lin = self._merge_divmod(lin)
        terms = sorted(lin.terms.values(), key=lambda tc: tc[1] < 0)  # positives first
        acc = None
        for term, coeff in terms:
            if acc is None:
                acc = term if coeff == 1 else O.multiply(term, O.const(coeff, lin.dtype))
            elif coeff > 0:
                acc = O.add(acc, term if coeff == 1 else O.multiply(term, coeff))
            else:
                acc = O.subtract(acc, term if coeff == -1 else O.multiply(term, -coeff))
        const = O._wrap(lin.const, lin.dtype)  # an overflowing program must still build
        if acc is None:
            return O.const(const, lin.dtype)
        if const > 0:
            return O.add(acc, O.const(const, lin.dtype))
        if const < 0:
            return O.subtract(acc, O.const(O._wrap(-const, lin.dtype), lin.dtype))
        return acc

    # -- helpers ---------------------------------------------------------------------------
    def key(self, e):
        """A structural key: equal keys mean the same expression (variables by identity)."""
        k = self._keys.get(e)
        if k is not None:
            return k
        if isinstance(e, (E.IntImm, E.FloatImm, E.StringImm)):
            k = ("c", type(e).__name__, getattr(e, "dtype", None), e.value)
        elif isinstance(e, E.Var):
            k = ("v", id(e))
        else:
            parts = [type(e).__name__, e.dtype, getattr(e, "op", None),
                     id(getattr(e, "buffer", None)), getattr(e, "lanes", None)]
            if isinstance(e, E.Let):
                parts.append(id(e.var))
            for name in child_fields(type(e)):
                value = getattr(e, name)
                if isinstance(value, tuple):
                    parts.append(tuple(self.key(v) if isinstance(v, E.PrimExpr) else v
                                       for v in value))
                elif isinstance(value, E.PrimExpr):
                    parts.append(self.key(value))
            k = tuple(parts)
        self._keys[e] = k
        return k

    def atom(self, e) -> Linear:
        if isinstance(e, E.IntImm):
            return Linear(e.dtype, {}, e.value)
        return Linear(e.dtype, {self.key(e): [e, 1]}, 0)

    def bound(self, lin: Linear):
        lo = hi = lin.const
        for term, coeff in lin.terms.values():
            b = self.analyzer.const_int_bound(term)
            a, z = coeff * b.min_value, coeff * b.max_value
            lo, hi = lo + min(a, z), hi + max(a, z)
        return lo, hi

    def _merge_divmod(self, lin):
        """``floordiv(x, c) * (k * c) + floormod(x, c) * k => x * k``."""
        for key, (term, coeff) in list(lin.terms.items()):
            if not isinstance(term, E.FloorMod) or not isinstance(term.b, E.IntImm) \
                    or key not in lin.terms:
                continue
            c = term.b.value
            div_key = self.key(E.FloorDiv(term.a, term.b))
            if lin.terms.get(div_key, [None, None])[1] == coeff * c:
                self.fired("floordiv(x, c1) * c1 + floormod(x, c1) => x")
                rest = Linear(lin.dtype, {k: v for k, v in lin.terms.items()
                                          if k not in (key, div_key)}, lin.const)
                return self._merge_divmod(rest.add(self.linear(term.a), coeff))
        return lin

    # -- index expressions -------------------------------------------------------------------
    def _linear(self, e) -> Linear:
        dt = e.dtype
        if isinstance(e, E.IntImm):
            return Linear(dt, {}, e.value)
        if isinstance(e, E.Var):
            value = self.analyzer._values.get(e)
            return self.linear(value) if value is not None else self.atom(e)
        if isinstance(e, (E.Add, E.Sub)):
            a, b = self.linear(e.a), self.linear(e.b)
            out = a.add(b, 1 if isinstance(e, E.Add) else -1)
            if len(out.terms) < len(a.terms) + len(b.terms):
                self.fired("x * c1 + x * c2 => x * (c1 + c2)")
            return out
        if isinstance(e, E.Mul):
            a, b = self.linear(e.a), self.linear(e.b)
            if b.is_const():
                return a.scale(b.const)
            if a.is_const():
                return b.scale(a.const)
            return self.atom(O.multiply(self.to_expr(a), self.to_expr(b)))
        if isinstance(e, (E.FloorDiv, E.FloorMod, E.Div, E.Mod)):
            return self._division(e)
        if isinstance(e, (E.Min, E.Max)):
            return self._minmax(e)
        if isinstance(e, E.Select):
            return self.atom_or_const(self._select(e))
        if isinstance(e, E.Cast):
            value = self.visit_expr(e.value)
            return self.atom_or_const(O.cast(value, dt))
        return self.atom(self._other(e))

    def atom_or_const(self, e):
        return self.linear(e) if isinstance(e, E.IntImm) else self.atom(e)

    def _division(self, e):
        a, b = self.linear(e.a), self.linear(e.b)
        floor = isinstance(e, (E.FloorDiv, E.FloorMod))
        if b.is_const() and b.const > 0 and not floor and self.bound(a)[0] >= 0:
            floor = True  # truncating and flooring division agree on non-negative numerators
            self.fired("truncdiv(x, c1) => floordiv(x, c1) when 0 <= x")
        if b.is_const() and b.const > 0 and floor:
            if isinstance(e, (E.FloorDiv, E.Div)):
                return self._floordiv(a, b.const)
            return self._floormod(a, b.const)
        return self.atom_or_const(_BUILD[type(e)](self.to_expr(a), self.to_expr(b)))

    def _single_term(self, lin, node_cls):
        """The ``y, c0`` of a form that is exactly ``node_cls(y, c0)`` with constant c0 > 0."""
        if lin.const == 0 and len(lin.terms) == 1:
            term, coeff = next(iter(lin.terms.values()))
            if coeff == 1 and isinstance(term, node_cls) and isinstance(term.b, E.IntImm):
                if term.b.value > 0:
                    return term.a, term.b.value
        return None

    def _floordiv(self, a: Linear, c: int) -> Linear:
        if a.is_const():
            return Linear(a.dtype, {}, a.const // c)
        nested = self._single_term(a, E.FloorDiv)
        if nested is not None:
            self.fired("floordiv(floordiv(x, c1), c2) => floordiv(x, c1 * c2)")
            return self._floordiv(self.linear(nested[0]), nested[1] * c)
        out = Linear(a.dtype)
        rest = Linear(a.dtype, {}, a.const)
        for key, (term, coeff) in a.terms.items():
            if coeff % c == 0:
                out.terms[key] = [term, coeff // c]
            else:
                rest.terms[key] = [term, coeff]
        if out.terms:
            self.fired("floordiv(x * c1 + y, c1) => x + floordiv(y, c1)")
        lo, hi = self.bound(rest)
        if lo // c == hi // c:
            self.fired("floordiv(y, c1) => k when k * c1 <= y < (k + 1) * c1")
            out.const += lo // c
            return out
        g = math.gcd(c, rest.const, *(coeff for _, coeff in rest.terms.values()))
        if g > 1:  # floordiv(g * y, g * c) == floordiv(y, c)
            self.fired("floordiv(x * c1, c2 * c1) => floordiv(x, c2)")
            rest, c = self._divide_exact(rest, g), c // g
        if rest.const % c == 0:
            out.const += rest.const // c
            rest.const = 0
        node = E.FloorDiv(self.to_expr(rest), O.const(c, a.dtype))
        return out.add(self.atom(node))

    def _floormod(self, a: Linear, c: int) -> Linear:
        if a.is_const():
            return Linear(a.dtype, {}, a.const % c)
        nested = self._single_term(a, E.FloorMod)
        if nested is not None and nested[1] % c == 0:
            self.fired("floormod(floormod(x, c1), c2) => floormod(x, c2) when c1 % c2 == 0")
            return self._floormod(self.linear(nested[0]), c)
        rest = Linear(a.dtype, {k: v for k, v in a.terms.items() if v[1] % c}, a.const % c)
        if len(rest.terms) < len(a.terms):
            self.fired("floormod(x * c1 + y, c1) => floormod(y, c1)")
        if rest.is_const():
            return rest
        lo, hi = self.bound(rest)
        if lo // c == hi // c:
            self.fired("floormod(y, c1) => y - k * c1 when k * c1 <= y < (k + 1) * c1")
            rest.const -= (lo // c) * c
            return rest
        g = math.gcd(c, rest.const, *(coeff for _, coeff in rest.terms.values()))
        if g > 1:  # floormod(g * y, g * c) == g * floormod(y, c)
            self.fired("floormod(x * c1, c2 * c1) => floormod(x, c2) * c1")
            rest = self._divide_exact(rest, g)
            node = E.FloorMod(self.to_expr(rest), O.const(c // g, a.dtype))
            return self.atom(node).scale(g)
        return self.atom(E.FloorMod(self.to_expr(rest), O.const(c, a.dtype)))

    @staticmethod
    def _divide_exact(lin, g):
        return Linear(lin.dtype, {k: [t, q // g] for k, (t, q) in lin.terms.items()},
                      lin.const // g)

    def _minmax(self, e):
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        lo, hi = self.bound(self.linear(a).add(self.linear(b), -1))
        is_min = isinstance(e, E.Min)
        if hi <= 0:
            self.fired("min(x, y) => x when x <= y" if is_min else "max(x, y) => y when x <= y")
            return self.linear(a if is_min else b)
        if lo >= 0:
            self.fired("min(x, y) => y when y <= x" if is_min else "max(x, y) => x when y <= x")
            return self.linear(b if is_min else a)
        return self.atom_or_const(_BUILD[type(e)](a, b))

    # -- everything else (conditions, floats, loads, calls) ---------------------------------
    def _select(self, e):
        cond = self.visit_expr(e.condition)
        if isinstance(cond, E.IntImm):
            self.fired("select(True, x, y) => x" if cond.value else "select(False, x, y) => y")
            return self.visit_expr(e.true_value if cond.value else e.false_value)
        t, f = self.visit_expr(e.true_value), self.visit_expr(e.false_value)
        if self.key(t) == self.key(f):
            self.fired("select(c, x, x) => x")
            return t
        return E.Select(cond, t, f)

    def _other(self, e):
        cls = type(e)
        if cls in _NEGATE and is_index_dtype(e.a.dtype):
            return self._compare(cls, e.a, e.b)
        if isinstance(e, E.Not):
            a = self.visit_expr(e.a)
            if type(a) in _NEGATE:
                self.fired("not (x < y) => y <= x")
                return self._other(_NEGATE[type(a)](a.a, a.b))
            if isinstance(a, E.Not):
                self.fired("not not x => x")
                return a.a
            return O.logical_not(a)
        if isinstance(e, (E.And, E.Or)):
            a, b = self.visit_expr(e.a), self.visit_expr(e.b)
            if self.key(a) == self.key(b):
                self.fired("x and x => x" if isinstance(e, E.And) else "x or x => x")
                return a
            return _BUILD[cls](a, b)
        if isinstance(e, E.Select):
            return self._select(e)
        if isinstance(e, E.Cast):
            return O.cast(self.visit_expr(e.value), e.dtype)
        if isinstance(e, E.Let):
            value = self.visit_expr(e.value)
            with self.analyzer.binding(e.var, value):
                body = self.visit_expr(e.body)
            return e if value is e.value and body is e.body else E.Let(e.var, value, body)
        new = self._mutate_children(e)
        if cls in _BUILD:  # float / vector arithmetic: refold through the op builders
            return _BUILD[cls](new.a, new.b)
        return new

    def _compare(self, cls, a, b):
        """Decide ``a cls b`` by bounds, or normalize it to ``terms < terms + const``."""
        la, lb = self.linear(self.visit_expr(a)), self.linear(self.visit_expr(b))
        if cls in (E.GT, E.GE):  # a > b  <=>  b < a
            la, lb, cls = lb, la, (E.LT if cls is E.GT else E.LE)
        diff = la.add(lb, -1)
        if cls is E.LE:  # diff <= 0  <=>  diff - 1 < 0 on integers
            diff.const -= 1
            cls = E.LT
        lo, hi = self.bound(diff)
        verdict = None
        if cls is E.LT:
            verdict = True if hi < 0 else False if lo >= 0 else None
        elif lo == hi == 0 or lo > 0 or hi < 0:
            verdict = (lo == hi == 0) == (cls is E.EQ)
        if verdict is not None:
            self.fired(f"x {_SYMBOL[cls]} y => {verdict} by bounds")
            return O.const(verdict, "bool")
        g = math.gcd(*(coeff for _, coeff in diff.terms.values()))
        if cls is not E.LT and diff.const % g:
            self.fired("x * c1 == c2 => False when c2 % c1 != 0")
            return O.const(cls is E.NE, "bool")
        # T + K < 0 with T = g * (P - N)  <=>  P < N + B  with  B = -floor(K / g)  (integers)
        bound = -(diff.const // g)
        pos = Linear(diff.dtype, {k: [t, q // g] for k, (t, q) in diff.terms.items() if q > 0})
        neg = Linear(diff.dtype, {k: [t, -q // g] for k, (t, q) in diff.terms.items() if q < 0})
        if not pos.terms:  # -N < B  <=>  N > -B
            rhs = O.const(-bound, diff.dtype)
            return (E.GT if cls is E.LT else cls)(self.to_expr(neg), rhs)
        neg.const = bound
        return cls(self.to_expr(pos), self.to_expr(neg))

_SYMBOL = {E.LT: "<", E.EQ: "==", E.NE: "!="}
