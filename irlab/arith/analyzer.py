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
from irlab.tir.functor import child_fields

_LEAVES = (E.IntImm, E.FloatImm, E.StringImm)
_COMPARISONS = (E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE)
_MAX_KEY_DEPTH = 64  # deeper expressions are not memoized (no recursion limit trouble)


class _Uncacheable(Exception):
    pass


# Simplify results and proofs by key (see Analyzer._cache_key), shared by all analyzers: a key
# holds everything the answer depends on, so an entry never goes stale. Each entry keeps its
# expression alive, so that the objects keyed by id() in it are not reused by new ones. Plain
# dicts (each get/set atomic, cheap), emptied when they reach _SHARED_CAPACITY entries.
_SHARED_SIMPLIFY: dict = {}
_SHARED_PROVE: dict = {}
_SHARED_CAPACITY = 1 << 15


def _remember(cache, key, entry):
    if len(cache) >= _SHARED_CAPACITY:
        cache.clear()
    cache[key] = entry


def _rename(expr, mapping, memo):
    """``expr`` with variables and loaded buffers replaced by ``mapping`` and the nodes of
    ``memo`` by their values (a cached result found for other ones). A plain recursion rather
    than an ExprMutator: this runs for most simplifications, and results are small (their
    inputs' keys are depth-limited)."""

    def rec(e):
        done = memo.get(e)
        if done is not None:
            return done
        cls = type(e)
        if cls in _LEAVES:
            out = e
        elif isinstance(e, E.Var):
            out = mapping.get(e, e)
        elif isinstance(e, E.BinaryOpExpr):
            a, b = rec(e.a), rec(e.b)
            out = e if a is e.a and b is e.b else cls(a, b, e.span)
        elif cls is E.BufferLoad:
            indices = tuple(rec(i) for i in e.indices)
            buffer = mapping.get(e.buffer, e.buffer)
            same = buffer is e.buffer and all(a is b for a, b in zip(indices, e.indices))
            out = e if same else E.BufferLoad(buffer, indices, e.span)
        else:
            changes = {}
            for name in child_fields(cls):
                value = getattr(e, name)
                if isinstance(value, E.PrimExpr):
                    new = rec(value)
                elif isinstance(value, tuple):
                    new = tuple(rec(v) if isinstance(v, E.PrimExpr) else v for v in value)
                    if all(a is b for a, b in zip(new, value)):
                        new = value
                else:
                    new = value
                if new is not value:
                    changes[name] = new
            out = e.with_fields(**changes) if changes else e
        memo[e] = out
        return out

    try:
        return rec(expr)
    finally:
        del rec  # a recursive closure is a cycle (function -> cell -> function)


def _structural_key(e, vars_seen, nodes, depth=0):
    """A hashable key equal for expressions equal up to a renaming of their variables and
    loaded buffers: both are numbered by first occurrence (with their class and dtype); other
    objects are keyed by identity. The variables and buffers met go to ``vars_seen`` (in
    order), every node met to ``nodes`` (in pre-order: expressions with equal keys give
    lists of corresponding nodes). Raises ``_Uncacheable`` for what the key cannot describe
    safely (Let scopes, deep trees, unhashable fields)."""
    nodes.append(e)
    cls = type(e)
    if cls is E.IntImm:
        return (cls, e.dtype, e.value)
    if cls is E.FloatImm:  # repr: 0.0 and -0.0 are equal floats but not the same constant
        return (cls, e.dtype, repr(e.value))
    if cls is E.StringImm:
        return (cls, e.value)
    if isinstance(e, E.Var):
        index = vars_seen.get(e)
        if index is None:
            index = vars_seen[e] = len(vars_seen)
        return (cls, e.dtype, index)
    if cls is E.Let or depth > _MAX_KEY_DEPTH or not isinstance(e, E.PrimExpr):
        raise _Uncacheable
    if cls is E.BufferLoad:  # loads are opaque: buffers are numbered like the variables
        buffer = e.buffer
        index = vars_seen.get(buffer)
        if index is None:
            index = vars_seen[buffer] = len(vars_seen)
        return (cls, e.dtype, buffer.dtype, index,
                tuple(_structural_key(i, vars_seen, nodes, depth + 1) for i in e.indices))
    parts = [cls, e.dtype]
    depth += 1
    for name in cls._structural_fields:
        value = getattr(e, name)
        if isinstance(value, E.PrimExpr):
            parts.append(_structural_key(value, vars_seen, nodes, depth))
        elif isinstance(value, tuple):
            parts.append(tuple(_structural_key(v, vars_seen, nodes, depth)
                               if isinstance(v, E.PrimExpr) else _plain_key(v)
                               for v in value))
        else:
            parts.append(_plain_key(value))
    return tuple(parts)


