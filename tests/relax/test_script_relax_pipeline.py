"""TVMScript for Relax after each pass of ``relax.build``'s pipeline: every intermediate
module prints, parses back (equal once normalized: a pass may leave adjacent binding blocks,
which text merges) and prints the same; the lowered module, parsed from its text, builds
without the pipeline and computes what the original does."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax
from irlab.ir import assert_structural_equal
from irlab.relax.pipeline import pipeline_passes
from irlab.script import from_source
from irlab.script import ir as I
from irlab.script import relax as R
from irlab.script import tir as T


@I.ir_module
class Mlp:
    @T.prim_func
    def scale(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 3), "float32")
        B = T.match_buffer(b, (n, 3), "float32")
        for i, j in T.grid(n, 3):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)

    @R.function(pure=False)
    def main(x: R.Tensor(("n", 4), "float32"), w: R.Tensor(dtype="float32", ndim=2)):
        n = T.int64()
        cls = Mlp
        with R.dataflow():
            w1 = R.match_cast(w, R.Tensor((4, 3), "float32"))
            lv = R.matmul(x, w1)
            lv1 = R.nn.relu(lv)
            gv = R.call_tir(cls.scale, (lv1,), out_sinfo=R.Tensor((n, 3), "float32"))
            R.output(gv)
        R.call_packed("script_test_observe", gv, sinfo_args=R.Tuple())
        return gv


@pytest.fixture
def observe():
    tvm.register_func("script_test_observe", lambda array: None, override=True)
    yield
    tvm.runtime.registry.remove_global_func("script_test_observe")


def _normalized(mod):
    """``mod`` with its Relax functions normalized (adjacent blocks of one kind merged)."""
    bb = relax.BlockBuilder(mod)
    return tvm.IRModule({gv: bb.normalize(f) if isinstance(f, relax.Function) else f
                         for gv, f in mod.functions.items()})


def _lowered_stages():
    mod, stages = Mlp, []
    for p in pipeline_passes("zero") + pipeline_passes("default_build"):
        mod = p(mod)
        stages.append((f"{len(stages)}-{p.info.name}", mod))
    return stages


STAGES = _lowered_stages()


@pytest.mark.parametrize("name, mod", STAGES, ids=[name for name, _ in STAGES])
def test_each_pipeline_stage_prints_and_parses_back(name, mod):
    text = mod.script()
    again = from_source(text)
    assert again.script() == text
    # Relax functions one by one: FuseOps' functions share the caller's symbolic vars (a
    # module compare sees them defined twice), text gives each function its own; VMShapeLower
    # drops match_casts, whose symbolic vars become free, hence map_free_vars. PrimFuncs are
    # the TIR printer's (FuseTIR's int64 loops over int32 dims print as int32: text only).
    assert sorted(gv.name_hint for gv in again.functions) == \
        sorted(gv.name_hint for gv in mod.functions)
    for gv, func in _normalized(mod).functions.items():
        if isinstance(func, relax.Function):
            assert_structural_equal(func, again[gv.name_hint], map_free_vars=True)


def test_lowered_text_shows_vm_builtins_and_dps_calls():
    text = STAGES[-1][1].script()
    assert 'R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", ' in text
    assert "alloc_tensor(" in text  # R.builtin.alloc_tensor or planned R.vm.alloc_tensor
    assert "cls.fused_matmul_relu_scale(x, w1, alloc" in text  # a PrimFunc called in DPS


def test_lowered_module_parsed_from_text_builds_and_runs(observe):
    lowered = from_source(STAGES[-1][1].script())
    vm = relax.VirtualMachine(relax.build(lowered, "llvm", pipeline=None), tvm.cpu())
    reference = relax.VirtualMachine(relax.build(Mlp, "llvm"), tvm.cpu())
    rng = np.random.default_rng(0)
    for n in (1, 6):
        x = rng.standard_normal((n, 4)).astype("float32")
        w = rng.standard_normal((4, 3)).astype("float32")
        out = vm["main"](tvm.nd.array(x), tvm.nd.array(w)).numpy()
        np.testing.assert_allclose(out, np.maximum(x @ w, 0) * 2, rtol=1e-5)
        expected = reference["main"](tvm.nd.array(x), tvm.nd.array(w)).numpy()
        np.testing.assert_allclose(out, expected, rtol=1e-6)
