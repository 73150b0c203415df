"""ms.relay_integration: extract_tasks (weights = calls), and relay.build / compile_relay
applying database records through LowerTE's hook (TOPI's schedule for kernels without one)."""

import numpy as np

import irlab as tvm
from irlab import meta_schedule as ms
from irlab import relay
from irlab.meta_schedule.arg_info import ArgInfo
from ms_workloads import interpret, mlp, run_graph


def test_extract_tasks_counts_identical_kernels():
    mod, params = mlp(sizes=(32, 64, 64, 64, 16))
    tasks = ms.relay_integration.extract_tasks(mod, "llvm", params)
    weights = sorted((t.task_name, t.weight) for t in tasks)
    # three relu layers, two of them 64 -> 64 (one task of weight 2), and the last layer
    assert sorted(w for _, w in weights) == [1, 1, 2]
    assert all(t.mod["main"].attrs["global_symbol"] == "main" for t in tasks)


def hand_tuned(task):
    """A schedule of the dense + bias task: parallel, vectorized, unrolled."""
    sch = tvm.tir.Schedule(task.mod)
    dense, add = sch.get_child_blocks(sch.get_block("root"))[:2]
    i0, i1 = sch.get_loops(add)
    sch.parallel(i0)
    sch.vectorize(i1)
    k = sch.get_loops(dense)[-1]
    sch.unroll(sch.split(k, [None, 8])[1])
    return sch


def test_compile_relay_applies_records_and_falls_back_to_topi():
    mod, params = mlp()
    tasks = ms.relay_integration.extract_tasks(mod, "llvm", params)
    last = next(t for t in tasks if "relu" not in t.task_name)
    sch = hand_tuned(last)
    db = ms.database.MemoryDatabase()
    db.commit_tuning_record(ms.database.TuningRecord(
        sch.trace, db.commit_workload(last.mod), [1e-6], "llvm", ArgInfo.from_entry_func(last.mod)))

    def uses_record(lib):
        return [tvm.ir.structural_equal(lf.prim_func.with_attr("global_symbol", "main"),
                                        sch.mod["main"]) for lf in lib.lowered]

    x = np.random.default_rng(1).uniform(-1, 1, (4, 32)).astype("float32")
    want = interpret(mod, params, x)
    tuned = ms.relay_integration.compile_relay(db, mod, "llvm", params)
    assert sorted(uses_record(tuned)) == [False, True]  # the relu layer keeps TOPI's
    np.testing.assert_allclose(run_graph(tuned, {"x": x}), want, rtol=1e-5, atol=1e-5)
    # relay.build under a database scope applies it too (at the opt_level tasks came from)
    with db, tvm.transform.PassContext(opt_level=3):
        scoped = relay.build(mod, "llvm", params=params)
    assert sorted(uses_record(scoped)) == [False, True]
    with tvm.transform.PassContext(opt_level=3):  # outside the scope: TOPI only
        plain = relay.build(mod, "llvm", params=params)
    assert uses_record(plain) == [False, False]


def test_tune_relay_on_an_mlp_builds_and_matches_the_interpreter(tmp_path):
    from ms_workloads import quick_runner, small_search, small_space

    mod, params = mlp()
    db = ms.relay_integration.tune_relay(mod, params, "llvm -num-cores=2", str(tmp_path), 8,
                                         num_trials_per_iter=2, space=small_space(),
                                         strategy=small_search(), runner=quick_runner(),
                                         seed=0, verify_rounds=3)
    records = db.task_scheduler.tasks
    assert len(records) == 2 and sum(r.trials for r in records) == 8
    # TOPI's schedules were timed before tuning, and re-timed after it interleaved with the
    # best tuned records (verify_best): one verification group per task
    origins = [r.origin for r in db.get_all_tuning_records()]
    assert origins.count("default") == 2 and origins.count("verified-default") == 2
    assert 2 <= origins.count("verified") <= 6
    rows = db.task_scheduler.tuning_statistics().splitlines()[1:3]
    assert all(float(row.split("|")[-1]) > 0 for row in rows)
    assert all(r.trials >= 2 for r in records)  # the gradient scheduler's warm-up round
    lib = ms.relay_integration.compile_relay(db, mod, "llvm -num-cores=2", params)
    x = np.random.default_rng(2).uniform(-1, 1, (4, 32)).astype("float32")
    np.testing.assert_allclose(run_graph(lib, {"x": x}), interpret(mod, params, x),
                               rtol=1e-4, atol=1e-4)
