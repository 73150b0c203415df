"""Seed 001 section 0x1.4: the Relax wiki's ``MyIRModule``, rewritten in today's TVMScript
(``R.match_cast`` for ``R.match_shape``, ``out_sinfo=`` for ``call_tir``'s output shape,
``R.output`` for ``R.outputs``, ``@R.function(pure=False)`` for the packed call's side effect).

D0: a dataflow block, and an impure packed call after it; D1: symbolic shapes (``n``, ``k``
from the signature, ``m`` from ``match_cast``, ``n * m`` computed); D2: ``call_tir`` into
TensorIR functions of the same module and ``call_packed`` into a registered function.
"""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax
from irlab.ir import assert_structural_equal
from irlab.relax.testing import evaluate
from irlab.script import from_source
from irlab.script import ir as I
from irlab.script import relax as R
from irlab.script import tir as T


@I.ir_module
class MyIRModule:
    @T.prim_func
    def tir_exp_func(x: T.handle, y: T.handle):  # D2: TensorIR in the same module
        n = T.int64()
        X = T.match_buffer(x, (n,), "float32")
        Y = T.match_buffer(y, (n,), "float32")
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.spatial(n, i)
                Y[vi] = T.exp(X[vi])

    @R.function(pure=False)
    def relax_func(x: R.Tensor(("n", "k"), "float32"), w: R.Tensor(dtype="float32", ndim=2)):
        # n, k are defined by the signature: the body can refer to them
        n = T.int64()
        k = T.int64()
        m = T.int64()
        cls = MyIRModule
        with R.dataflow():  # D0
            lv0 = R.match_cast(w, R.Tensor((k, m), "float32"))  # D1: defines m
            lv1: R.Tensor((n, m), "float32") = R.matmul(x, lv0)
            lv2: R.Tensor((n * m,), "float32") = R.flatten(lv1)  # D1: n * m deduced
            lv3: R.Shape([n * m]) = R.shape([n * m])  # D1
            gv0 = R.call_tir(cls.tir_exp_func, (lv2,), out_sinfo=R.Tensor((n * m,), "float32"))
            R.output(gv0)
        R.call_packed("custom_inplace_update", gv0, sinfo_args=R.Tuple())  # D0, D2
        return gv0


def test_seed_module_structure():
    func = MyIRModule["relax_func"]
    assert not func.is_pure
    dataflow, after = func.body.blocks
    assert isinstance(dataflow, relax.DataflowBlock)  # D0
    assert not isinstance(after, relax.DataflowBlock)
    match = dataflow.bindings[0]
    assert isinstance(match, relax.MatchCast)  # D1
    n, k = func.params[0].struct_info.dims
    k2, m = match.struct_info.dims
    assert k2 is k and m.name_hint == "m"
    gv0 = dataflow.bindings[-1].var
    assert not isinstance(gv0, relax.DataflowVar)  # the block's output
    assert tvm.ir.structural_equal(gv0.struct_info.dims[0], n * m)
    call = dataflow.bindings[-1].value
    assert call.op.name == "relax.call_tir"  # D2
    assert call.args[0] is MyIRModule.get_global_var("tir_exp_func")
    packed = after.bindings[0].value
    assert isinstance(packed.op, relax.ExternFunc)  # D2
    assert packed.op.global_symbol == "custom_inplace_update"


def test_seed_module_prints_and_parses_back():
    text = MyIRModule.script()
    assert "@R.function(pure=False)\n    def relax_func(x: R.Tensor((\"n\", \"k\"), " \
           "dtype=\"float32\"), w: R.Tensor(dtype=\"float32\", ndim=2))" in text
    assert 'lv0: R.Tensor((k, m), dtype="float32") = R.match_cast(w, ' \
           'R.Tensor((k, m), dtype="float32"))' in text
    assert 'lv2: R.Tensor((n * m,), dtype="float32") = R.flatten(lv1)' in text
    assert "gv0 = R.call_tir(cls.tir_exp_func, (lv2,), " \
           "out_sinfo=R.Tensor((n * m,), dtype=\"float32\"))" in text
    assert '        R.call_packed("custom_inplace_update", gv0, sinfo_args=(R.Tuple,))\n' in text
    again = from_source(text)
    assert_structural_equal(again, MyIRModule)
    assert again.script() == text
    assert str(MyIRModule) == text


