"""The MLC course's end-to-end chapter, which seed 001 (section 0x1.4, D2b) points to for
``call_tir`` into TensorIR and into packed functions called through DLPack: the two-layer MLP as
a Relax ``main`` calling the module's PrimFuncs, the same with external ``env.linear`` /
``env.relu``, the mixture of both, and its parameters bound as constants (``BindParams``).

Changes from the course (2022), each said where made: ``R.call_tir(linear0, args, (1, 128),
dtype="float32")`` -> ``R.call_tir(cls.linear0, args, out_sinfo=R.Tensor((1, 128),
"float32"))``, an external name as ``R.call_dps_packed`` (today's spelling); ``T.Buffer[...]``
-> ``T.Buffer(...)``; ``relax.vm.build`` -> ``relax.build``. The course's FashionMNIST weights
and image are random arrays here. The course calls PyTorch through DLPack; torch is not an irlab
dependency, so numpy's DLPack import (``np.from_dlpack``, zero-copy like ``torch.from_dlpack``)
and its ``out=`` operations stand in for torch's.
"""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax
from irlab.script import ir as I  # noqa: F401  (the course's imports)
from irlab.script import relax as R
from irlab.script import tir as T


@tvm.script.ir_module
class MyModule:
    @T.prim_func
    def relu0(X: T.Buffer((1, 128), "float32"), Y: T.Buffer((1, 128), "float32")):
        # function attr dict
        T.func_attr({"global_symbol": "relu0", "tir.noalias": True})
        for i, j in T.grid(1, 128):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @T.prim_func
    def linear0(X: T.Buffer((1, 784), "float32"), W: T.Buffer((128, 784), "float32"),
                B: T.Buffer((128,), "float32"), Z: T.Buffer((1, 128), "float32")):
        T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
        Y = T.alloc_buffer((1, 128), "float32")
        for i, j, k in T.grid(1, 128, 784):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, 128):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @T.prim_func
    def linear1(X: T.Buffer((1, 128), "float32"), W: T.Buffer((10, 128), "float32"),
                B: T.Buffer((10,), "float32"), Z: T.Buffer((1, 10), "float32")):
        T.func_attr({"global_symbol": "linear1", "tir.noalias": True})
        Y = T.alloc_buffer((1, 10), "float32")
        for i, j, k in T.grid(1, 10, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, 10):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor((1, 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        cls = MyModule
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), out_sinfo=R.Tensor((1, 128), "float32"))
            lv1 = R.call_tir(cls.relu0, (lv0,), out_sinfo=R.Tensor((1, 128), "float32"))
            out = R.call_tir(cls.linear1, (lv1, w1, b1), out_sinfo=R.Tensor((1, 10), "float32"))
            R.output(out)
        return out


