"""The simplifier keeps IEEE float semantics: identities that NaN and infinity break
(``x != x`` is the NaN test, ``x - x`` is NaN for inf) fold for integers only; a compiled
NaN test still finds NaNs."""

import numpy as np
import pytest

import irlab
from irlab import tir
from irlab.arith import Analyzer
from irlab.ir.structural import structural_equal
from irlab.script import tir as T
from irlab.tir import expr as E


@pytest.mark.parametrize("make", [lambda x: E.NE(x, x), lambda x: E.EQ(x, x),
                                  lambda x: E.LE(x, x), lambda x: x - x,
                                  lambda x: (x + x) - x])
def test_float_identities_are_kept(make):
    x = tir.Var("x", "float32")
    expr = make(x)
    assert structural_equal(Analyzer().simplify(expr), expr)


@pytest.mark.parametrize("make,want", [(lambda i: E.NE(i, i), False), (lambda i: E.EQ(i, i), True),
                                       (lambda i: E.LE(i, i), True), (lambda i: i - i, 0),
                                       (lambda i: (i + 5) - i, 5)])
def test_integer_identities_still_fold(make, want):
    i = tir.Var("i", "int32")
    got = Analyzer().simplify(make(i))
    assert isinstance(got, E.IntImm) and got.value == int(want)


def test_float_x_less_than_x_folds():  # false for every float, NaN included
    x = tir.Var("x", "float32")
    got = Analyzer().simplify(E.LT(x, x))
    assert isinstance(got, E.IntImm) and got.value == 0


@T.prim_func
def nan_mask(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.Select(A[vi] != A[vi], 1, 0)


def test_compiled_nan_test():
    a = np.array([0, np.nan, 1, np.inf, -np.inf, np.nan, -0.0, 3], "float32")
    want = np.isnan(a).astype("int32")
    for target in ("llvm", "c"):
        b = np.zeros(8, "int32")
        irlab.build(nan_mask, target=target)(a, b)
        np.testing.assert_array_equal(b, want)
    with irlab.transform.PassContext(opt_level=3):
        lowered = irlab.lower(nan_mask)
    assert "!=" in lowered.script()  # the test survived lowering's simplification
