"""Seed 001's TVMScript modules parse, run and print as TVM prints them."""

import os
import sys

import numpy as np
import pytest

import irlab
from irlab.ir import structural_equal
from irlab.script import from_source
from irlab.tir.interpreter import run

sys.path.insert(0, os.path.dirname(__file__))
import seed_modules as seed  # noqa: E402


def test_mm_relu_parses_and_matches_numpy():
    func = seed.MyModule["mm_relu"]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 128)).astype("float32")
    b = rng.standard_normal((128, 128)).astype("float32")
    c = np.zeros((128, 128), "float32")
    run(func, a, b, c)
    expect = np.zeros((128, 128), "float32")
    seed.lnumpy_mm_relu(a, b, expect)
    np.testing.assert_allclose(c, expect, rtol=1e-5, atol=1e-5)


def test_mm_relu_prints_tvm_format():
    text = seed.MyModule.script()
    assert text.startswith("# from tvm.script import ir as I\n# from tvm.script import tir as T")
    for line in ['T.func_attr({"global_symbol": "mm_relu", "tir.noalias": T.bool(True)})',
                 '# with T.block("root"):', "Y = T.alloc_buffer((128, 128))",
                 "for i, j, k in T.grid(128, 128, 128):",
                 'vi, vj, vk = T.axis.remap("SSR", [i, j, k])',
                 "T.reads(A[vi, vk], B[vk, vj])", "T.writes(Y[vi, vj])", "with T.init():",
                 "C[vi, vj] = T.max(Y[vi, vj], T.float32(0))",
                 'def mm_relu(A: T.Buffer((128, 128), "float32"),']:
        assert line in text, line
    assert str(seed.MyModule["mm_relu"]).startswith("# from tvm.script import tir as T")


@pytest.mark.parametrize("mod", [seed.MyModule, seed.VecAddModule])
def test_seed_round_trip(mod):
    text = mod.script()
    again = from_source(text)
    assert again.script() == text
    for gv in mod.get_global_vars():
        assert structural_equal(again[gv.name_hint], mod[gv.name_hint])


def test_vector_add_runs():
    func = seed.VecAddModule["main"]
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, "float32")
    run(func, a, b)
    np.testing.assert_array_equal(b, a + 1)
    assert 'main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"))' in func.script()


def test_tvm_script_alias_and_ir_namespace():
    from irlab.script import ir as I
    from irlab.script import tir as T

    assert irlab.script.ir_module is I.ir_module
    assert callable(T.prim_func)
