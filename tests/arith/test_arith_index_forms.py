"""Targeted tests: the index forms schedules produce come out canonical and readable."""

import pytest

from irlab import tir
from irlab.arith import Analyzer, ConstIntBound, ModularSet, RULE_NAMES
from irlab.ir.structural import structural_equal


def _vars(**extents):
    an = Analyzer()
    vs = []
    for name, ext in extents.items():
        v = tir.Var(name)
        an.bind(v, tir.Range(ext))
        vs.append(v)
    return an, vs


def _same(a, b):
    return structural_equal(a, tir.convert(b))


def test_split_indices_collapse():
    an, (i0, i1) = _vars(i_0=32, i_1=4)
    assert _same(an.simplify((i0 * 4 + i1) // 4), i0)
    assert _same(an.simplify((i0 * 4 + i1) % 4), i1)
    assert an.can_prove(i0 * 4 + i1 < 128)
    assert an.const_int_bound(i0 * 4 + i1) == ConstIntBound(0, 127)


def test_split_without_bounds_keeps_the_remainder_readable():
    an = Analyzer()
    x, y = tir.Var("x"), tir.Var("y")
    out = an.simplify((x * 4 + y) // 4)
    assert _same(out, x + y // 4)
    assert "floordiv(x * c1 + y, c1) => x + floordiv(y, c1) when c1 > 0" in an.rules_fired


def test_fuse_indices_recombine():
    an, (f,) = _vars(fused=96)
    assert _same(an.simplify(f // 8 * 8 + f % 8), f)
    assert an.const_int_bound(f // 8) == ConstIntBound(0, 11)
    assert an.const_int_bound(f % 8) == ConstIntBound(0, 7)
    # fuse(i, j) then reading i and j back through their own extents
    an2, (i, j) = _vars(i=12, j=8)
    fused = i * 8 + j
    assert _same(an2.simplify(fused // 8), i)
    assert _same(an2.simplify(fused % 8), j)


def test_nested_split():
    an, (a, b, c) = _vars(i_0_0=4, i_0_1=8, i_1=4)
    i = (a * 8 + b) * 4 + c  # split(i, [None, 4]) then split(i_0, [None, 8])
    assert _same(an.simplify(i), a * 32 + b * 4 + c)
    assert _same(an.simplify(i // 4), a * 8 + b)
    assert _same(an.simplify(i // 32), a)
    assert _same(an.simplify(i % 32), b * 4 + c)
    assert _same(an.simplify(i // 4 % 8), b)
    assert _same(an.simplify(i // 4 // 8), a)


def test_floordiv_floormod_by_gcd_and_nesting():
    an = Analyzer()
    x, y = tir.Var("x"), tir.Var("y")
    assert _same(an.simplify((x * 4 + y * 2) // 8), (x * 2 + y) // 4)
    assert _same(an.simplify((x // 4) // 8), x // 32)
    assert _same(an.simplify((x % 8) % 4), x % 4)
    assert _same(an.simplify(x * 6 % 3), 0)


def test_min_max_select_and_comparisons():
    an, (i, j) = _vars(i=16, j=4)
    assert _same(an.simplify(tir.min(i, 16)), i)
    assert _same(an.simplify(tir.max(j, 0)), j)
    assert _same(an.simplify(tir.Select(i < 16, i, j)), i)
    assert _same(an.simplify(tir.Select(i < 8, j, j)), j)
    assert _same(an.simplify(i * 4 + j < 64), True)
    assert _same(an.simplify(i >= 16), False)
    x = tir.Var("x")
    assert _same(an.simplify(x + 3 < 5), x < 2)
    assert _same(an.simplify(x * 2 < 7), x < 4)
    assert _same(an.simplify(x * 2 == 7), False)
    assert _same(an.simplify(tir.Not(x < 3)), x > 2)


def test_constant_folding_and_casts():
    an = Analyzer()
    x = tir.Var("x")
    assert _same(an.simplify((x + 1) * 4 - x * 4), 4)
    assert _same(an.simplify(tir.Cast("int64", tir.const(3)) + tir.const(2, "int64")),
                 tir.const(5, "int64"))
    y = tir.Var("y", "int64")
    assert _same(an.simplify((y * 4 + 2) % 4), tir.const(2, "int64"))
    assert _same(an.simplify((y * 4 + 2) // 4), y)


def test_bind_expression_and_let():
    an = Analyzer()
    x, y = tir.Var("x"), tir.Var("y")
    an.bind(x, y * 4 + 1)
    assert _same(an.simplify(x % 4), 1)
    assert an.modular_set(x) == ModularSet(4, 1)
    v = tir.Var("v")
    an2, (i,) = _vars(i=4)
    e = tir.Let(v, i * 4, (v + 3) // 4)
    out = an2.simplify(e)
    assert isinstance(out, tir.Let) and _same(out.body, i)  # v is inlined while simplifying


def test_modular_set():
    an = Analyzer()
    x, y = tir.Var("x"), tir.Var("y")
    assert an.modular_set(x * 8 + 4) == ModularSet(8, 4)
    assert an.modular_set(x * 6 + y * 9 + 1) == ModularSet(3, 1)
    assert an.modular_set((x * 8 + 4) // 4) == ModularSet(2, 1)
    assert an.modular_set((x * 6 + 4) % 4) == ModularSet(2, 0)
    assert an.modular_set(tir.const(7)) == ModularSet(0, 7)


def test_rule_names_are_visible_and_parse():
    an, (i0, i1) = _vars(i_0=8, i_1=4)
    out, fired = an.simplify((i0 * 4 + i1) // 4 + 0, trace=True)
    assert _same(out, i0)
    assert "floordiv(x * c1 + y, c1) => x when 0 <= y < c1" in fired
    assert fired == an.rules_fired
    assert "x + 0 => x" in RULE_NAMES and "(x * c1) // c1 => x when c1 != 0" in RULE_NAMES


@pytest.mark.parametrize("expr_fn, expected_fn", [
    (lambda x: x * 1 + 0, lambda x: x),
    (lambda x: (x * 3) // 3, lambda x: x),
    (lambda x: tir.max(x, x), lambda x: x),
    (lambda x: x - x, lambda x: 0),
])
def test_rewrite_only(expr_fn, expected_fn):
    an = Analyzer()
    x = tir.Var("x")
    assert _same(an.rewrite_simplify(expr_fn(x)), expected_fn(x))


def test_float_expressions_pass_through():
    an = Analyzer()
    f = tir.Var("f", "float32")
    e = f * tir.const(1.0) + tir.const(0.0)
    assert _same(an.simplify(e), f)
