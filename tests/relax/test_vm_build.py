"""relax.build end to end: BlockBuilder programs with symbolic shapes compiled once and run by
the VM at several shapes, run-time shape checks, control flow, packed calls, export/load and
profiling."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax, te, tir
from irlab.errors import DiagnosticError, VMError


def te_dense(x, w):
    k = te.reduce_axis((0, w.shape[1]), name="k")
    return te.compute((x.shape[0], w.shape[0]),
                      lambda i, j: te.sum(x[i, k] * w[j, k], axis=k), name="dense")


def te_bias_relu(x, b):
    return te.compute(x.shape, lambda i, j: te.max(x[i, j] + b[j], tir.const(0, x.dtype)),
                      name="bias_relu")


def te_scale(x, factor):
    return te.compute(x.shape, lambda *i: x(*i) * tir.const(factor, x.dtype), name="scale")


def mlp_module():
    """A 2-layer MLP over a symbolic batch ``n``: relu(x @ w0.T + b0) @ w1.T."""
    bb = relax.BlockBuilder()
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n, 16], "float32"))
    w0 = relax.Var("w0", relax.TensorStructInfo([32, 16], "float32"))
    b0 = relax.Var("b0", relax.TensorStructInfo([32], "float32"))
    w1 = relax.Var("w1", relax.TensorStructInfo([10, 32], "float32"))
    with bb.function("main", [x, w0, b0, w1]):
        with bb.dataflow():
            h = bb.emit_te(te_dense, x, w0)
            h = bb.emit_te(te_bias_relu, h, b0)
            out = bb.emit_output(bb.emit_te(te_dense, h, w1))
        bb.emit_func_output(out)
    return bb.get()


def mlp_params(rng):
    return [rng.standard_normal(s).astype("float32") for s in ((32, 16), (32,), (10, 32))]


def mlp_numpy(x, w0, b0, w1):
    return np.maximum(x @ w0.T + b0, 0) @ w1.T


@pytest.fixture(scope="module")
def mlp():
    return relax.build(mlp_module(), "llvm")


def run_mlp(ex, batch, rng):
    vm = relax.VirtualMachine(ex, tvm.cpu())
    x = rng.standard_normal((batch, 16)).astype("float32")
    params = mlp_params(rng)
    out = vm["main"](tvm.nd.array(x), *[tvm.nd.array(p) for p in params])
    np.testing.assert_allclose(out.numpy(), mlp_numpy(x, *params), rtol=1e-4, atol=1e-4)


def test_mlp_compiled_once_runs_at_every_batch(mlp):
    rng = np.random.default_rng(0)
    for batch in (1, 7, 32):
        run_mlp(mlp, batch, rng)


def op_mlp_module():
    """The MLP written with Relax operators (legalized to TOPI by relax.build)."""
    bb = relax.BlockBuilder()
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n, 16], "float32"))
    w0 = relax.Var("w0", relax.TensorStructInfo([16, 32], "float32"))
    b0 = relax.Var("b0", relax.TensorStructInfo([32], "float32"))
    w1 = relax.Var("w1", relax.TensorStructInfo([32, 10], "float32"))
    with bb.function("main", [x, w0, b0, w1]):
        with bb.dataflow():
            h = bb.emit(relax.op.nn.relu(relax.op.add(relax.op.matmul(x, w0), b0)))
            out = bb.emit_output(relax.op.nn.softmax(relax.op.matmul(h, w1)))
        bb.emit_func_output(out)
    return bb.get()


def test_relax_operator_mlp_matches_numpy_and_the_reference_evaluator():
    from irlab.relax.testing import evaluate

    mod = op_mlp_module()
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    rng = np.random.default_rng(4)
    w0, b0, w1 = (rng.standard_normal(s).astype("float32") for s in ((16, 32), (32,), (32, 10)))
    for batch in (1, 7, 32):
        x = rng.standard_normal((batch, 16)).astype("float32")
        got = vm["main"](x, w0, b0, w1).numpy()
        logits = np.maximum(x @ w0 + b0, 0) @ w1
        expected = np.exp(logits - logits.max(1, keepdims=True))
        np.testing.assert_allclose(got, expected / expected.sum(1, keepdims=True), rtol=1e-4,
                                   atol=1e-5)
        np.testing.assert_allclose(got, evaluate(mod, [x, w0, b0, w1]), rtol=1e-6,
                                   atol=1e-6)


def test_fused_mlp_from_the_zero_pipeline_runs_at_every_batch():
    """The MLC course's flow: get_pipeline("zero") (legalize, fuse), then relax.build."""
    mod = relax.get_pipeline("zero")(op_mlp_module())
    ex = relax.build(mod, "llvm")
    assert "call  fused_" in ex.as_text()
    vm = relax.VirtualMachine(ex, tvm.cpu())
    rng = np.random.default_rng(5)
    w0, b0, w1 = (rng.standard_normal(s).astype("float32") for s in ((16, 32), (32,), (32, 10)))
    for batch in (1, 7, 32):
        x = rng.standard_normal((batch, 16)).astype("float32")
        logits = np.maximum(x @ w0 + b0, 0) @ w1
        expected = np.exp(logits - logits.max(1, keepdims=True))
        np.testing.assert_allclose(vm["main"](x, w0, b0, w1).numpy(),
                                   expected / expected.sum(1, keepdims=True), rtol=1e-4,
                                   atol=1e-5)


