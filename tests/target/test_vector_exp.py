"""``exp`` of a float32 vector is written inline by the LLVM code generator (range reduction,
a polynomial, the exponent built in the bits: ``irlab/target/llvm_vector_math.py``), not one
``expf`` call per lane. The AVX2 build (``-mcpu=haswell``) runs on any host of the suite
against float64 numpy; the AVX-512 build is inspected; the scalar path keeps ``expf``."""

import numpy as np
import pytest

import irlab
from irlab import te, tir

HASWELL = "llvm -mcpu=haswell"
AVX512 = "llvm -mcpu=skylake-avx512"
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-10, -1e-10,
                     88.72283, 88.7229, 89.5, 1e4,          # near FLT_MAX, then overflow
                     -87.33, -95.6, -103.27, -103.98, -104.5, -1e4],  # subnormal, then 0
                    "float32")


def _elementwise(fn, n, lanes, target, dtype="float32"):
    a = te.placeholder((n,), dtype=dtype, name="A")
    b = te.compute((n,), lambda i: fn(a[i]), name="B")
    sch = tir.Schedule(te.create_prim_func([a, b]))
    (loop,) = sch.get_loops(sch.get_block("B"))
    if lanes > 1:
        _, inner = sch.split(loop, [None, lanes])
        sch.vectorize(inner)
    return irlab.build(sch.mod, target=target)


def _ulps(got, want32, want64):
    """|got - exact| in units of float32's spacing at the correctly rounded value."""
    return np.abs(got.astype(np.float64) - want64) / np.spacing(np.abs(want32))


def _run(lib, x):
    out = irlab.nd.array(np.zeros_like(x))
    lib(irlab.nd.array(x), out)
    return out.numpy()


@pytest.mark.parametrize("lanes", [8, 10, 16])
def test_vector_exp_is_within_one_ulp_everywhere(lanes):
    n = 200_000
    x = np.concatenate([np.linspace(-110, 95, n - 40, dtype="float32"),
                        np.resize(SPECIALS, 40)]).astype("float32")
    got = _run(_elementwise(te.exp, n, lanes, HASWELL), x)
    with np.errstate(over="ignore"):
        want64 = np.exp(x.astype(np.float64))
        want32 = want64.astype(np.float32)
    finite = np.isfinite(want32) & (want32 != 0)
    assert _ulps(got[finite], want32[finite], want64[finite]).max() <= 1.0
    # overflow, underflow and NaN exactly as expf: inf, 0 (also for -inf) and NaN
    np.testing.assert_array_equal(got[~finite], want32[~finite])
    assert np.isnan(got[np.isnan(x)]).all()


def test_vector_sigmoid_and_softmax_use_the_inline_exp():
    x = np.random.default_rng(0).uniform(-30, 30, 4096).astype("float32")
    got = _run(_elementwise(tir.sigmoid, 4096, 16, HASWELL), x)
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-x.astype(np.float64))), rtol=3e-7)
    for target in (HASWELL, AVX512):
        asm = _elementwise(tir.sigmoid, 4096, 16, target).get_source("asm")
        assert "expf" not in asm
    asm512 = _elementwise(te.exp, 4096, 16, AVX512).get_source("asm")
    assert "expf" not in asm512 and "zmm" in asm512


def test_scalar_exp_still_calls_the_c_library():
    lib = _elementwise(te.exp, 64, 1, HASWELL)
    assert "expf" in lib.get_source("asm")
    x = np.linspace(-5, 5, 64, dtype="float32")
    np.testing.assert_allclose(_run(lib, x), np.exp(x), rtol=1e-6)


def test_float16_vector_exp_goes_through_float32():
    x = np.linspace(-10, 10, 256, dtype="float16")
    lib = _elementwise(te.exp, 256, 16, HASWELL, "float16")
    assert "expf" not in lib.get_source("asm")
    np.testing.assert_allclose(_run(lib, x).astype(np.float32),
                               np.exp(x.astype(np.float32)), rtol=1e-3)
