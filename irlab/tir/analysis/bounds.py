"""``BoundProver``: proves ``expr <= 0`` from loop ranges and guard conditions.

The verifier asks it whether an index stays inside a buffer's extent (or a block binding
inside its iter domain). It knows

* the range of every enclosing loop / block iter var (constant bounds go to an
  ``arith.Analyzer``; symbolic ones, such as ``range(n)``, are substituted by their extremes);
* the guards on the way to the access (``if``, ``T.where``, ``T.if_then_else``, ``Select``),
  each normalized to facts ``f <= 0``.

``prove_nonpositive(g)`` holds when ``g <= 0`` follows from the ranges alone; or from the
ranges and one fact ``f <= 0`` through ``a * g - b * f <= 0`` (``a, b > 0`` chosen to cancel
a variable); or once the fact bounds a sub-expression of ``g`` (``(i0 * 12 + i1) // 16``
under ``i0 * 12 + i1 < 256``); a ``Select`` in ``g`` is proven case by case. That covers what
schedules and TOPI produce: a split's ``T.where(i0 * 4 + i1 < 30)`` guarding
``A[i0 * 4 + i1]``, a padded conv's ``T.if_then_else(1 <= y + ry and y + ry < 9,
X[y + ry - 1], 0)``, a reflect pad's selects.

Example: loops ``i in [0, 8)`` and ``j in [0, 4)`` with the guard ``i * 4 + j < 30``;
``prove_lt(i * 4 + j, 30)`` subtracts the fact ``i * 4 + j - 29 <= 0`` from the goal
``i * 4 + j - 29 <= 0``, and ``0 <= 0`` holds.
"""

from __future__ import annotations

import math

from irlab.arith import Analyzer, ConstIntBound
from irlab.arith.int_set import is_index_dtype
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.tir.buffer import Range
from irlab.tir.functor import ExprMutator, expr_children, post_order_visit
from irlab.ir import structural_equal


def same_dtype(a, b):
    """``a`` and ``b`` with one index dtype (the wider one)."""
    a, b = E.convert(a), E.convert(b)
    if a.dtype == b.dtype:
        return a, b
    wide = "int64" if "int64" in (a.dtype, b.dtype) else a.dtype
    return O.cast(a, wide), O.cast(b, wide)


def difference(a, b):
    """``a - b`` with the dtypes matched."""
    a, b = same_dtype(a, b)
    return O.subtract(a, b)


def facts_of(cond) -> list:
    """Facts ``f <= 0`` that ``cond`` (a scalar bool) implies; what cannot be used is left
    out (``or``, vector conditions, non-index comparisons)."""
    out = []
    stack = [cond]
    while stack:
        c = stack.pop()
        if isinstance(c, E.Call) and c.op == "tir.likely":
            stack.append(c.args[0])
        elif isinstance(c, E.And):
            stack += [c.a, c.b]
        elif isinstance(c, E.Not):
            out += _negated_facts(c.a)
        elif isinstance(c, (E.LT, E.LE, E.GT, E.GE, E.EQ)):
            out += _comparison_facts(c, negate=False)
    return out


def negated_facts(cond) -> list:
    """Facts ``f <= 0`` that ``not cond`` implies."""
    return _negated_facts(cond)


def _negated_facts(c):
    if isinstance(c, E.Call) and c.op == "tir.likely":
        return _negated_facts(c.args[0])
    if isinstance(c, E.Not):
        return facts_of(c.a)
    if isinstance(c, E.Or):
        return _negated_facts(c.a) + _negated_facts(c.b)
    if isinstance(c, (E.LT, E.LE, E.GT, E.GE)):
        return _comparison_facts(c, negate=True)
    return []


def _comparison_facts(c, negate):
    if not (is_index_dtype(c.a.dtype) and is_index_dtype(c.b.dtype)):
        return []
    a, b = c.a, c.b
    kind = type(c)
    if negate:  # not (a < b) is b <= a, and so on
        kind = {E.LT: E.GE, E.LE: E.GT, E.GT: E.LE, E.GE: E.LT}[kind]
    if kind is E.LT:  # a - b + 1 <= 0
        return [O.add(difference(a, b), 1)]
    if kind is E.LE:
        return [difference(a, b)]
    if kind is E.GT:
        return [O.add(difference(b, a), 1)]
    if kind is E.GE:
        return [difference(b, a)]
    return [difference(a, b), difference(b, a)]  # EQ