@pytest.fixture
def inplace_update():
    """The packed function the seed calls after the dataflow block; records what it gets
    (the reference evaluator passes copies, so its in-place effect is not checked here)."""
    seen = []

    def update(array):
        seen.append(array.numpy().copy())

    tvm.register_func("custom_inplace_update", update, override=True)
    yield seen
    tvm.runtime.registry.remove_global_func("custom_inplace_update")


@pytest.mark.parametrize("n, k, m", [(2, 3, 4), (5, 1, 3)])
def test_seed_module_runs_for_several_shapes(inplace_update, n, k, m):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, k)).astype("float32")
    w = rng.standard_normal((k, m)).astype("float32")
    out = evaluate(from_source(MyIRModule.script()), [x, w], "relax_func")
    expected = np.exp((x @ w).reshape(-1))
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    (packed_arg,) = inplace_update  # called once, with gv0
    np.testing.assert_allclose(packed_arg, expected, rtol=1e-5)


def test_seed_module_rejects_a_weight_of_the_wrong_rows(inplace_update):
    x = np.ones((2, 3), "float32")
    w = np.ones((4, 5), "float32")  # k is 3 from x: match_cast must fail
    with pytest.raises(tvm.IrlabError, match="match_cast lv0: dim 0 is 4, expected k = 3"):
        evaluate(MyIRModule, [x, w], "relax_func")


@pytest.fixture
def add_one_in_place():
    """The seed's packed function, run by the VM: it updates gv0 in place (adds 1)."""
    def update(array):
        array.copyfrom(array.numpy() + 1)

    tvm.register_func("custom_inplace_update", update, override=True)
    yield
    tvm.runtime.registry.remove_global_func("custom_inplace_update")


def test_seed_module_builds_once_and_runs_for_several_shapes(add_one_in_place):
    executable = relax.build(from_source(MyIRModule.script()), "llvm")
    vm = relax.VirtualMachine(executable, tvm.cpu())
    rng = np.random.default_rng(0)
    for n, k, m in [(1, 3, 4), (7, 2, 5), (3, 1, 1)]:
        x = rng.standard_normal((n, k)).astype("float32")
        w = rng.standard_normal((k, m)).astype("float32")
        out = vm["relax_func"](tvm.nd.array(x), tvm.nd.array(w))
        np.testing.assert_allclose(out.numpy(), np.exp((x @ w).reshape(-1)) + 1, rtol=1e-5)
    with pytest.raises(tvm.IrlabError, match=r"match_cast lv0.*shape\[0\] \(k\) is 4"):
        vm["relax_func"](tvm.nd.array(np.ones((2, 3), "float32")),
                         tvm.nd.array(np.ones((4, 5), "float32")))


def test_seed_module_fused_builds_and_runs(add_one_in_place):
    """The zero pipeline fuses the legalized flatten (int32 indices, from TOPI) with the
    seed's int64 ``tir_exp_func``: FuseTIR narrows the latter, and the result builds."""
    fused = relax.get_pipeline()(from_source(MyIRModule.script()))
    assert "fused_reshape_tir_exp_func" in [gv.name_hint for gv in fused.get_global_vars()]
    vm = relax.VirtualMachine(relax.build(fused, "llvm"), tvm.cpu())
    rng = np.random.default_rng(1)
    for n, k, m in [(1, 3, 4), (6, 2, 5)]:
        x = rng.standard_normal((n, k)).astype("float32")
        w = rng.standard_normal((k, m)).astype("float32")
        out = vm["relax_func"](tvm.nd.array(x), tvm.nd.array(w))
        np.testing.assert_allclose(out.numpy(), np.exp((x @ w).reshape(-1)) + 1, rtol=1e-5)
