"""The mutators: each changes one decision (or one mark) of a sampled trace, keeps it valid
and drops the postprocessing; None when there is nothing to change."""

import numpy as np
import pytest

from irlab import meta_schedule as ms
from irlab.tir.schedule import RandomEngine, Trace

from test_design_space import TARGET, context, gemm, outputs, replay, sample, softmax


def sampled(func, seed=0):
    ctx = context(func)
    spaces = ctx.generate_design_space()
    return ctx, sample(ctx, spaces[seed % len(spaces)], seed)


def changed_decisions(old, new):
    new_by_kind = {}
    for inst in new.insts:
        new_by_kind.setdefault(inst.kind, []).append(new.decisions.get(inst))
    old_by_kind = {}
    for inst in old.insts:
        if inst.kind == "enter_postproc":
            break
        old_by_kind.setdefault(inst.kind, []).append(old.decisions.get(inst))
    return [(kind, a, b) for kind in old_by_kind
            for a, b in zip(old_by_kind[kind], new_by_kind[kind]) if a != b]


def test_mutate_tile_size():
    ctx, sch = sampled(gemm())
    mutator = ms.mutator.MutateTileSize()
    for seed in range(10):
        new = mutator.apply(sch.trace, RandomEngine(seed))
        assert "enter_postproc" not in [i.kind for i in new.insts]
        ((kind, old, tiles),) = changed_decisions(sch.trace, new)
        assert kind == "sample_perfect_tile" and int(np.prod(old)) == int(np.prod(tiles))
        assert tiles[-1] <= 64
    again = [mutator.apply(sch.trace, RandomEngine(3)).as_json() for _ in range(2)]
    assert again[0] == again[1]  # reproducible from the random state
    assert mutator.apply(Trace(), 0) is None


def test_mutate_unroll_and_parallel():
    ctx, sch = sampled(gemm())
    unroll = ms.mutator.MutateUnroll()
    new = unroll.apply(sch.trace, 1)
    ((kind, old, decision),) = changed_decisions(sch.trace, new)
    assert kind == "sample_categorical" and old != decision
    parallel = ms.mutator.MutateParallel(max_jobs_per_core=16)
    parallel._initialize_with_tune_context(ctx)
    new = parallel.apply(sch.trace, 2)
    values = [i.value("ann_val") for t in (sch.trace, new) for i in t.insts
              if i.kind == "annotate" and i.value("ann_key") == "meta_schedule.parallel"]
    assert values[0] != values[1] and values[1] % 2 == 0  # a multiple of the 2 cores
    assert replay(ctx, new, 0) is not None
    assert unroll.apply(Trace(), 0) is None and parallel.apply(Trace(), 0) is None


def test_mutate_compute_location():
    func = softmax()
    ctx, sch = sampled(func, seed=1)
    mutator = ms.mutator.MutateComputeLocation()
    with pytest.raises(ValueError, match="workload"):
        mutator.apply(sch.trace, 0)
    mutator._initialize_with_tune_context(ctx)
    expected = outputs(func)
    for seed in range(4):
        new = mutator.apply(sch.trace, seed)
        changes = changed_decisions(sch.trace, new)
        assert [kind for kind, _, _ in changes] == ["sample_compute_location"]
        mutant = replay(ctx, new, seed)
        np.testing.assert_allclose(outputs(mutant.mod["main"]), expected, rtol=1e-5)


def test_default_mutators():
    probs = ms.mutator.Mutator.create("llvm")
    assert abs(sum(probs.values()) - 1.0) < 1e-9
    assert {type(m).__name__ for m in probs} == {
        "MutateTileSize", "MutateComputeLocation", "MutateUnroll", "MutateParallel"}
    with pytest.raises(ValueError, match="llvm"):
        ms.mutator.Mutator.create("cuda")
    ctx = ms.TuneContext(gemm(), target=TARGET, space_generator="post-order-apply")
    assert all(m._rand is not None for m in ctx.space_generator.mutator_probs)