def _coefficients(e, scale=1, out=None) -> dict:
    """The integer coefficient of each variable in the linear part of ``e``."""
    out = {} if out is None else out
    if isinstance(e, E.Var):
        out[e] = out.get(e, 0) + scale
    elif isinstance(e, (E.Add, E.Sub)):
        _coefficients(e.a, scale, out)
        _coefficients(e.b, scale if isinstance(e, E.Add) else -scale, out)
    elif isinstance(e, E.Mul) and isinstance(e.b, E.IntImm):
        _coefficients(e.a, scale * e.b.value, out)
    elif isinstance(e, E.Mul) and isinstance(e.a, E.IntImm):
        _coefficients(e.b, scale * e.a.value, out)
    return out


def _multipliers(goal, fact) -> list:
    """``(g, f)`` pairs, (1, 1) first, such that ``g * goal - f * fact`` cancels a variable of
    both (``goal <= 0`` follows from ``g * goal - f * fact <= 0`` and ``fact <= 0``)."""
    out = [(1, 1)]
    goal_coeffs = _coefficients(goal)
    for var, f in _coefficients(fact).items():
        g = goal_coeffs.get(var, 0)
        if g and f and (g > 0) == (f > 0):
            common = math.gcd(g, f)
            pair = (abs(f) // common, abs(g) // common)
            if pair not in out:
                out.append(pair)
    return out[:4]


class _Replace(ExprMutator):
    """Replaces the sub-expressions structurally equal to ``old`` by ``new``."""

    def __init__(self, old, new):
        super().__init__()
        self.old, self.new = old, new

    def visit_expr(self, e):
        if type(e) is type(self.old) and structural_equal(e, self.old):
            return self.new
        return super().visit_expr(e)


def _first_select(e):
    """The outermost ``Select`` (or ``if_then_else``) with an index dtype in ``e``."""
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, E.Select) or (isinstance(node, E.Call)
                                          and node.op == "tir.if_then_else"):
            if is_index_dtype(node.dtype):
                return node
        stack += reversed([c for c in expr_children(node) if isinstance(c, E.PrimExpr)])
    return None


def _vars_of(e) -> list:
    found = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, E.Var) else None)
    return found


