"""Design spaces of TE workloads (GEMM, conv2d + ReLU, softmax) under the default CPU rules:
the spaces generate; random samples, postprocessed, and their mutations compute what numpy
computes (run by the TIR interpreter)."""

import json

import numpy as np
import pytest

from irlab import meta_schedule as ms
from irlab import te, tir
from irlab.ir.structural import assert_structural_equal
from irlab.tir.analysis import verify_well_formed
from irlab.tir.interpreter import run
from irlab.tir.schedule import RandomEngine, Schedule, ScheduleError, Trace

TARGET = "llvm -num-cores=2"


def gemm(m=8, n=8, k=8):
    A = te.placeholder((m, k), name="A")
    B = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return te.create_prim_func([A, B, C])


def conv2d_relu():
    data = te.placeholder((1, 2, 4, 4), name="data")
    weight = te.placeholder((2, 2, 3, 3), name="weight")
    pad = te.compute((1, 2, 6, 6), lambda n, c, y, x: tir.if_then_else(
        tir.all(y >= 1, y < 5, x >= 1, x < 5), data[n, c, y - 1, x - 1],
        tir.const(0, "float32")), name="pad")
    rc = te.reduce_axis((0, 2), name="rc")
    ry = te.reduce_axis((0, 3), name="ry")
    rx = te.reduce_axis((0, 3), name="rx")
    conv = te.compute((1, 2, 4, 4), lambda n, f, y, x: te.sum(
        pad[n, rc, y + ry, x + rx] * weight[f, rc, ry, rx], axis=[rc, ry, rx]), name="conv")
    relu = te.compute((1, 2, 4, 4), lambda n, f, y, x: te.max(conv[n, f, y, x], 0.0),
                      name="relu")
    return te.create_prim_func([data, weight, relu])


def softmax(n=4, m=8):
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), name="k")
    mx = te.compute((n,), lambda i: te.max(A[i, k], axis=k), name="mx")
    ex = te.compute((n, m), lambda i, j: te.exp(A[i, j] - mx[i]), name="ex")
    k2 = te.reduce_axis((0, m), name="k2")
    sm = te.compute((n,), lambda i: te.sum(ex[i, k2], axis=k2), name="sm")
    out = te.compute((n, m), lambda i, j: ex[i, j] / sm[i], name="out")
    return te.create_prim_func([A, out])


WORKLOADS = {"gemm": gemm, "conv2d_relu": conv2d_relu, "softmax": softmax}


def _np_conv2d_relu(data, weight):
    padded = np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((1, weight.shape[0], 4, 4), "float64")
    for y in range(4):
        for x in range(4):
            window = padded[0, :, y:y + 3, x:x + 3]
            out[0, :, y, x] = np.tensordot(weight, window, axes=([1, 2, 3], [0, 1, 2]))
    return np.maximum(out, 0)


def _np_softmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


NUMPY = {"gemm": lambda a, b: a @ b, "conv2d_relu": _np_conv2d_relu, "softmax": _np_softmax}