def test_wrong_input_shape_names_the_dimension(mlp):
    vm = relax.VirtualMachine(mlp, tvm.cpu())
    rng = np.random.default_rng(1)
    w0, b0, w1 = (tvm.nd.array(p) for p in mlp_params(rng))
    with pytest.raises(VMError, match=r"main: param x: .*shape\[1\] is 12, expected 16"):
        vm["main"](tvm.nd.array(np.zeros((4, 12), "float32")), w0, b0, w1)
    with pytest.raises(VMError, match="param w0: .*expected a Tensor with dtype float32, got "
                                      "float64"):
        vm["main"](tvm.nd.array(np.zeros((4, 16), "float32")),
                   tvm.nd.array(np.zeros((32, 16))), b0, w1)
    run_mlp(mlp, 3, rng)  # the VM is still usable


def test_failing_match_cast_at_run_time_names_the_dimension():
    bb = relax.BlockBuilder()
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n, 4], "float32"))
    y = relax.Var("y", relax.TensorStructInfo(dtype="float32", ndim=1))
    with bb.function("main", [x, y]):
        y1 = bb.match_cast(y, relax.TensorStructInfo([n], "float32"))
        out = bb.emit_te(te_scale, y1, 2.0)
        bb.emit_func_output(out)
    vm = relax.VirtualMachine(relax.build(bb.get(), "llvm"), tvm.cpu())
    y_data = np.arange(3, dtype="float32")
    np.testing.assert_allclose(vm["main"](np.zeros((3, 4), "float32"), y_data).numpy(),
                               2 * y_data)
    with pytest.raises(VMError, match=r"match_cast .*shape\[0\] \(n\) is 5, but n = 3"):
        vm["main"](np.zeros((3, 4), "float32"), np.zeros(5, "float32"))


def test_shape_of_a_tensor_of_unknown_rank_in_vm_and_evaluator():
    """``R.shape_of`` of an unknown-rank tensor stays an op (not legalized): the reference
    evaluator computes it itself instead of legalizing it again and again."""
    from irlab.relax.testing import evaluate

    bb = relax.BlockBuilder()
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    x = relax.Var("x", relax.TensorStructInfo(dtype="float32"))
    with bb.function("main", [x]):
        shape = bb.emit(relax.op.shape_of(x))
        out = bb.match_cast(shape, relax.ShapeStructInfo([n, m]))
        bb.emit_func_output(out)
    mod = bb.get()
    data = np.zeros((2, 5), "float32")
    assert tuple(evaluate(mod, [data], "main")) == (2, 5)
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    assert tuple(vm["main"](data)) == (2, 5)


def test_compound_dims_are_computed_on_the_shape_heap():
    def flatten(x, out):
        out.copyfrom(x.numpy().reshape(-1))

    tvm.register_func("test.relax_vm.flatten", flatten, override=True)
    bb = relax.BlockBuilder()
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n, m], "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            flat = bb.emit(relax.op.call_dps_packed(
                "test.relax_vm.flatten", [x], relax.TensorStructInfo([n * m], "float32")))
            out = bb.emit_output(flat)
        bb.emit_func_output(out)
    ex = relax.build(bb.get(), "llvm")
    assert "call  shape_func(" in ex.as_text()
    vm = relax.VirtualMachine(ex, tvm.cpu())
    for shape in ((2, 3), (5, 1), (4, 7)):
        data = np.random.rand(*shape).astype("float32")
        np.testing.assert_array_equal(vm["main"](data).numpy(), data.reshape(-1))