class BoundProver:
    """Ranges of the variables met by a walk (``bind_range``/``bind_value``) and the proofs
    of ``g <= 0`` under them."""

    def __init__(self):
        self.analyzer = Analyzer()
        self.ranges = {}  # Var -> (min, extent), for the symbolic extremes
        self.values = {}  # Var -> the expression a Let binds it to

    def bind_range(self, var, min_value, extent):
        """``var`` ranges over ``[min_value, min_value + extent)``. A TIR variable is bound
        once (a loop, a block), so the fact is never withdrawn."""
        self.ranges[var] = (min_value, extent)
        if isinstance(min_value, E.IntImm) and isinstance(extent, E.IntImm):
            if extent.value >= 1:
                self.analyzer.update(var, ConstIntBound(
                    min_value.value, min_value.value + extent.value - 1))
            return
        self.analyzer.bind(var, Range.from_min_extent(min_value, extent))

    def bind_value(self, var, value):
        """``var`` equals ``value`` (a Let)."""
        if is_index_dtype(var.dtype):
            self.values[var] = value
            self.analyzer.bind(var, value)

    # -- proofs -----------------------------------------------------------------------------
    def prove_nonpositive(self, goal, facts=(), splits=4) -> bool:
        """``goal <= 0`` for every value of the variables in scope under ``facts``; a
        ``Select`` in the goal is split into its two cases (at most ``splits`` deep)."""
        if self._nonpositive(goal):
            return True
        select = _first_select(goal) if splits else None
        if select is not None:
            return self._prove_cases(goal, facts, select, splits - 1)
        for fact in facts:
            for g_scale, f_scale in _multipliers(goal, fact):
                combined = difference(O.multiply(goal, g_scale), O.multiply(fact, f_scale))
                if self._nonpositive(combined):
                    return True
        return any(self._bounded_by(goal, f) for f in facts)

    def _prove_cases(self, goal, facts, select, splits) -> bool:
        if isinstance(select, E.Select):
            cond, cases = select.condition, (select.true_value, select.false_value)
        else:
            cond, cases = select.args[0], select.args[1:]
        for case, implied in zip(cases, (facts_of(cond), negated_facts(cond))):
            replace = _Replace(select, case).visit_expr
            case_facts = [replace(f) for f in facts] + [replace(f) for f in implied]
            if not self.prove_nonpositive(replace(goal), case_facts, splits):
                return False
        return True

    def _bounded_by(self, goal, fact) -> bool:
        """``goal <= 0`` once the fact ``e - c <= 0`` bounds every occurrence of ``e`` in the
        goal by ``c`` (a split of a fused loop: ``(i0 * 12 + i1) // 16 < 16`` under
        ``i0 * 12 + i1 < 256``)."""
        fact = self.analyzer.simplify(fact)
        if isinstance(fact, E.Add) and isinstance(fact.b, E.IntImm):
            part, limit = fact.a, -fact.b.value
        elif isinstance(fact, E.Sub) and isinstance(fact.b, E.IntImm):
            part, limit = fact.a, fact.b.value
        else:
            return False
        if isinstance(part, (E.Var, E.IntImm)):
            return False
        stand_in = E.Var("bounded", part.dtype)
        replaced = _Replace(part, stand_in).visit_expr(self.analyzer.simplify(goal))
        if not any(v is stand_in for v in _vars_of(replaced)):
            return False
        low = self.analyzer.const_int_bound(part).min_value
        with self.analyzer.binding(stand_in, Range(low, limit + 1)):
            return self._nonpositive(replaced)

    def prove_lt(self, a, b, facts=()) -> bool:
        """``a < b``."""
        return self.prove_nonpositive(O.add(difference(a, b), 1), facts)

    def prove_le(self, a, b, facts=()) -> bool:
        """``a <= b``."""
        return self.prove_nonpositive(difference(a, b), facts)

    def _nonpositive(self, goal) -> bool:
        simple = self.analyzer.simplify(goal)
        if isinstance(simple, E.IntImm):
            return simple.value <= 0
        if self.analyzer.const_int_bound(simple).max_value <= 0:
            return True
        upper = self.extreme(simple, upper=True)
        if upper is None:
            return False
        upper = self.analyzer.simplify(upper)
        return self.analyzer.const_int_bound(upper).max_value <= 0

    def extreme(self, e, upper, depth=0):
        """A symbolic upper (or lower) bound of ``e`` over the ranges in scope, or None."""
        if depth > 64:
            return None
        if isinstance(e, (E.IntImm, E.SizeVar)) or (
                isinstance(e, E.Var) and e not in self.ranges and e not in self.values):
            return e
        if isinstance(e, E.Var):
            if e in self.values:
                return self.extreme(self.values[e], upper, depth + 1)
            lo, ext = self.ranges[e]
            bound = O.add(lo, O.subtract(ext, 1)) if upper else lo
            return self.extreme(bound, upper, depth + 1)
        return self._extreme_op(e, upper, depth + 1)

    def _extreme_op(self, e, upper, depth):
        ext = self.extreme
        if isinstance(e, (E.Add, E.Sub)):
            a = ext(e.a, upper, depth)
            b = ext(e.b, upper if isinstance(e, E.Add) else not upper, depth)
            if a is None or b is None:
                return None
            return O.add(a, b) if isinstance(e, E.Add) else O.subtract(a, b)
        if isinstance(e, E.Mul) and isinstance(e.b, E.IntImm):
            a = ext(e.a, upper if e.b.value >= 0 else not upper, depth)
            return None if a is None else O.multiply(a, e.b)
        if isinstance(e, E.Mul) and isinstance(e.a, E.IntImm):
            return self._extreme_op(E.Mul(e.b, e.a), upper, depth)
        if isinstance(e, (E.FloorDiv, E.Div)) and isinstance(e.b, E.IntImm) and e.b.value > 0:
            a = ext(e.a, upper, depth)  # both divisions are monotone in the dividend
            if a is None:
                return None
            return O.floordiv(a, e.b) if isinstance(e, E.FloorDiv) else O.truncdiv(a, e.b)
        if isinstance(e, E.FloorMod) and isinstance(e.b, E.IntImm) and e.b.value > 0:
            return E.IntImm(e.dtype, e.b.value - 1 if upper else 0)
        if isinstance(e, (E.Min, E.Max)):
            a, b = ext(e.a, upper, depth), ext(e.b, upper, depth)
            if a is None or b is None:
                return None
            return O.min(a, b) if isinstance(e, E.Min) else O.max(a, b)
        if isinstance(e, E.Cast) and is_index_dtype(e.value.dtype):
            a = ext(e.value, upper, depth)
            return None if a is None else O.cast(a, e.dtype)
        return None


__all__ = ["BoundProver", "facts_of", "negated_facts", "difference", "same_dtype"]
