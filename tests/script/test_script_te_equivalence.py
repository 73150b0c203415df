"""Seed 001's claim, checked: the TE formulation of mm_relu is the same program as its
TVMScript, and the vector add built with TE equals the TVMScript module."""

import irlab as tvm
from irlab import te
from irlab.ir import assert_structural_equal
from seed_modules import MyModule, VecAddModule


def _mm_relu_te(n=128):
    A = te.placeholder((n, n), dtype="float32", name="A")
    B = te.placeholder((n, n), dtype="float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    Y = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    C = te.compute((n, n), lambda i, j: te.max(Y[i, j], te.const(0, "float32")), name="C")
    return te.create_prim_func([A, B, C]).with_attr("global_symbol", "mm_relu")


def test_te_mm_relu_equals_the_tvmscript_one():
    assert_structural_equal(_mm_relu_te(), MyModule["mm_relu"])


def test_te_vector_add_equals_the_tvmscript_module():
    A = te.placeholder((8,), dtype="float32", name="A")
    B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
    func = te.create_prim_func([A, B])
    ir_module_from_te = tvm.IRModule({"main": func})
    assert_structural_equal(ir_module_from_te, VecAddModule)


def test_lowered_function_prints_parameter_data_and_parses_back():
    A = te.placeholder((4, 4), name="A")
    B = te.compute((4, 4), lambda i, j: A[i, j] * 2.0, name="B")
    lowered = tvm.lower(te.create_prim_func([A, B]))
    text = lowered.script()
    assert 'T.Buffer((16,), "float32", data=A.data)' in text
    again = tvm.script.from_source(text)
    assert_structural_equal(again, lowered)
    assert again.script() == text


def test_a_prim_func_only_module_prints_as_tvmscript():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 2.0, name="B")
    mod = tvm.IRModule({"main": te.create_prim_func([A, B])})
    assert str(mod) == mod.script()
    assert str(mod).startswith("# from tvm.script import ir as I")
