"""``Analyzer``: what is known about variables, and the simplifier that uses it.

``simplify`` runs the rule rewriter, then the canonical (linear-form) simplifier, then the
rules again -- TVM's default pipeline. The names of the rules that fired during the last
``simplify`` call are in ``analyzer.rules_fired`` (or returned with ``trace=True``).
"""

from __future__ import annotations

import contextlib

from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.tir.buffer import Range
from irlab.arith import int_set
from irlab.arith.canonical import Canonicalizer
from irlab.arith.int_set import ConstIntBound, ModularSet
from irlab.arith.rewrite_rules import rewrite


class Analyzer:
    """Facts about variables (bounds, values) and the analyses and simplifier using them."""

    def __init__(self):
        self._bounds = {}  # Var -> (lo, hi)
        self._values = {}  # Var -> PrimExpr it equals
        self.rules_fired: list[str] = []

    # -- facts ---------------------------------------------------------------------------
    def bind(self, var, value, allow_override=False):
        """Bind ``var`` to a ``Range`` (its iteration domain) or to an expression it equals."""
        # a new binding replaces the old fact (TVM's allow_override); kept for API parity
        self._bounds.pop(var, None)
        self._values.pop(var, None)
        if isinstance(value, Range):
            lo = self.const_int_bound(value.min)
            ext = self.const_int_bound(value.extent)
            if ext.max_value >= 1:
                self._bounds[var] = (lo.min_value, lo.max_value + ext.max_value - 1)
            return
        value = E.convert(value)
        if isinstance(value, E.IntImm):
            self._bounds[var] = (value.value, value.value)
        else:
            self._values[var] = value

    def update(self, var, bound: ConstIntBound):
        """Record ``min_value <= var <= max_value``."""
        self._bounds[var] = (bound.min_value, bound.max_value)

    @contextlib.contextmanager
    def binding(self, var, value):
        """Bind ``var`` to ``value`` for the duration of a ``with`` block (a Let's body)."""
        saved = self._bounds.pop(var, None), self._values.pop(var, None)
        self.bind(var, value)
        try:
            yield
        finally:
            self._bounds.pop(var, None)
            self._values.pop(var, None)
            if saved[0] is not None:
                self._bounds[var] = saved[0]
            if saved[1] is not None:
                self._values[var] = saved[1]

    # -- analyses ------------------------------------------------------------------------
    def const_int_bound(self, expr) -> ConstIntBound:
        """Constant bounds of an integer expression."""
        return int_set.const_int_bound(E.convert(expr), self._bounds, self._values)

    def modular_set(self, expr) -> ModularSet:
        """``ModularSet(coeff, base)``: every value is ``coeff * k + base``."""
        return int_set.modular_set(E.convert(expr), self._bounds, self._values)

    # -- simplification ------------------------------------------------------------------
    def simplify(self, expr, trace=False):
        """The simplified expression (with the fired rule names when ``trace``)."""
        self.rules_fired = []
        fired = self.rules_fired.append
        e = E.convert(expr)
        e = rewrite(e, self, fired)
        e = self.canonical_simplify(e, _fired=fired)
        e = rewrite(e, self, fired)
        return (e, list(self.rules_fired)) if trace else e

    def canonical_simplify(self, expr, _fired=None):
        """Only the canonical (linear-form) simplifier."""
        return Canonicalizer(self, _fired or (lambda name: None)).visit_expr(E.convert(expr))

    def rewrite_simplify(self, expr):
        """Only the rule rewriter."""
        self.rules_fired = []
        return rewrite(E.convert(expr), self, self.rules_fired.append)

    def _prove_quietly(self, cond):
        """can_prove without touching ``rules_fired`` (used by rule guards)."""
        result = self.canonical_simplify(cond)
        return isinstance(result, E.IntImm) and result.value != 0

    def can_prove(self, cond) -> bool:
        """True when ``cond`` holds for every value the variables may take."""
        return self._prove_quietly(E.convert(cond))

    def can_prove_equal(self, a, b) -> bool:
        """True when ``a == b`` for every value the variables may take."""
        diff = self.canonical_simplify(O.subtract(a, b))
        return isinstance(diff, E.IntImm) and diff.value == 0
