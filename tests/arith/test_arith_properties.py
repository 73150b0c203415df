"""Hypothesis: simplify preserves values; const_int_bound and modular_set hold on samples."""

from hypothesis import given, settings, strategies as st, HealthCheck

from irlab import tir
from irlab.arith import Analyzer
from irlab.tir import expr as E

VARS = [tir.Var(n) for n in ("a", "b", "c")]
EXTENTS = (4, 8, 13)  # a in [0, 4), b in [0, 8), c in [-6, 7)
LOWS = (0, 0, -6)


def _tdiv(x, y):
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def evaluate(e, env):
    """Reference semantics over Python ints (floor and trunc division as TIR defines them)."""
    ev = lambda x: evaluate(x, env)  # noqa: E731
    if isinstance(e, E.IntImm):
        return e.value
    if isinstance(e, E.Var):
        return env[e]
    if isinstance(e, E.Select):
        return ev(e.true_value) if ev(e.condition) else ev(e.false_value)
    if isinstance(e, E.Not):
        return int(not ev(e.a))
    a, b = ev(e.a), ev(e.b)
    ops = {E.Add: lambda: a + b, E.Sub: lambda: a - b, E.Mul: lambda: a * b,
           E.FloorDiv: lambda: a // b, E.FloorMod: lambda: a % b,
           E.Div: lambda: _tdiv(a, b), E.Mod: lambda: a - _tdiv(a, b) * b,
           E.Min: lambda: min(a, b), E.Max: lambda: max(a, b),
           E.LT: lambda: int(a < b), E.LE: lambda: int(a <= b), E.GT: lambda: int(a > b),
           E.GE: lambda: int(a >= b), E.EQ: lambda: int(a == b), E.NE: lambda: int(a != b),
           E.And: lambda: int(a and b), E.Or: lambda: int(a or b)}
    return ops[type(e)]()


leaves = st.one_of(st.sampled_from(VARS), st.integers(-9, 9).map(lambda v: tir.const(v)))


def _extend(children):
    pos = st.integers(1, 9)
    return st.one_of(
        st.tuples(children, children).map(lambda p: E.Add(*p)),
        st.tuples(children, children).map(lambda p: E.Sub(*p)),
        st.tuples(children, st.integers(-4, 4)).map(lambda p: E.Mul(p[0], p[1])),
        st.tuples(children, pos).map(lambda p: E.FloorDiv(p[0], p[1])),
        st.tuples(children, pos).map(lambda p: E.FloorMod(p[0], p[1])),
        st.tuples(children, pos).map(lambda p: E.Div(p[0], p[1])),
        st.tuples(children, pos).map(lambda p: E.Mod(p[0], p[1])),
        st.tuples(children, children).map(lambda p: E.Min(*p)),
        st.tuples(children, children).map(lambda p: E.Max(*p)),
        st.tuples(st.sampled_from([E.LT, E.LE, E.GE, E.EQ, E.NE]), children, children,
                  children, children).map(lambda p: E.Select(p[0](p[1], p[2]), p[3], p[4])),
    )


int_exprs = st.recursive(leaves, _extend, max_leaves=8)
cond_exprs = st.tuples(st.sampled_from([E.LT, E.LE, E.GT, E.GE, E.EQ, E.NE]), int_exprs,
                       int_exprs).map(lambda p: p[0](p[1], p[2]))
envs = st.tuples(*(st.integers(lo, lo + ext - 1) for lo, ext in zip(LOWS, EXTENTS)))


def _analyzer():
    an = Analyzer()
    for v, lo, ext in zip(VARS, LOWS, EXTENTS):
        an.bind(v, tir.Range(lo, lo + ext))
    return an


SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(int_exprs, st.lists(envs, min_size=1, max_size=6))
def test_simplify_preserves_value(e, samples):
    simplified = _analyzer().simplify(e)
    for values in samples:
        env = dict(zip(VARS, values))
        assert evaluate(simplified, env) == evaluate(e, env), (e, simplified, env)


@SETTINGS
@given(cond_exprs, st.lists(envs, min_size=1, max_size=6))
def test_simplify_preserves_conditions(e, samples):
    simplified = _analyzer().simplify(e)
    for values in samples:
        env = dict(zip(VARS, values))
        assert bool(evaluate(simplified, env)) == bool(evaluate(e, env)), (e, simplified, env)


@SETTINGS
@given(int_exprs, st.lists(envs, min_size=1, max_size=6))
def test_bound_and_modular_hold(e, samples):
    an = _analyzer()
    bound, mod = an.const_int_bound(e), an.modular_set(e)
    simplified_bound = an.const_int_bound(an.simplify(e))
    for values in samples:
        v = evaluate(e, dict(zip(VARS, values)))
        assert bound.min_value <= v <= bound.max_value, (e, bound, v)
        assert simplified_bound.min_value <= v <= simplified_bound.max_value
        if mod.coeff == 0:
            assert v == mod.base, (e, mod, v)
        else:
            assert (v - mod.base) % mod.coeff == 0, (e, mod, v)


@SETTINGS
@given(int_exprs, int_exprs, st.lists(envs, min_size=4, max_size=8))
def test_can_prove_is_sound(x, y, samples):
    an = _analyzer()
    if an.can_prove(E.LT(x, y)):
        for values in samples:
            env = dict(zip(VARS, values))
            assert evaluate(x, env) < evaluate(y, env)
    if an.can_prove_equal(x, y):
        for values in samples:
            env = dict(zip(VARS, values))
            assert evaluate(x, env) == evaluate(y, env)
