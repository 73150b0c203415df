"""A read-only array passed where compiled code writes is refused, naming the buffer (it used
to be copied, the results lost); a read-only input is fine (issue 20, finding 7)."""

import numpy as np
import pytest

import irlab
from irlab import te
from irlab.errors import ArgumentError, IrlabError
from irlab.runtime.module import find_c_compiler
from irlab.runtime.ndarray import NDArray

TARGETS = ["llvm", pytest.param("c", marks=pytest.mark.skipif(
    find_c_compiler() is None, reason="no C compiler"))]


def frozen(array):
    array = np.array(array)
    array.flags.writeable = False
    return array


def add_one(target):
    a = te.placeholder((8,), name="A")
    b = te.compute((8,), lambda i: a[i] + 1.0, name="B")
    return irlab.build(te.create_prim_func([a, b]).with_attr("global_symbol", "f"),
                       target=target)["f"]


@pytest.mark.parametrize("target", TARGETS)
def test_read_only_output_raises(target):
    f = add_one(target)
    out = frozen(np.zeros(8, "float32"))
    with pytest.raises(ArgumentError, match=r"argument 1 \(B\): the array is read-only"):
        f(np.ones(8, "float32"), out)
    with pytest.raises(ArgumentError, match="read-only"):
        f(np.ones(8, "float32"), NDArray(out))


@pytest.mark.parametrize("target", TARGETS)
def test_read_only_input_is_fine(target):
    f = add_one(target)
    out = np.zeros(8, "float32")
    f(frozen(np.arange(8, dtype="float32")), out)
    np.testing.assert_array_equal(out, np.arange(8) + 1)
    f(NDArray(frozen(np.full(8, 2, "float32"))), out)
    np.testing.assert_array_equal(out, np.full(8, 3.0))


def test_ndarray_copyfrom_into_read_only_raises():
    target = NDArray(frozen(np.zeros(3, "float32")))
    with pytest.raises(IrlabError, match="read-only"):
        target.copyfrom(np.ones(3, "float32"))