def test_compound_dims_of_operators_reach_kernels_as_tir_vars():
    """reshape to (n*m, 4) and concat to (2*n*m, 4): the kernels take n*m as a tir_var."""
    from irlab.relax.testing import evaluate

    bb = relax.BlockBuilder()
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n, m, 4], "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            flat = bb.emit(relax.op.reshape(x, [n * m, 4]))
            total = bb.emit(relax.op.sum(flat, axis=[1]))
            both = bb.emit(relax.op.concat([flat, flat], axis=0))
            out = bb.emit_output(relax.Tuple([total, both]))
        bb.emit_func_output(out)
    mod = bb.get()
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    for shape in ((2, 3, 4), (5, 1, 4), (1, 7, 4)):
        data = np.random.rand(*shape).astype("float32")
        total, both = vm["main"](data)
        np.testing.assert_allclose(total.numpy(), data.reshape(-1, 4).sum(1), rtol=1e-6)
        np.testing.assert_array_equal(both.numpy(), np.concatenate([data.reshape(-1, 4)] * 2))
        np.testing.assert_array_equal(both.numpy(), evaluate(mod, [data])[1])


def test_if_and_packed_calls():
    tvm.register_func("test.relax_vm.add_one", lambda a: tvm.nd.array(a.numpy() + 1),
                      override=True)
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo([4], "float32"))
    cond = relax.Var("cond", relax.TensorStructInfo([], "bool"))
    sinfo = relax.TensorStructInfo([4], "float32")
    with bb.function("main", [cond, x], pure=False):
        doubled = bb.emit_te(te_scale, x, 2.0)
        chosen = bb.emit(relax.If(cond, doubled, x))
        out = bb.emit(relax.op.call_packed("test.relax_vm.add_one", chosen, sinfo_args=sinfo))
        bb.emit_func_output(out)
    vm = relax.VirtualMachine(relax.build(bb.get(), "llvm"), tvm.cpu())
    data = np.arange(4, dtype="float32")
    np.testing.assert_allclose(vm["main"](np.array(True), data).numpy(), 2 * data + 1)
    np.testing.assert_allclose(vm["main"](np.array(False), data).numpy(), data + 1)


def test_relax_function_calls_another():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo([3], "float32"))
    with bb.function("double", [x]):
        bb.emit_func_output(bb.emit_te(te_scale, x, 2.0))
    double = bb.get().get_global_var("double")
    z = relax.Var("z", relax.TensorStructInfo([3], "float32"))
    with bb.function("main", [z]):
        once = bb.emit(relax.Call(double, [z]))
        bb.emit_func_output(bb.emit(relax.Call(double, [once])))
    vm = relax.VirtualMachine(relax.build(bb.get(), "llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](np.ones(3, "float32")).numpy(), 4 * np.ones(3))


@pytest.mark.parametrize("suffix", [".irlab", ".so"])
def test_export_and_load_round_trip(mlp, tmp_path, suffix):
    if suffix == ".so" and tvm.runtime.module.find_c_compiler() is None:
        pytest.skip("no C compiler to link a .so")
    path = str(tmp_path / f"mlp{suffix}")
    mlp.export_library(path)
    loaded = tvm.runtime.load_module(path)
    assert loaded.as_text() == mlp.as_text()
    rng = np.random.default_rng(2)
    for batch in (1, 7):
        run_mlp(loaded, batch, rng)


def test_profile_reports_kernels_and_builtins(mlp):
    vm = relax.VirtualMachine(mlp, tvm.cpu(), profile=True)
    rng = np.random.default_rng(3)
    args = [np.zeros((8, 16), "float32")] + mlp_params(rng)
    report = vm.profile("main", *[tvm.nd.array(a) for a in args])
    callees = [row.callee for row in report.rows]
    assert callees.count("te_dense") == 1 and callees.count("te_dense1") == 1
    assert "vm.builtin.match_shape" in callees and "te_bias_relu" in callees
    assert "float32[8, 16]" in str(report)


def test_codegen_refuses_unlowered_programs():
    mod = mlp_module()
    with pytest.raises(DiagnosticError, match="relax.call_tir is left in the program: run "
                                              "CallTIRRewrite"):
        relax.build(mod, "llvm", pipeline=relax.transform.ToNonDataflow())


def test_pipelines_are_visible_lists():
    names = relax.pipeline.PIPELINES["default_build"]
    assert names.index("CallTIRRewrite") < names.index("StaticPlanBlockMemory") < \
        names.index("VMShapeLower") < names.index("AttachGlobalSymbol")
    run = [p.info.name for p in relax.pipeline.pipeline_passes("default_build")]
    assert run == names[-len(run):] and "LegalizeOps" in run
    assert relax.get_pipeline("zero").info.name == "relax.zero_pipeline"


def test_kernels_are_compiled_for_the_target_given():
    ex = relax.build(mlp_module(), "llvm -num-cores=1")
    assert "-num-cores=1" in str(ex.imported_modules[0].target)
