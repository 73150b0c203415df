"""``CompiledFunction.bind``: fixed arguments checked once, the others at every call."""

import numpy as np
import pytest

import irlab as tvm
from irlab import te
from irlab.errors import ArgumentError


def add_module(shape):
    a = te.placeholder(shape, name="a")
    b = te.placeholder(shape, name="b")
    c = te.compute(shape, lambda *i: a(*i) + b(*i), name="c")
    return tvm.build(te.create_prim_func([a, b, c]), target="llvm")


@pytest.fixture(scope="module")
def add():
    lib = add_module((8,))
    return lib.get_function(lib.get_func_names()[0])


def test_bound_call_runs_on_fixed_and_free_arguments(add):
    b = tvm.nd.array(np.arange(8, dtype="float32"))
    c = tvm.nd.empty((8,), "float32")
    run = add.bind([None, b, c], dynamic=(0,))
    for k in range(3):
        run(tvm.nd.array(np.full(8, k, "float32")))
        np.testing.assert_array_equal(c.numpy(), np.arange(8) + k)
    fully = add.bind([tvm.nd.array(np.ones(8, "float32")), b, c])
    fully()
    np.testing.assert_array_equal(c.numpy(), np.arange(8) + 1)


def test_free_arguments_are_still_checked(add):
    run = add.bind([None, tvm.nd.array(np.zeros(8, "float32")),
                    tvm.nd.empty((8,), "float32")], dynamic=(0,))
    with pytest.raises(ArgumentError, match="expected shape"):
        run(tvm.nd.array(np.zeros(7, "float32")))
    with pytest.raises(ArgumentError, match="expected dtype float32"):
        run(tvm.nd.array(np.zeros(8, "float64")))
    with pytest.raises(ArgumentError, match="1 free arguments, got 2"):
        run(1, 2)


def test_fixed_arguments_are_checked_when_bound(add):
    with pytest.raises(ArgumentError, match="expected shape"):
        add.bind([None, tvm.nd.array(np.zeros(7, "float32")), tvm.nd.empty((8,), "float32")],
                 dynamic=(0,))


def test_what_cannot_be_bound_returns_none(add):
    readonly = np.zeros(8, "float32")
    readonly.flags.writeable = False
    assert add.bind([None, readonly, tvm.nd.empty((8,), "float32")], dynamic=(0,)) is None
    n = te.var("n")
    a = te.placeholder((n,), name="a")
    b = te.compute((n,), lambda i: a[i] * 2.0, name="b")
    lib = tvm.build(te.create_prim_func([a, b]), target="llvm")
    symbolic = lib.get_function(lib.get_func_names()[0])
    assert symbolic.bind([tvm.nd.empty((4,), "float32"), None], dynamic=(1,)) is None
