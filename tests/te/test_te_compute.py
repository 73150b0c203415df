"""TE construction: placeholder, compute argument handling, reductions, operations."""

import pytest

from irlab import te, tir
from irlab.errors import TIRError


def test_placeholder_defaults():
    A = te.placeholder((3, 4))
    assert A.dtype == "float32" and A.name == "placeholder" and A.ndim == 2
    assert [s.value for s in A.shape] == [3, 4]
    B = te.placeholder(5, dtype="int8", name="B")
    assert B.dtype == "int8" and len(B.shape) == 1
    assert A.op.output(0) is A and A == A.op.output(0)


def test_compute_arg_names():
    A = te.placeholder((2, 3), name="A")
    B = te.compute((2, 3), lambda *i: A(*i), name="B")
    assert [iv.var.name_hint for iv in B.op.axis] == ["i0", "i1"]
    C = te.compute((2, 3), lambda x, y: A[x, y])
    assert C.name == "compute" and [iv.var.name_hint for iv in C.op.axis] == ["x", "y"]
    # Fewer arguments than dimensions: the output has that many dimensions (TVM).
    D = te.compute((2, 3), lambda x: A[x, 0])
    assert D.ndim == 1
    with pytest.raises(TIRError):
        te.compute((2,), lambda x, y: A[x, y])
    with pytest.raises(TIRError, match="default"):
        te.compute((2,), lambda x=0: A[x, 0])


def test_loads_and_slices():
    A = te.placeholder((2, 3), name="A")
    i, j = te.var("i"), te.var("j")
    load = A[i][j]
    assert isinstance(load, te.ProducerLoad) and load.producer == A and load.dtype == "float32"
    assert isinstance(A(i, j), te.ProducerLoad)
    with pytest.raises(TIRError, match="indices"):
        A(i)


def test_reduce_nodes():
    A = te.placeholder((4, 5), name="A")
    k = te.reduce_axis((0, 5), name="k")
    assert k.iter_type == tir.IterVar.CommReduce and k.dom.extent.value == 5
    B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
    red = B.op.body[0]
    assert isinstance(red, te.Reduce) and red.dtype == "float32"
    assert B.op.reduce_axis == (k,)
    assert red.combiner.identity_element[0].value == 0.0
    assert B.op.input_tensors == [A]
    mx = te.max(A[0, k], axis=k)
    assert mx.combiner.identity_element[0].value < -1e38
    # Plain values: elementwise combination.
    assert isinstance(te.max(A[0, 0], 0.0), tir.Max)
    assert isinstance(te.min(A[0, 0], 1.0), tir.Min)


def test_reduce_must_be_top_level():
    A = te.placeholder((4, 5), name="A")
    k = te.reduce_axis((0, 5), name="k")
    with pytest.raises(TIRError, match="top level"):
        te.compute((4,), lambda i: te.sum(A[i, k], axis=k) + 1.0)


def test_multiple_outputs_share_op():
    A = te.placeholder((3,), name="A")
    outs = te.compute((3,), lambda i: (A[i], A[i] + 1.0), name="M")
    assert isinstance(outs, tuple) and len(outs) == 2
    assert outs[0].op is outs[1].op and outs[1].value_index == 1
    assert outs[0] != outs[1]


def test_vars_and_thread_axis():
    n = te.size_var("n")
    assert isinstance(n, tir.SizeVar) and n.dtype == "int32"
    tx = te.thread_axis("threadIdx.x")
    assert tx.thread_tag == "threadIdx.x" and tx.iter_type == tir.IterVar.ThreadIndex


def test_iter_vars_stand_for_their_variables_in_expressions():
    import numpy as np

    from irlab.tir.interpreter import run

    n = 6
    A = te.placeholder((n,), name="A")
    k = te.reduce_axis((0, n), name="k")
    # prefix sums through a condition on the reduce axis itself (k <= i), no `.var` needed
    B = te.compute((n,), lambda i: te.sum(te.if_then_else(k <= i, A[k], 0.0), axis=k), name="B")
    a = np.arange(n, dtype="float32")
    b = np.zeros(n, "float32")
    run(te.create_prim_func([A, B]), a, b)
    np.testing.assert_allclose(b, np.cumsum(a))
    assert str(k + 1) == "(k + 1)"
