"""ms.schedule_rule.ApplyCustomRule: a block annotated ``schedule_rule`` is scheduled by the
function registered as ``meta_schedule.<target key>.<name>`` and by no other rule; "None"
keeps every rule away; an unknown name warns and falls back to the generic rules. Then the
x86 Winograd conv's custom rules (irlab.meta_schedule.schedule.cpu.winograd): TOPI's
schedule with a sampled register tile, every decision replaying to the same computation."""

import itertools
import logging

import numpy as np
import pytest

import irlab as tvm
from irlab import meta_schedule as ms
from irlab import relay, te
from irlab.ir import structural_hash
from irlab.meta_schedule.postproc import apply_postprocs
from irlab.meta_schedule.schedule.cpu.winograd import gemm_tile_candidates
from irlab.runtime.registry import register_func
from irlab.target import Target
from irlab.tir.schedule import Schedule, ScheduleError
from irlab.topi.x86.conv2d_winograd import winograd_gemm_tile
from ms_workloads import interpret, quick_runner, run_graph, small_search

AVX2 = "llvm -mcpu=haswell -num-cores=2"  # runs on every x86-64 host CI gets


def split_rows(sch, block):
    """A custom rule for the tests: rows split by a sampled perfect tile, outer in parallel."""
    rows = sch.get_loops(block)[0]
    outer, inner = sch.split(rows, sch.sample_perfect_tile(rows, 2, decision=[4, 4]))
    sch.parallel(outer)
    sch.vectorize(sch.get_loops(block)[-1])
    return [sch]


register_func("meta_schedule.cpu.test_split_rows", split_rows, override=True)


def annotated_add(rule, producer_rule=None):
    """C = (A * 2) + 1 on 16 x 16, the product a stage of its own; the stages annotated."""
    a = te.placeholder((16, 16), name="A")
    b = te.compute((16, 16), lambda i, j: a[i, j] * 2.0, name="B",
                   attrs={"schedule_rule": producer_rule} if producer_rule else None)
    c = te.compute((16, 16), lambda i, j: b[i, j] + 1.0, name="C",
                   attrs={"schedule_rule": rule} if rule else None)
    return tvm.IRModule({"main": te.create_prim_func([a, c])})


def space_of(mod, target="llvm -num-cores=2"):
    ctx = ms.TuneContext(mod, target=target, space_generator="post-order-apply",
                         task_name="t", rand_state=0)
    return ctx, ctx.generate_design_space()


def run_func(mod, arrays, target="llvm"):
    lib = tvm.build(mod, target=target)
    args = [tvm.nd.array(a) for a in arrays]
    lib["main"](*args)
    return args[-1].numpy()


def test_a_registered_rule_schedules_its_block_and_no_other_rule_does():
    _, spaces = space_of(annotated_add("test_split_rows"))
    assert len(spaces) == 1
    text = str(spaces[0].trace)
    assert "sample_perfect_tile(loop=" in text and "decision=[4, 4]" in text
    assert "sch.parallel(" in text
    # the product is inlined into C by AutoInline; C itself is not touched by the generic
    # rules: no multi-level tiling, no compute location sampled for it
    assert "tiling_structure" not in text and "sample_compute_location" not in text
    a = np.random.default_rng(0).standard_normal((16, 16)).astype("float32")
    out = run_func(spaces[0].mod, [a, np.zeros((16, 16), "float32")])
    np.testing.assert_allclose(out, a * 2 + 1, rtol=1e-6)


def test_none_keeps_every_rule_away():
    _, spaces = space_of(annotated_add(None, producer_rule="None"))
    assert all('get_block(name="B"' in str(s.trace) for s in spaces)
    assert all("compute_inline(block=b0)" not in str(s.trace) for s in spaces)
    _, plain = space_of(annotated_add(None))  # without the annotation AutoInline takes it
    assert all("compute_inline(block=b0)" in str(s.trace) for s in plain)


def test_an_unknown_rule_warns_with_the_names_looked_up_and_falls_back(caplog):
    with caplog.at_level(logging.WARNING, logger="irlab.meta_schedule"):
        _, spaces = space_of(annotated_add("no_such_rule"))
    assert "meta_schedule.cpu.no_such_rule" in caplog.text and "'C'" in caplog.text
    assert all("schedule_rule" not in s.mod.script() for s in spaces)
    assert all('unannotate(block_or_loop=b1, ann_key="schedule_rule")' in str(s.trace)
               for s in spaces)


def failing_rule(sch, block):
    sch.split(sch.get_loops(block)[0], [4, None])  # applied, then undone
    raise ScheduleError("this rule cannot schedule the block")


register_func("meta_schedule.cpu.test_failing_rule", failing_rule, override=True)


def test_a_failing_rule_is_undone_and_leaves_the_block_to_the_generic_rules(caplog):
    with caplog.at_level(logging.WARNING, logger="irlab.meta_schedule"):
        _, spaces = space_of(annotated_add("test_failing_rule"))
    assert "cannot schedule the block" in caplog.text and "'C'" in caplog.text
    for sch in spaces:
        text = str(sch.trace)
        assert "factors=[4, None]" not in text  # the rule's split is gone
        # unannotated, so that the rules after this one do not skip the block
        assert 'unannotate(block_or_loop=b1, ann_key="schedule_rule")' in text
        assert "schedule_rule" not in sch.mod.script()


def test_apply_custom_rule_needs_a_target():
    rule = ms.schedule_rule.ApplyCustomRule()
    sch = Schedule(annotated_add("test_split_rows"))
    with pytest.raises(ValueError, match="target"):
        rule.apply(sch, sch.get_block("C"))