def _plain_key(value):
    if value is None or isinstance(value, (str, int, bool)):
        return (type(value), value)
    if isinstance(value, float):
        return (float, repr(value))
    return ("id", id(value))  # buffers and other objects: by identity (kept alive by the cache)


class Analyzer:
    """Facts about variables (bounds, values) and the analyses and simplifier using them.

    ``simplify`` results are remembered by expression structure up to a renaming of variables
    (and the bounds of its variables), so that the many alike index expressions of a kernel --
    and of the other kernels of a model -- are simplified once; a result found for other
    variables is renamed to this expression's. With ``memoize=True`` an expression equal to
    one simplified before (same variables) gets that very result object; without, each call
    returns a result built on its own input (as a fresh simplification would). The rules
    replayed into ``rules_fired`` on a hit are those of the first simplification (a shared
    sub-expression counts once there). Proofs (``can_prove`` and the rules' guards) are
    memoized the same way: they only return a bool.
    """

    def __init__(self, memoize=False):
        self._bounds = {}  # Var -> (lo, hi)
        self._values = {}  # Var -> PrimExpr it equals
        self.rules_fired: list[str] = []
        self._memoize = memoize
        self._simplify_cache = _SHARED_SIMPLIFY  # key -> (nodes, result, fired, variables)
        self._prove_cache = _SHARED_PROVE  # key -> (expr, bool)

    def _cache_key(self, e):
        """``(key, variables and buffers of e in key order, nodes of e in pre-order)`` under
        the current facts, or None when ``e`` must not be cached. The key holds what the result
        depends on: the structure with variables numbered, the variables' classes, dtypes and
        bounds."""
        vars_seen, nodes = {}, []
        try:
            skey = _structural_key(e, vars_seen, nodes)
        except (_Uncacheable, RecursionError):
            return None
        values, bounds = self._values, self._bounds
        facts = []
        for v in vars_seen:
            if v in values:  # substituted values bring in other facts: not memoized
                return None
            facts.append(bounds.get(v))
        return (skey, tuple(facts)), tuple(vars_seen), nodes

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
        e = E.convert(expr)
        cls = type(e)
        if cls in _LEAVES or (cls is E.Var and e not in self._values):
            return (e, []) if trace else e  # already simplest (structurally what the rules give)
        cached = self._cache_key(e)
        if cached is not None:
            key, variables, nodes = cached
            hit = self._simplify_cache.get(key)
            if hit is not None:
                hit_nodes, result, fired, hit_vars = hit
                if any(a is not b for a, b in zip(hit_vars, variables)) or (
                        not self._memoize and hit_nodes[0] is not e):
                    # found for other variables (or, not memoizing, for another input):
                    # rename, and where the result reuses parts of that input, use the
                    # corresponding parts of this one (as a fresh simplification would)
                    parts = {}
                    for old, new in zip(hit_nodes, nodes):
                        parts.setdefault(old, new)
                    result = _rename(result, dict(zip(hit_vars, variables)), parts)
                self.rules_fired.extend(fired)
                return (result, list(fired)) if trace else result
        original = e
        fired = self.rules_fired.append
        e = rewrite(e, self, fired)
        e = self.canonical_simplify(e, _fired=fired)
        e = rewrite(e, self, fired)
        if cached is not None:
            _remember(self._simplify_cache, key,
                      (tuple(nodes), e, tuple(self.rules_fired), variables))
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
        if isinstance(cond, E.IntImm):
            return cond.value != 0
        if type(cond) in _COMPARISONS and not int_set.is_index_dtype(cond.a.dtype):
            # bounds are about integers: a comparison of floats (whose operands the rules
            # have simplified already) is proved only by folding to a constant, which the
            # builders did. Canonicalizing the operands again would cost their size per
            # guard, the square of the depth on a deep float expression.
            return False
        cached = self._cache_key(cond)
        if cached is not None:
            hit = self._prove_cache.get(cached[0])
            if hit is not None:
                return hit[1]
        result = self.canonical_simplify(cond)
        proved = isinstance(result, E.IntImm) and result.value != 0
        if cached is not None:
            _remember(self._prove_cache, cached[0], (cond, proved))
        return proved

    def can_prove(self, cond) -> bool:
        """True when ``cond`` holds for every value the variables may take."""
        return self._prove_quietly(E.convert(cond))

    def can_prove_equal(self, a, b) -> bool:
        """True when ``a == b`` for every value the variables may take."""
        diff = self.canonical_simplify(O.subtract(a, b))
        return isinstance(diff, E.IntImm) and diff.value == 0
