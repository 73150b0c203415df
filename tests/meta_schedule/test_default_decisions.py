"""Default decisions of the CPU rules and the seeded first population of EvolutionarySearch:
the design space records the rules' defaults (a TOPI-like register tile sized from the
target, parallel outer tiles, the middle unroll depth, the root as compute location); the
seeded candidate replays, round-trips through JSON and computes what numpy / TOPI compute;
an explicit unroll never makes a body larger than the sampled depth, counted in vector
statements (the stem conv's strided epilogue used to unroll into ~50,000 LLVM IR lines)."""

import json

import numpy as np

import irlab
from irlab import meta_schedule as ms
from irlab import relay
from irlab.ir.structural import assert_structural_equal
from irlab.meta_schedule.postproc.rewrite_parallel_vectorize_unroll import unrolled_steps
from irlab.meta_schedule.schedule_rule import default_decision as DD
from irlab.meta_schedule.search_strategy.search_strategy import replay
from irlab.tir import stmt as S
from irlab.tir.schedule import Schedule, Trace
from irlab.tir.schedule import primitives_getters as G

from test_conv_space import outputs  # built for its TARGET, the same as HOST
from test_design_space import gemm

AVX512 = "llvm -mcpu=skylake-avx512 -num-cores=2"  # 16 lanes, 16 accumulators
AVX2 = "llvm -mcpu=haswell -num-cores=2"  # 8 lanes, 8 accumulators
HOST = "llvm -num-cores=2"


def strategy(mod, target, **kwargs):
    """An EvolutionarySearch in a task of ``mod`` for ``target``, ready to search."""
    search = ms.search_strategy.EvolutionarySearch(population_size=8, init_min_unmeasured=4,
                                                   genetic_num_iters=1, **kwargs)
    ctx = ms.TuneContext(mod, target=target, space_generator="post-order-apply",
                         search_strategy=search, rand_state=0)
    search.pre_tuning(16, 8, ctx.generate_design_space())
    return search


def decisions(sch, kind):
    trace = sch.trace
    return [trace.decisions[i] for i in trace.insts if i.kind == kind and i in trace.decisions]


def tiles(sch):
    return [list(d) for d in decisions(sch, "sample_perfect_tile")]


def test_register_tile_sized_from_the_target():
    # 4 x 4 vectors with AVX-512's 16 accumulators; 2 x 4 with AVX2's 8; a 7-wide row
    assert DD.register_tile(1024, 64, 64, 4, 16) == (4, 4)
    assert DD.register_tile(1024, 128, 64, 4, 8) == (2, 4)
    assert DD.register_tile(7, 32, 16, 4, 16) == (7, 2)


def test_gemm_default_tiles_per_target():
    # i: [parallel, 1, rest, rows]; j (the vector loop, not split by the lanes first):
    # [its whole rest in the parallel tile, 1, 1, vectors x lanes]; k: [rest, 64]
    for target, i_tiles, j_tiles in ((AVX512, [2, 1, 32, 4], [4, 1, 1, 64]),
                                     (AVX2, [1, 1, 128, 2], [8, 1, 1, 32])):
        search = strategy(gemm(256, 256, 256), target)
        seeds = search.seeded(search.state)
        assert len(seeds) == 3  # one per design space (no cache, cache at level 1, 2)
        for cand in seeds:
            assert tiles(cand.sch) == [i_tiles, j_tiles, [4, 64]], target
            assert decisions(cand.sch, "sample_categorical") == [2]  # 64 of 0/16/64/512


def test_seeded_candidate_replays_and_round_trips_json():
    search = strategy(gemm(64, 64, 64), AVX512)
    (cand, *_) = search.seeded(search.state)
    record = json.loads(json.dumps(cand.sch.trace.as_json()))
    fresh = Schedule(search.state.context.mod)
    Trace.apply_json_to_schedule(record, fresh)
    assert_structural_equal(fresh.mod, cand.sch.mod)
    # the defaults are the design space's own decisions: replaying it as recorded is the seed
    again = replay(search.state, search.state.spaces[0], seed=123)
    assert json.dumps(again.sch.trace.as_json()) == json.dumps(cand.sch.trace.as_json())


def test_seeded_gemm_computes_what_numpy_computes():
    search = strategy(gemm(64, 48, 32), HOST)
    seeds = search.seeded(search.state)
    assert seeds
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 32)).astype("float32")
    b = rng.standard_normal((32, 48)).astype("float32")
    for cand in seeds:
        out = irlab.nd.array(np.zeros((64, 48), "float32"))
        irlab.build(cand.sch.mod, target=HOST)["main"](irlab.nd.array(a), irlab.nd.array(b),
                                                        out)
        np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-4, atol=1e-4)