def inputs(func, seed=0):
    """Random inputs and a zeroed output array, in parameter order."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(tuple(int(s.value) for s in func.buffer_map[p].shape))
              .astype("float32") for p in func.params]
    arrays[-1][...] = 0
    return arrays


def outputs(func, seed=0):
    arrays = inputs(func, seed)
    run(func, *arrays)
    return arrays[-1]


def context(func, rand_state=0):
    return ms.TuneContext(func, target=TARGET, space_generator="post-order-apply",
                          rand_state=rand_state)


def replay(ctx, trace, seed):
    """``trace`` replayed on the workload (its missing decisions sampled) and
    postprocessed; None when a postprocessor rejects it."""
    sch = Schedule(ctx.mod, seed=seed, enable_check=False)
    trace.apply_to_schedule(sch, remove_postproc=True)
    ok = ms.postproc.apply_postprocs(sch, ctx.space_generator.postprocs)
    return sch if ok else None


def sample(ctx, space, seed):
    """A random point of ``space``: its trace with every decision dropped."""
    return replay(ctx, Trace(space.trace.insts), seed)


def pick_mutator(ctx, rand):
    mutators = list(ctx.space_generator.mutator_probs.items())
    return mutators[rand.choice([p for _, p in mutators])][0]


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_samples_and_mutations_compute_the_same(name):
    func = WORKLOADS[name]()
    expected = NUMPY[name](*[a.astype("float64") for a in inputs(func)[:-1]])
    np.testing.assert_allclose(outputs(func), expected, rtol=1e-4, atol=1e-5)
    ctx = context(func)
    spaces = ctx.generate_design_space()
    rand = RandomEngine(1)
    checked, mutated = 0, 0
    for seed in range(50):
        sch = sample(ctx, spaces[seed % len(spaces)], seed)
        if sch is None:
            continue
        np.testing.assert_allclose(outputs(sch.mod["main"]), expected, rtol=1e-4, atol=1e-5)
        checked += 1
        new_trace = pick_mutator(ctx, rand).apply(sch.trace, rand)
        if new_trace is None:
            continue
        mutant = replay(ctx, new_trace, seed)
        if mutant is not None:
            np.testing.assert_allclose(outputs(mutant.mod["main"]), expected, rtol=1e-4,
                                       atol=1e-5)
            mutated += 1
    verify_well_formed(sch.mod)
    assert checked >= 40 and mutated >= 20, (checked, mutated)


def test_gemm_space_structure():
    ctx = context(gemm())
    spaces = ctx.generate_design_space()
    assert len(spaces) == 3  # no write cache, a cache at tile level 1, at tile level 2
    kinds = [[i.kind for i in s.trace.insts] for s in spaces]
    assert sorted(k.count("cache_write") for k in kinds) == [0, 1, 1]
    for trace_kinds in kinds:
        assert trace_kinds.count("sample_perfect_tile") == 3  # i, j: 4 tiles; k: 2
        assert trace_kinds.count("sample_categorical") == 1  # the unroll depth
    sch = sample(ctx, spaces[1], seed=3)
    text = sch.mod.script()
    assert "T.parallel" in text and 'T.block("C_init")' in text
    loops = [lp for lp in ms.block_analysis.loops_of(sch, sch.get_block("C"))]
    assert len(loops) >= 8  # SSRSRS: tiled


def test_rules_on_conv2d_and_softmax():
    conv_spaces = context(conv2d_relu()).generate_design_space()
    conv_text = conv_spaces[0].mod.script()
    assert 'T.block("pad")' not in conv_text  # AutoInline: the padding went into conv
    # MultiLevelTiling: the elementwise ReLU is the write cache, computed at tile level 1 or 2
    kinds = sorted(tuple(i.kind for i in s.trace.insts) for s in conv_spaces)
    assert [k.count("reverse_compute_at") for k in kinds] == [0, 1, 1]
    assert not any("cache_write" in k for k in kinds)
    soft_spaces = context(softmax()).generate_design_space()
    # AddRFactor: both reductions (max and sum) get an rfactor variant per split tile
    rfactored = [s for s in soft_spaces if "rfactor" in [i.kind for i in s.trace.insts]]
    assert len(soft_spaces) == 9 and len(rfactored) == 8
    # exp is disallowed for AutoInline; RandomComputeLocation samples where it goes
    for s in soft_spaces:
        kinds = [i.kind for i in s.trace.insts]
        assert "sample_compute_location" in kinds and "compute_inline" not in kinds


def test_design_space_is_reproducible_and_round_trips_through_json():
    func = softmax()
    first = [json.dumps(s.trace.as_json()) for s in context(func, 7).generate_design_space()]
    again = [json.dumps(s.trace.as_json()) for s in context(func, 7).generate_design_space()]
    assert first == again
    ctx = context(gemm(), 3)
    sch = sample(ctx, ctx.generate_design_space()[2], seed=5)
    record = json.loads(json.dumps(sch.trace.as_json()))
    assert record[0][-1][0] != "EnterPostproc"  # postprocessing is part of the record
    fresh = Schedule(ctx.mod)
    Trace.apply_json_to_schedule(record, fresh)
    assert_structural_equal(fresh.mod, sch.mod)


def test_schedule_fn_and_union():
    def tile(sch):
        block = sch.get_block("C")
        i, j, k = sch.get_loops(block)
        sch.split(i, sch.sample_perfect_tile(i, 2, max_innermost_factor=4))

    union = ms.space_generator.SpaceGeneratorUnion(
        [ms.space_generator.ScheduleFn(tile), ms.space_generator.PostOrderApply()])
    ctx = ms.TuneContext(gemm(), target=TARGET, space_generator=union, rand_state=0)
    spaces = ctx.generate_design_space()
    assert len(spaces) == 4
    assert [i.kind for i in spaces[0].trace.insts].count("sample_perfect_tile") == 1
    fn_ctx = ms.TuneContext(gemm(), target=TARGET, space_generator=tile)
    assert isinstance(fn_ctx.space_generator, ms.space_generator.ScheduleFn)


def test_tune_context():
    ctx = context(gemm(), 5)
    assert list(ctx.mod.functions)[0].name_hint == "main" and ctx.num_threads >= 1
    assert ctx.space_generator.sch_rules and ctx.space_generator.postprocs
    clone = ctx.clone()
    assert clone.space_generator is not ctx.space_generator
    with pytest.raises(ValueError, match="space_generator"):
        ms.TuneContext(gemm(), target=TARGET).generate_design_space()
    with pytest.raises(ValueError, match="from-target"):
        ms.space_generator.PostOrderApply().generate_design_space(gemm())
    rules = ms.schedule_rule.ScheduleRule.create("llvm")
    assert [type(r).__name__ for r in rules] == [
        "ApplyCustomRule", "AutoInline", "AddRFactor", "MultiLevelTiling",
        "ParallelizeVectorizeUnroll", "RandomComputeLocation"]
    spaces = ms.space_generator.PostOrderApply(sch_rules="llvm").generate_design_space(gemm())
    assert len(spaces) == 3


@pytest.mark.parametrize("target,parallel,vector", [
    ("llvm -mcpu=haswell -num-cores=4", 64, 32),        # AVX2: 8 float32 lanes
    ("llvm -mcpu=skylake-avx512 -num-cores=2", 32, 64),  # AVX-512: 16 lanes
])
def test_rules_read_the_target(target, parallel, vector):
    ctx = ms.TuneContext(gemm(), target=target, space_generator="post-order-apply")
    marks = {i.value("ann_key"): i.value("ann_val")
             for i in ctx.generate_design_space()[0].trace.insts if i.kind == "annotate"}
    assert marks["meta_schedule.parallel"] == parallel  # 16 jobs per core
    assert marks["meta_schedule.vectorize"] == vector  # 4 vector registers


def test_a_failing_rule_is_skipped_with_a_warning(caplog):
    class Broken(ms.schedule_rule.PyScheduleRule):
        def apply(self, sch, block):
            sch.annotate(block, "touched", 1)
            raise ScheduleError("no way")

    generator = ms.space_generator.PostOrderApply(sch_rules=[Broken()])
    with caplog.at_level("WARNING", logger="irlab.meta_schedule"):
        (space,) = generator.generate_design_space(gemm())
    assert "Broken did not apply to block 'C': no way" in caplog.text
    assert "touched" not in space.mod.script()  # the half-applied rule was rolled back
