"""The MLC course's TVMScript modules (chapter "End to End Model Execution"), in today's syntax:
a two-layer MLP calling registered packed functions in destination-passing style
(``R.call_dps_packed("env.linear", ...)``), and the mixture of a TensorIR ``linear0`` with
``env.relu``; each parses, prints back the same, builds with ``relax.build`` and equals numpy."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax
from irlab.ir import assert_structural_equal
from irlab.script import from_source
from irlab.script import ir as I
from irlab.script import relax as R
from irlab.script import tir as T


@pytest.fixture
def env_functions():
    """``env.linear`` / ``env.relu`` as the course registers them (here on numpy)."""
    def linear(x, w, b, out):
        out.copyfrom(x.numpy() @ w.numpy().T + b.numpy())

    def relu(x, out):
        out.copyfrom(np.maximum(x.numpy(), 0))

    tvm.register_func("env.linear", linear, override=True)
    tvm.register_func("env.relu", relu, override=True)
    yield
    for name in ("env.linear", "env.relu"):
        tvm.runtime.registry.remove_global_func(name)


@I.ir_module
class MyModuleWithExternCall:
    @R.function
    def main(x: R.Tensor((1, 8), "float32"), w0: R.Tensor((6, 8), "float32"),
             b0: R.Tensor((6,), "float32"), w1: R.Tensor((3, 6), "float32"),
             b1: R.Tensor((3,), "float32")):
        # block 0
        with R.dataflow():
            lv0 = R.call_dps_packed("env.linear", (x, w0, b0), R.Tensor((1, 6), dtype="float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((1, 6), dtype="float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1),
                                    R.Tensor((1, 3), dtype="float32"))
            R.output(out)
        return out


@I.ir_module
class MyModuleMixture:
    @T.prim_func
    def linear0(X: T.Buffer((1, 8), "float32"), W: T.Buffer((6, 8), "float32"),
                B: T.Buffer((6,), "float32"), Z: T.Buffer((1, 6), "float32")):
        T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
        Y = T.alloc_buffer((1, 6), "float32")
        for i, j, k in T.grid(1, 6, 8):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, 6):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor((1, 8), "float32"), w0: R.Tensor((6, 8), "float32"),
             b0: R.Tensor((6,), "float32"), w1: R.Tensor((3, 6), "float32"),
             b1: R.Tensor((3,), "float32")):
        cls = MyModuleMixture
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), R.Tensor((1, 6), dtype="float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((1, 6), dtype="float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1),
                                    R.Tensor((1, 3), dtype="float32"))
            R.output(out)
        return out


@pytest.mark.parametrize("mod", [MyModuleWithExternCall, MyModuleMixture],
                         ids=["extern_call", "mixture"])
def test_mlc_module_round_trips_builds_and_runs(env_functions, mod):
    text = mod.script()
    assert 'R.call_dps_packed("env.relu", (lv0,), ' \
           'out_sinfo=R.Tensor((1, 6), dtype="float32"))' in text
    again = from_source(text)
    assert_structural_equal(again, mod)
    assert again.script() == text
    rng = np.random.default_rng(0)
    shapes = [(1, 8), (6, 8), (6,), (3, 6), (3,)]
    x, w0, b0, w1, b1 = [rng.standard_normal(s).astype("float32") for s in shapes]
    vm = relax.VirtualMachine(relax.build(again, "llvm"), tvm.cpu())
    out = vm["main"](*[tvm.nd.array(a) for a in (x, w0, b0, w1, b1)]).numpy()
    expected = np.maximum(x @ w0.T + b0, 0) @ w1.T + b1
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