def stem_task(size=32):
    """ResNet's stem in small: a 3-channel 7x7 stride-2 conv + bias + ReLU, weight packed."""
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(1, 3, size, size))
    w = relay.var("w", shape=(32, 3, 7, 7))
    b = relay.var("b", shape=(32,))
    conv = relay.nn.conv2d(x, w, strides=(2, 2), padding=(3, 3))
    y = relay.nn.relu(relay.nn.bias_add(conv, b))
    params = {"w": rng.uniform(-1, 1, (32, 3, 7, 7)).astype("float32"),
              "b": rng.uniform(-1, 1, (32,)).astype("float32")}
    mod = irlab.IRModule.from_expr(relay.Function([x, w, b], y))
    (task,) = [t for t in ms.relay_integration.extract_tasks(mod, HOST, params)
               if "conv2d" in t.task_name]
    return task


def test_seeded_stem_conv_computes_what_topi_computes():
    task = stem_task()
    search = strategy(task.mod, HOST)
    seeds = search.seeded(search.state)
    assert seeds
    expected = outputs(task.default_schedule.mod)
    for cand in seeds:
        np.testing.assert_allclose(outputs(cand.sch.mod), expected, rtol=1e-4, atol=1e-4)


def test_first_round_measures_the_seeds_first():
    search = strategy(gemm(64, 64, 64), HOST)
    seeds = {json.dumps(c.sch.trace.as_json()) for c in search.seeded(search.state)}
    picks = search.generate_measure_candidates()
    assert {json.dumps(c.sch.trace.as_json()) for c in picks[:len(seeds)]} == seeds
    search.notify_runner_results(picks, [None] * len(picks))
    later = search.generate_measure_candidates()  # not again once measured
    assert not seeds & {json.dumps(c.sch.trace.as_json()) for c in later}
    unseeded = strategy(gemm(64, 64, 64), HOST, seed_defaults=False)
    assert "seed_defaults=False" in repr(unseeded)


def _unrolled_roots(func):
    """The outermost loop of each chain of unrolled loops."""
    out = []

    def visit(stmt, inside):
        for _, _, child in G.stmt_children(stmt):
            unrolled = isinstance(child, S.For) and child.kind == S.ForKind.UNROLLED
            if unrolled and not inside:
                out.append(child)
            visit(child, inside or unrolled)

    visit(func.body, False)
    return out


def test_unrolled_bodies_stay_within_the_sampled_depth():
    """Random points of the stem conv's spaces with the deepest unroll (512): no unrolled
    loop's body passes 512 vector statements (AVX-512: 16 lanes), and the largest build
    stays small in LLVM IR."""
    task = stem_task(64)
    search = strategy(task.mod, AVX512)
    st = search.state

    def deepest_unroll(inst, args, kwargs, decision):
        return 3 if inst.kind == "sample_categorical" else None

    largest, checked = None, 0
    for seed in range(24):
        cand = replay(st, st.spaces[seed % len(st.spaces)], seed, deepest_unroll)
        if cand is None:
            continue
        checked += 1
        sizes = [unrolled_steps(loop, 16) for loop in _unrolled_roots(cand.sch.mod["main"])]
        assert max(sizes, default=0) <= 512, sizes
        total = sum(sizes)
        if largest is None or total > largest[0]:
            largest = (total, cand)
    assert checked >= 16 and largest[0] > 0
    lib = irlab.build(largest[1].sch.mod, target=AVX512)
    lines = [ln for ln in lib.get_source("ll").splitlines() if ln.startswith("  ")]
    assert len(lines) < 20000, len(lines)


def test_a_strided_vector_loop_counts_its_lanes():
    """ReLU written NCHW from an NHWC accumulator (the conv epilogue computed at a tile):
    its vector loop walks the accumulator at a stride, so each lane is a scalar access and
    the channel loop around it must not be unrolled (before: counted as one statement)."""
    from irlab import te

    acc = te.placeholder((1, 8, 56, 64), name="acc")
    relu = te.compute((1, 64, 8, 56), lambda n, c, h, w: te.max(acc[n, h, w, c], 0.0),
                      name="relu")
    sch = Schedule(te.create_prim_func([acc, relu]))
    sch.annotate(sch.get_block("root"), "meta_schedule.vectorize", 64)
    sch.annotate(sch.get_block("root"), "meta_schedule.unroll_explicit", 512)
    assert ms.postproc.RewriteParallelVectorizeUnroll(lanes=16).apply(sch)
    kinds = {lp.loop_var.name_hint: lp.kind.name
             for lp, _ in G.walk(sch.mod["main"].body) if isinstance(lp, S.For)}
    assert kinds["w"] == "VECTORIZED" and kinds["h"] == "UNROLLED"  # 8 x 56 lanes = 448
    assert kinds["c"] == "SERIAL", kinds  # 64 x 448 would pass 512