@tvm.script.ir_module
class MyModuleWithExternCall:
    @R.function
    def main(x: R.Tensor((1, 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        # block 0
        with R.dataflow():
            lv0 = R.call_dps_packed("env.linear", (x, w0, b0),
                                    out_sinfo=R.Tensor((1, 128), "float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), out_sinfo=R.Tensor((1, 128), "float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1),
                                    out_sinfo=R.Tensor((1, 10), "float32"))
            R.output(out)
        return out


@tvm.script.ir_module
class MyModuleMixture:
    @T.prim_func
    def linear0(X: T.Buffer((1, 784), "float32"), W: T.Buffer((128, 784), "float32"),
                B: T.Buffer((128,), "float32"), Z: T.Buffer((1, 128), "float32")):
        T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
        Y = T.alloc_buffer((1, 128), "float32")
        for i, j, k in T.grid(1, 128, 784):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, 128):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor((1, 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        cls = MyModuleMixture
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), out_sinfo=R.Tensor((1, 128), "float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), out_sinfo=R.Tensor((1, 128), "float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1),
                                    out_sinfo=R.Tensor((1, 10), "float32"))
            R.output(out)
        return out


@pytest.fixture
def env_funcs():
    """The course's ``env.linear`` / ``env.relu``, torch's DLPack calls done by numpy's."""
    @tvm.register_func("env.linear", override=True)
    def torch_linear(x: tvm.nd.NDArray, w: tvm.nd.NDArray, b: tvm.nd.NDArray,
                     out: tvm.nd.NDArray):
        x_torch = np.from_dlpack(x)
        w_torch = np.from_dlpack(w)
        b_torch = np.from_dlpack(b)
        out_torch = np.from_dlpack(out)
        np.matmul(x_torch, w_torch.T, out=out_torch)
        np.add(out_torch, b_torch, out=out_torch)

    @tvm.register_func("env.relu", override=True)
    def lnumpy_relu(x: tvm.nd.NDArray, out: tvm.nd.NDArray):
        x_torch = np.from_dlpack(x)
        out_torch = np.from_dlpack(out)
        np.maximum(x_torch, 0, out=out_torch)

    yield
    for name in ("env.linear", "env.relu"):
        tvm.runtime.registry.remove_global_func(name)


@pytest.fixture(scope="module")
def mlp_params():
    rng = np.random.default_rng(0)
    mlp_params = {"w0": rng.standard_normal((128, 784)).astype("float32") * 0.05,
                  "b0": rng.standard_normal(128).astype("float32"),
                  "w1": rng.standard_normal((10, 128)).astype("float32") * 0.1,
                  "b1": rng.standard_normal(10).astype("float32")}
    img = rng.random((1, 28, 28)).astype("float32")
    data_nd = tvm.nd.array(img.reshape(1, 784))
    nd_params = {k: tvm.nd.array(v) for k, v in mlp_params.items()}
    h = np.maximum(img.reshape(1, 784) @ mlp_params["w0"].T + mlp_params["b0"], 0)
    expected = h @ mlp_params["w1"].T + mlp_params["b1"]
    return data_nd, nd_params, expected


def _run(mod, data_nd, nd_params, with_params=True, optimize=False):
    if optimize:  # TVM's zero pipeline first: legalize, fuse (linear0 + relu0 become one)
        mod = relax.get_pipeline()(mod)
    ex = relax.build(mod, target="llvm")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    if not with_params:
        return vm["main"](data_nd)
    return vm["main"](data_nd, nd_params["w0"], nd_params["b0"], nd_params["w1"],
                      nd_params["b1"])


@pytest.mark.parametrize("optimize", [False, True], ids=["as_written", "fused"])
def test_mlc_e2e_my_module(mlp_params, optimize):
    data_nd, nd_params, expected = mlp_params
    nd_res = _run(MyModule, data_nd, nd_params, optimize=optimize)
    fused = [gv.name_hint for gv in relax.get_pipeline()(MyModule).get_global_vars()]
    assert "fused_linear0_relu0" in fused
    np.testing.assert_allclose(nd_res.numpy(), expected, rtol=1e-4, atol=1e-4)
    assert np.argmax(nd_res.numpy(), axis=1) == np.argmax(expected, axis=1)


def test_mlc_e2e_extern_call(env_funcs, mlp_params):
    data_nd, nd_params, expected = mlp_params
    nd_res = _run(MyModuleWithExternCall, data_nd, nd_params)
    np.testing.assert_allclose(nd_res.numpy(), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("optimize", [False, True], ids=["as_written", "fused"])
def test_mlc_e2e_mixture_and_bind_params(env_funcs, mlp_params, optimize):
    data_nd, nd_params, expected = mlp_params
    nd_res = _run(MyModuleMixture, data_nd, nd_params, optimize=optimize)
    np.testing.assert_allclose(nd_res.numpy(), expected, rtol=1e-4, atol=1e-4)
    MyModuleWithParams = relax.transform.BindParams("main", nd_params)(MyModuleMixture)
    assert [p.name_hint for p in MyModuleWithParams["main"].params] == ["x"]
    nd_res = _run(MyModuleWithParams, data_nd, nd_params, with_params=False, optimize=optimize)
    np.testing.assert_allclose(nd_res.numpy(), expected, rtol=1e-4, atol=1e-4)
