"""DefaultCPUSchedule (the generic CPU schedule of legalized kernels) and FoldConstant's cap:
loops made parallel / vectorized by the target's width, and the VM equal to numpy at
several shapes."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax, tir
from irlab.relax.transform.default_cpu_schedule import schedule_cpu_func
from irlab.tir.functor import post_order_visit
from irlab.relax.transform.fold_constant import FOLD_ELEMENTS_CAP
from op_testing import rand, sym, tensor

R = relax.op


def _loops(func):
    found = []
    post_order_visit(
        func.body, lambda n: found.append(n) if isinstance(n, tir.For) else None)
    return found


def _kinds(func):
    return {(lp.kind, int(lp.extent.value) if isinstance(lp.extent, tir.IntImm) else None)
            for lp in _loops(func)}


def _mlp(batch, w1, b1, w2):
    x = relax.Var("x", tensor([batch, w1.shape[0]]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(R.nn.relu(R.add(R.matmul(x, relax.const(w1)), relax.const(b1))))
            out = bb.emit(R.nn.softmax(R.matmul(h, R.permute_dims(relax.const(w2)))))
            gv = bb.emit_output(out)
        bb.emit_func_output(gv)
    return bb.get()


def _ref(x, w1, b1, w2):
    h = np.maximum(x @ w1 + b1, 0) @ w2.T
    e = np.exp(h - h.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


WEIGHTS = (rand((24, 32), seed=2), rand((32,), seed=3), rand((10, 32), seed=4))


@pytest.mark.parametrize("symbolic", [True, False])
def test_mlp_zero_pipeline_then_build_equals_numpy(symbolic):
    batch = sym("n") if symbolic else 8
    mod = relax.get_pipeline("zero")(_mlp(batch, *WEIGHTS))
    relax.analysis.verify_well_formed(mod)
    prims = {gv.name_hint: f for gv, f in mod.items() if isinstance(f, tir.PrimFunc)}
    assert all(f.attrs.get("tir.is_scheduled") for f in prims.values())
    matmul = next(f for name, f in prims.items() if name.startswith("fused_matmul_add"))
    kinds = {kind for kind, _ in _kinds(matmul)}
    assert tir.ForKind.PARALLEL in kinds and tir.ForKind.VECTORIZED in kinds
    # the transpose of the constant weight was folded: no kernel transposes at run time
    assert not any("transpose" in name or "permute" in name for name in prims)
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    for b in ((1, 7, 32) if symbolic else (8,)):
        x = rand((b, 24), seed=b)
        out = vm["main"](tvm.nd.array(x)).numpy()
        np.testing.assert_allclose(out, _ref(x, *WEIGHTS), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mcpu, lanes", [("haswell", 8), ("skylake-avx512", 16)])
def test_vector_width_follows_target(mcpu, lanes):
    mod = relax.transform.LegalizeOps()(_mlp(4, *WEIGHTS))
    with tvm.target.Target(f"llvm -mcpu={mcpu}"):
        mod = relax.transform.DefaultCPUSchedule()(mod)
    matmul = next(f for gv, f in mod.items() if gv.name_hint == "matmul")
    assert (tir.ForKind.VECTORIZED, lanes) in _kinds(matmul)


def test_relax_build_schedules_kernels_and_runs_them():
    """``relax.build`` alone (no zero pipeline): the kernels LegalizeOps makes are scheduled
    too; batch 5 leaves a row tile of the matmul partial."""
    ex = relax.build(_mlp(sym("n"), *WEIGHTS), "llvm")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    for b in (1, 5):
        x = rand((b, 24), seed=b)
        out = vm["main"](tvm.nd.array(x)).numpy()
        np.testing.assert_allclose(out, _ref(x, *WEIGHTS), rtol=1e-5, atol=1e-6)


def test_scheduled_kernels_are_left_alone():
    mod = relax.transform.LegalizeOps()(_mlp(4, *WEIGHTS))
    func = next(f for f in mod.functions.values() if isinstance(f, tir.PrimFunc))
    marked = func.with_attr("tir.is_scheduled", True)
    assert schedule_cpu_func(marked) is marked
    once = schedule_cpu_func(func)
    assert schedule_cpu_func(once) is once
    assert schedule_cpu_func(func, "c") is func  # only LLVM CPU targets are scheduled


def test_pipeline_order():
    zero = relax.pipeline.PIPELINES["zero"]
    assert zero.index("DefaultCPUSchedule") == zero.index("FuseTIR") + 1
    build = relax.pipeline.PIPELINES["default_build"]
    assert build.index("DefaultCPUSchedule") == build.index("LegalizeOps") + 1


def _const_module(make):
    bb = relax.BlockBuilder()
    with bb.function("main", []):
        with bb.dataflow():
            gv = bb.emit_output(make())
        bb.emit_func_output(gv)
    return relax.transform.LegalizeOps()(bb.get())


def _main_calls(mod):
    return [b.value for block in mod["main"].body.blocks for b in block.bindings
            if isinstance(b.value, relax.Call)]


def test_fold_constant_folds_small_and_keeps_huge():
    w = rand((6, 5), seed=1)
    folded = relax.transform.FoldConstant()(_const_module(
        lambda: R.permute_dims(relax.const(w))))
    assert not _main_calls(folded)
    vm = relax.VirtualMachine(relax.build(folded, "llvm"), tvm.cpu())
    np.testing.assert_array_equal(vm["main"]().numpy(), w.T)
    side = int(np.sqrt(FOLD_ELEMENTS_CAP)) * 2  # 4x the cap, from a 1-element constant
    huge = _const_module(lambda: R.broadcast_to(relax.const(np.float32(1.5)), (side, side)))
    kept = relax.transform.FoldConstant()(huge)
    assert len(_main_calls(kept)) == 1


def _conv_ref(x, w, stride):
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
    windows = windows[:, :, ::stride, ::stride]
    return np.maximum(np.einsum("nchwij,ocij->nohw", windows, w), 0)


@pytest.mark.parametrize("batch, stride", [(2, 1), (None, 1), (None, 2)])
def test_conv2d_register_tiled_equals_numpy(batch, stride):
    """A 12-wide row is vectorized by 12 lanes (the largest divisor under the width); the
    padding stays a stage of its own; a strided convolution's rows stay scalar."""
    w = rand((8, 4, 3, 3), seed=7)
    x = relax.Var("x", tensor([batch or sym("n"), 4, 12, 12]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            conv = R.nn.conv2d(x, relax.const(w), strides=(stride, stride), padding=(1, 1))
            gv = bb.emit_output(R.nn.relu(conv))
        bb.emit_func_output(gv)
    with tvm.target.Target("llvm -mcpu=skylake-avx512"):
        named = relax.get_pipeline("zero")(bb.get())
    conv = next(f for gv, f in named.items() if gv.name_hint.startswith("fused_conv2d"))
    assert ((tir.ForKind.VECTORIZED, 12) in _kinds(conv)) == (stride == 1)
    mod = relax.get_pipeline("zero")(bb.get())  # scheduled for this host, to run here
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    for b in ([batch] if batch else [1, 3]):
        data = rand((b, 4, 12, 12), seed=b)
        np.testing.assert_allclose(vm["main"](tvm.nd.array(data)).numpy(), _conv_ref(data, w, stride),
                                   rtol=1e-5, atol=1e-5)


def test_short_rows_sum_in_unrolled_tile():
    """A 2x2 feature map (ResNet's last stage at a small input): the 2x2 output loops go
    under the reduction, unrolled; equal to numpy."""
    w = rand((8, 16, 3, 3), seed=8)
    x = relax.Var("x", tensor([1, 16, 2, 2]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(R.nn.relu(R.nn.conv2d(x, relax.const(w), padding=(1, 1))))
        bb.emit_func_output(gv)
    mod = relax.get_pipeline("zero")(bb.get())
    conv = next(f for gv, f in mod.items() if gv.name_hint.startswith("fused_conv2d"))
    assert (tir.ForKind.UNROLLED, 2) in _kinds(conv)
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    data = rand((1, 16, 2, 2), seed=9)
    np.testing.assert_allclose(vm["main"](tvm.nd.array(data)).numpy(), _conv_ref(data, w, 1),
                               rtol=1e-5, atol=1e-5)
