"""Integer facts about expressions: constant bounds (``ConstIntBound``) and ``ModularSet``.

Both analyses are small recursive rule tables over PrimExprs (one method per kind),
parameterized by what the analyzer knows about variables (``bounds``: Var -> (lo, hi);
``values``: Var -> PrimExpr).
Bounds are exact Python ints: an unbound variable ranges over its dtype, so no infinities
are needed (TVM uses ``+-inf`` sentinels instead; we clamp to the dtype, which is sound
because a value of that dtype can never leave its range).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from irlab.runtime.dtype import parse_dtype
from irlab.tir import expr as E
from irlab.tir.functor import method_table

POS_INF = (1 << 63) - 1  # TVM's ConstIntBound.POS_INF (int64 max)
NEG_INF = -POS_INF


class ConstIntBound(NamedTuple):
    """All values lie in ``[min_value, max_value]``."""

    min_value: int
    max_value: int

    POS_INF = POS_INF
    NEG_INF = NEG_INF


class ModularSet(NamedTuple):
    """All values are ``coeff * k + base`` for some integer k (``coeff == 0``: exactly base)."""

    coeff: int
    base: int


def dtype_range(dtype):
    """The value range of an integer/bool dtype (int64 range for anything else)."""
    t = parse_dtype(dtype)
    if t.code == "int":
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    if t.code == "uint":
        return 0, (1 << t.bits) - 1
    if t.code == "bool":
        return 0, 1
    return NEG_INF, POS_INF


def is_index_dtype(dtype) -> bool:
    """Scalar int32/int64: the dtypes whose arithmetic the simplifier reasons about with
    mathematical integers (their overflow is undefined, as in TVM: LLVM ``nsw``). int8/int16
    arithmetic wraps, so rewrites that assume no overflow would be wrong there."""
    t = parse_dtype(dtype)
    return t.code == "int" and t.lanes == 1 and t.bits >= 32


def _floordiv(a, b):
    return a // b


def _truncdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _corners(f, a, b):
    vals = [f(x, y) for x in a for y in b]
    return min(vals), max(vals)


def _clamp(lo, hi, dtype):
    dlo, dhi = dtype_range(dtype)
    if lo < dlo or hi > dhi:  # the value may wrap around: anything in the dtype is possible
        return dlo, dhi
    return lo, hi


def const_int_bound(e, bounds, values=None) -> ConstIntBound:
    """Bounds of an integer expression given variable bounds; see the module doc."""
    lo, hi = _Bounds(bounds, values or {}).bound(e)
    return ConstIntBound(lo, hi)


class _Bounds:
    """The interval of each expression, one ``visit_<node>`` rule per kind (found through
    ``tir.functor.method_table``); a kind without a rule ranges over its dtype."""

    def __init__(self, bounds, values):
        self.bounds, self.values, self.memo = bounds, values, {}

    def bound(self, e):
        key = id(e)
        memo = self.memo
        if key in memo:
            return memo[key]
        result = self._uncached(e)
        if hasattr(e, "dtype"):
            result = _clamp(result[0], result[1], e.dtype)
        memo[key] = result
        return result

    def _uncached(self, e):
        dt = getattr(e, "dtype", "int64")
        if not isinstance(e, (E.IntImm, E.Var)) and not is_index_dtype(dt) and \
                parse_dtype(dt).code != "bool":
            return dtype_range(dt)
        rule = method_table(_Bounds)[type(e)]
        return dtype_range(dt) if rule is None else rule(self, e)

    def visit_int_imm(self, e):
        return e.value, e.value

    def visit_var(self, e):
        lo, hi = dtype_range(e.dtype)
        if isinstance(e, E.SizeVar):
            lo = max(lo, 0)
        if e in self.values:
            vlo, vhi = self.bound(self.values[e])
            lo, hi = max(lo, vlo), min(hi, vhi)
        if e in self.bounds:
            blo, bhi = self.bounds[e]
            lo, hi = max(lo, blo), min(hi, bhi)
        return lo, hi

    visit_size_var = visit_var

    def visit_add(self, e):
        (a0, a1), (b0, b1) = self.bound(e.a), self.bound(e.b)
        return a0 + b0, a1 + b1

    def visit_sub(self, e):
        (a0, a1), (b0, b1) = self.bound(e.a), self.bound(e.b)
        return a0 - b1, a1 - b0

    def visit_mul(self, e):
        return _corners(lambda x, y: x * y, self.bound(e.a), self.bound(e.b))

    def visit_floor_div(self, e):
        (a0, a1), (b0, b1) = self.bound(e.a), self.bound(e.b)
        if b0 <= 0 <= b1:  # the divisor may be zero (or change sign): no information
            return dtype_range(e.dtype)
        f = _floordiv if isinstance(e, E.FloorDiv) else _truncdiv
        return _corners(f, (a0, a1), (b0, b1))

    visit_div = visit_floor_div

    def visit_floor_mod(self, e):
        (a0, a1), (b0, b1) = self.bound(e.a), self.bound(e.b)
        if b0 > 0:
            if a0 >= 0 and a1 < b0:  # the modulus never wraps
                return a0, a1
            return 0, (b1 - 1 if a0 < 0 else min(a1, b1 - 1))
        if b1 < 0:
            return b0 + 1, 0
        return dtype_range(e.dtype)

    def visit_mod(self, e):
        (a0, a1), (b0, b1) = self.bound(e.a), self.bound(e.b)
        if b0 <= 0 <= b1:
            return dtype_range(e.dtype)
        m = max(abs(b0), abs(b1)) - 1
        if a0 >= 0:
            return 0, min(a1, m)
        if a1 <= 0:
            return max(a0, -m), 0
        return max(a0, -m), min(a1, m)

    def visit_min(self, e):
        (a0, a1), (b0, b1) = self.bound(e.a), self.bound(e.b)
        return min(a0, b0), min(a1, b1)

    def visit_max(self, e):
        (a0, a1), (b0, b1) = self.bound(e.a), self.bound(e.b)
        return max(a0, b0), max(a1, b1)

    def visit_select(self, e):
        (a0, a1), (b0, b1) = self.bound(e.true_value), self.bound(e.false_value)
        return min(a0, b0), max(a1, b1)

    def visit_cast(self, e):
        if is_index_dtype(e.value.dtype) or parse_dtype(e.value.dtype).code == "bool":
            return self.bound(e.value)  # clamped to the target dtype by the caller
        if parse_dtype(e.value.dtype).code in ("int", "uint"):
            return dtype_range(e.value.dtype)  # a narrow integer: anywhere in its range
        return dtype_range(e.dtype)

    def visit_let(self, e):
        inner = dict(self.values)
        inner[e.var] = e.value
        return _Bounds(self.bounds, inner).bound(e.body)


# -- modular sets ------------------------------------------------------------------------
_EVERYTHING = ModularSet(1, 0)


def _norm(coeff, base):
    coeff = abs(coeff)
    return ModularSet(coeff, base % coeff if coeff else base)


def _union(a, b):
    coeff = math.gcd(a.coeff, b.coeff, abs(a.base - b.base))
    return _norm(coeff, a.base)


def modular_set(e, bounds, values=None) -> ModularSet:
    """The modular set of an integer expression; see the module doc."""
    return _Modular(bounds, values or {}).of(e)


class _Modular:
    """The modular set of each expression, one ``visit_<node>`` rule per kind (found through
    ``tir.functor.method_table``); a kind without a rule may take any value."""

    def __init__(self, bounds, values):
        self.bounds, self.values = bounds, values

    def of(self, e):
        if isinstance(e, E.IntImm):
            return ModularSet(0, e.value)
        if not hasattr(e, "dtype") or not is_index_dtype(e.dtype):
            return _EVERYTHING
        rule = method_table(_Modular)[type(e)]
        return _EVERYTHING if rule is None else rule(self, e)

    def visit_var(self, e):
        if e in self.values:
            return self.of(self.values[e])
        lo, hi = self.bounds.get(e, (0, 1))
        return ModularSet(0, lo) if lo == hi else _EVERYTHING

    visit_size_var = visit_var

    def visit_add(self, e):
        a, b = self.of(e.a), self.of(e.b)
        base = a.base + b.base if isinstance(e, E.Add) else a.base - b.base
        return _norm(math.gcd(a.coeff, b.coeff), base)

    visit_sub = visit_add

    def visit_mul(self, e):
        a, b = self.of(e.a), self.of(e.b)
        # (c1 k + b1)(c2 l + b2) = c1 c2 kl + c1 b2 k + c2 b1 l + b1 b2
        coeff = math.gcd(a.coeff * b.coeff, a.coeff * b.base, b.coeff * a.base)
        return _norm(coeff, a.base * b.base)

    def visit_floor_div(self, e):
        a, b = self.of(e.a), self.of(e.b)
        if b.coeff != 0 or b.base <= 0:
            return _EVERYTHING
        c = b.base
        if isinstance(e, E.FloorDiv):
            # (c*m*k + base) // c == m*k + base // c exactly when c divides the coefficient
            if a.coeff % c == 0:
                return _norm(a.coeff // c, a.base // c)
            return _EVERYTHING
        g = math.gcd(a.coeff, c)  # x mod c keeps x's residue modulo gcd(coeff, c)
        return _norm(g, a.base)

    visit_floor_mod = visit_floor_div

    def visit_min(self, e):
        return _union(self.of(e.a), self.of(e.b))

    visit_max = visit_min

    def visit_select(self, e):
        return _union(self.of(e.true_value), self.of(e.false_value))

    def visit_let(self, e):
        inner = dict(self.values)
        inner[e.var] = e.value
        return _Modular(self.bounds, inner).of(e.body)