@pytest.mark.parametrize("strategy", ["evolutionary", "replay-trace"])
def test_the_search_measures_each_program_once(strategy):
    """C's custom rule parallelizes and vectorizes it itself, so the root's parallel extent
    and vector width (which the mutators change) do not change the program: many traces are
    one program. The search measures each program once, then runs out of candidates."""
    ctx = ms.TuneContext(annotated_add("test_split_rows"), target="llvm -num-cores=2",
                         space_generator="post-order-apply",
                         search_strategy=ms.search_strategy.SearchStrategy.create(strategy),
                         rand_state=3)
    ctx.pre_tuning(200, 8, database=ms.database.MemoryDatabase())
    programs, traces = [], set()
    while (cands := ctx.generate_measure_candidates()) is not None:
        programs += [structural_hash(c.sch.mod) for c in cands]
        traces |= {str(c.sch.trace) for c in cands}
        ctx.notify_runner_results(cands, [ms.runner.RunnerResult([1e-3])] * len(cands))
    ctx.post_tuning()
    assert len(programs) == len(set(programs)) == len(traces)
    assert 2 <= len(programs) < 200  # the distinct programs ran out before the trials


# -- the Winograd conv -----------------------------------------------------------------------
def winograd_net(c=32, size=8, seed=0):
    """A 3x3 conv + bias + ReLU that AlterOpLayout makes a Winograd conv under MetaSchedule."""
    rng = np.random.default_rng(seed)
    x = relay.var("x", shape=(1, c, size, size))
    w = relay.const(rng.standard_normal((c, c, 3, 3)).astype("float32") * 0.1)
    b = relay.const(rng.standard_normal(c).astype("float32"))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w, padding=(1, 1)), b))
    mod = tvm.IRModule.from_expr(relay.Function([x], y))
    return mod, rng.standard_normal((1, c, size, size)).astype("float32")


def winograd_task(target=AVX2):
    mod, _ = winograd_net()
    tasks = ms.relay_integration.extract_tasks(mod, target, {})
    found = [t for t in tasks if "winograd_without_weight_transform" in t.task_name]
    assert len(found) == 1, [t.task_name for t in tasks]
    return found[0]


def tile_decisions(trace):
    """The register tile's two sample_categorical instructions (p_bn, k_blocks)."""
    cats = [i for i in trace.insts if i.kind == "sample_categorical"]
    return cats[0], cats[1]


def test_winograd_space_is_topis_schedule_with_a_sampled_register_tile():
    task = winograd_task()
    ctx, spaces = space_of(task.mod, task.target)
    assert len(spaces) == 1
    trace = spaces[0].trace
    text = str(trace)
    # the generic rules did not touch the stages: no multi-level tiling, no inlining of the
    # tile into the transform
    assert "tiling_structure" not in text and "sample_perfect_tile" not in text
    p_inst, k_inst = tile_decisions(trace)
    p_choices, k_choices = (list(dict(i.attrs)["candidates"]) for i in (p_inst, k_inst))
    target = Target(AVX2)
    # 16 tiles (8 x 8 outputs, m = 2), 4 blocks of 8 channels
    assert (p_choices, k_choices, winograd_gemm_tile(16, 4, 8, target)) == (
        [2, 4, 8], [2, 4], (2, 4))
    assert (p_choices[trace.decisions[p_inst]], k_choices[trace.decisions[k_inst]]) == (2, 4)
    assert gemm_tile_candidates(16, 4, 8, target)[:2] == (p_choices, k_choices)
    # every tile replays (the instructions do not depend on the values) and computes the
    # unscheduled function's result
    rng = np.random.default_rng(1)
    params = list(task.mod["main"].buffer_map.values())
    arrays = [rng.standard_normal([int(d) for d in b.shape]).astype("float32")
              for b in params[:-1]] + [np.zeros([int(d) for d in params[-1].shape], "float32")]
    want = run_func(task.mod, [a.copy() for a in arrays])
    for k, (pd, kd) in enumerate(itertools.product(range(3), range(2))):
        candidate = trace.with_decision(p_inst, pd, True).with_decision(k_inst, kd, True)
        sch = Schedule(task.mod)
        candidate.apply_to_schedule(sch)
        assert apply_postprocs(sch, ctx.space_generator.postprocs)
        if k in (0, 5):  # two builds: 2 x 2 and 8 x 4 tiles
            got = run_func(sch.mod, [a.copy() for a in arrays], AVX2)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_avx512_tile_candidates_follow_the_register_budget():
    target = Target("llvm -mcpu=skylake-avx512")
    # 64 x 56 x 56, m = 4: 196 tiles, 4 blocks of 16 channels; TOPI's tile 7 x 4 vectors
    assert gemm_tile_candidates(196, 4, 16, target) == ([2, 4, 7, 14, 28], [2, 4], (7, 4))
    # 512 x 7 x 7, m = 2: 16 tiles, 32 blocks
    p, k, default = gemm_tile_candidates(16, 32, 16, target)
    assert p == [2, 4, 8, 16] and k == [2, 4] and default[0] in p and default[1] in k


def test_tune_relay_on_a_winograd_conv_matches_the_interpreter(tmp_path):
    mod, x = winograd_net()
    db = ms.relay_integration.tune_relay(mod, {}, AVX2, str(tmp_path), 6,
                                         num_trials_per_iter=3, strategy=small_search(),
                                         runner=quick_runner(), seed=0, verify_rounds=3)
    winograd = [r for r in db.get_all_tuning_records()
                if "winograd_gemm" in r.workload.mod.script() and r.origin is None]
    assert winograd and all(r.run_secs for r in winograd)  # tuner candidates, none failed
    lib = ms.relay_integration.compile_relay(db, mod, AVX2, {})
    np.testing.assert_allclose(run_graph(lib, {"x": x}), interpret(mod, {}, x),
                               rtol=1e-4, atol=1e-4)
