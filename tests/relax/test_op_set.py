"""``R.unique`` (``relax.unique``): a data-dependent output shape, run by the VM and the
reference evaluator through the op's packed function ``relax.run.unique``; the program
re-matches the result's length with ``R.match_cast``."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax
from irlab.relax.struct_info import TensorStructInfo
from irlab.relax.testing import evaluate
from irlab.script import relax as R
from irlab.script import tir as T


@tvm.script.ir_module
class Unique:
    @R.function
    def main(x: R.Tensor(("n", 3), "float32")):
        m = T.int64()
        with R.dataflow():
            u = R.unique(x)
            um = R.match_cast(u, R.Tensor((m,), "float32"))
            gv = R.multiply(um, um)
            R.output(gv)
        return gv

    @R.function
    def first_seen(x: R.Tensor(("n",), "int32")):
        return R.unique(x, sorted=False)

    @R.function
    def rows(x: R.Tensor(("n", 2), "int32")):
        return R.unique(x, axis=0)


def _data(n):
    return np.random.default_rng(n).integers(0, 4, (n, 3)).astype("float32")


def test_struct_info_is_one_dim_of_unknown_length():
    sinfo = Unique["main"].body.blocks[0].bindings[0].var.struct_info
    assert isinstance(sinfo, TensorStructInfo) and sinfo.ndim == 1 and sinfo.dims is None
    assert Unique["rows"].body.body.struct_info.ndim == 2


@pytest.fixture(scope="module")
def vm():
    return relax.VirtualMachine(relax.build(Unique, "llvm"), tvm.cpu())


@pytest.mark.parametrize("n", [1, 5, 9])
def test_vm_and_evaluator_match_numpy(vm, n):
    x = _data(n)
    expected = np.unique(x) ** 2
    np.testing.assert_allclose(vm["main"](tvm.nd.array(x)).numpy(), expected)
    np.testing.assert_allclose(evaluate(Unique, [x], "main"), expected)


def test_unsorted_keeps_first_occurrence_order_and_axis_keeps_rows(vm):
    x = np.array([3, 1, 3, 0, 1], "int32")
    np.testing.assert_array_equal(vm["first_seen"](tvm.nd.array(x)).numpy(), [3, 1, 0])
    rows = np.array([[1, 2], [0, 0], [1, 2]], "int32")
    np.testing.assert_array_equal(vm["rows"](tvm.nd.array(rows)).numpy(), [[0, 0], [1, 2]])


def test_script_round_trip():
    text = Unique.script()
    assert "R.unique(x, " in text
    tvm.ir.assert_structural_equal(tvm.script.from_source(text), Unique)


def test_unsupported_flags_are_refused_by_name():
    x = relax.Var("x", R.Tensor((4,), "float32"))
    bb = relax.BlockBuilder()
    with pytest.raises(tvm.IrlabError, match="return_counts=True is not supported"):
        with bb.function("f", [x]):
            bb.emit_func_output(bb.emit(relax.op.unique(x, return_counts=True)))
