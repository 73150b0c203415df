"""The final verification: TOPI's schedule and the best tuned records re-timed in turns, and
the margin rule that picks what a network is built with (the noise the margin covers is
measured in ``irlab/meta_schedule/database/verified.py``). No timed assertions: the rule is
tested on made-up times."""

import json

import numpy as np
import pytest

import irlab as tvm
from irlab import meta_schedule as ms
from irlab.errors import IrlabError
from irlab.meta_schedule.arg_info import ArgInfo, TensorInfo
from irlab.meta_schedule.builder import BuilderInput, LocalBuilder
from irlab.meta_schedule.database.verified import (VERIFY_MARGIN, choose_verified,
                                                   latest_verification)
from irlab.meta_schedule.runner import EvaluatorConfig, LocalRunner, RunnerInput
from ms_workloads import aborts, copies_a, gemm_mod, interpret, mlp, run_graph, spins
from test_relay_integration import hand_tuned

TARGET = "llvm -num-cores=2"
FAST = EvaluatorConfig(number=1, repeat=1, min_repeat_ms=1)


def _record(db, task, sch, secs, origin):
    record = ms.database.TuningRecord(sch.trace, db.commit_workload(task.mod), secs, TARGET,
                                      ArgInfo.from_entry_func(task.mod), origin=origin)
    db.commit_tuning_record(record)
    return record


def _records_of(db, task):
    """``task``'s records in commit order."""
    workload = db.commit_workload(task.mod)
    return [r for r in db.get_all_tuning_records() if r.workload is workload]


def _last_layer(tasks):
    return next(t for t in tasks if "relu" not in t.task_name)


# -- the interleaved runner ------------------------------------------------------------------
def test_interleaved_runner_times_each_artifact_per_round_and_fails_them_alone():
    mod = gemm_mod(32)
    built = LocalBuilder(max_workers=2).build(
        [BuilderInput(m, "llvm") for m in (mod, tvm.IRModule({"main": aborts}),
                                           tvm.IRModule({"main": copies_a}),
                                           tvm.IRModule({"main": spins}), mod,
                                           gemm_mod(64))])  # copies_a's reference
    assert all(b.error_msg is None for b in built), built
    good, crash, wrong, hang, good2, gemm64 = (b.artifact_path for b in built)
    args = ArgInfo.from_entry_func(mod)
    wrong_args = ArgInfo.from_entry_func(tvm.IRModule({"main": copies_a}))
    runner = LocalRunner(timeout_sec=3, evaluator_config=FAST)
    results = runner.run_interleaved([
        RunnerInput(good, "cpu", args, num_threads=1),
        RunnerInput(crash, "cpu", [TensorInfo("float32", [4])]),
        RunnerInput(wrong, "cpu", wrong_args, reference_path=gemm64),
        RunnerInput(hang, "cpu", [TensorInfo("int32", [4])]),
        RunnerInput(good2, "cpu", args, reference_path=good, num_threads=1),
    ], rounds=4)
    ok, crashed, wrong_result, hung, ok2 = results
    assert ok.error_msg is None and len(ok.run_secs) == 4 and min(ok.run_secs) > 0
    assert ok2.error_msg is None and len(ok2.run_secs) == 4
    assert crashed.run_secs is None and "crash" in crashed.error_msg
    assert wrong_result.run_secs is None and "WrongResultError" in wrong_result.error_msg
    assert hung.run_secs is None and "timeout" in hung.error_msg


def test_rounds_go_round_robin(monkeypatch):
    """time_interleaved times A B C, C B A, ... (no worker: the timers are stand-ins)."""
    from irlab.meta_schedule.runner import interleaved
    from irlab.runtime import benchmark

    calls = []

    class Result:
        def __init__(self, value):
            self.results = (value,)

    def fake_evaluator(func, number, repeat, min_repeat_ms, f_preproc=None):
        return lambda *nds: (calls.append(func), Result(len(calls)))[1]

    monkeypatch.setattr(interleaved, "load_entry", lambda path: path)
    monkeypatch.setattr(benchmark, "time_evaluator", fake_evaluator)
    args = [TensorInfo("float32", [2])]
    times = interleaved.time_interleaved(["A", "B", "C"], [args] * 3, FAST, rounds=3)
    assert calls == ["A", "B", "C"] * 2 + ["C", "B", "A"] + ["A", "B", "C"]  # sizing first
    assert times == [[4, 9, 10], [5, 8, 11], [6, 7, 12]]


# -- the margin rule -------------------------------------------------------------------------
class Fake:
    """A record with made-up times (the rule reads ``origin`` and ``run_secs`` only)."""

    def __init__(self, secs, origin="verified"):
        self.run_secs, self.origin = secs, origin

    is_valid = property(lambda self: all(s < 1e10 for s in self.run_secs))


def test_margin_rule_keeps_topi_within_the_margin_and_takes_a_clear_win():
    topi = Fake([1.0, 2.0, 1.0, 2.0, 1.5], "verified-default")  # the host drifts 2x
    within = Fake([t * (1 - VERIFY_MARGIN / 2) for t in topi.run_secs])
    beyond = Fake([t * (1 - 2 * VERIFY_MARGIN) for t in topi.run_secs])
    assert choose_verified([topi, within]) is topi
    assert choose_verified([topi, within, beyond]) is beyond
    # one round hit by other load does not decide (median of the per-round ratios)
    spiked = Fake([t * 0.9 for t in topi.run_secs[:-1]] + [100.0])
    assert choose_verified([topi, spiked]) is spiked
    # TOPI's failed in the verification: the fastest tuned one that ran; none ran: None
    failed = Fake([1e10], "verified-default")
    assert choose_verified([failed, within, beyond]) is beyond
    assert choose_verified([failed, Fake([1e10])]) is None


def test_the_latest_verification_decides():
    old = [Fake([1.0], "verified-default"), Fake([0.5])]
    new = [Fake([1.0], "verified-default"), Fake([0.99])]
    records = [Fake([0.1], None)] + old + [Fake([0.01], None)] + new
    assert latest_verification(records) == new
    assert choose_verified(latest_verification(records)) is new[0]
    assert latest_verification([Fake([0.1], None)]) == []


def test_query_prefers_the_verified_choice_over_a_faster_unverified_record():
    mod, params = mlp()
    last = _last_layer(ms.relay_integration.extract_tasks(mod, TARGET, params))
    db = ms.database.MemoryDatabase()
    _record(db, last, hand_tuned(last), [1e-9], None)  # 'fastest', measured alone
    topi = _record(db, last, last.default_schedule, [1e-3] * 3, "verified-default")
    _record(db, last, hand_tuned(last), [0.99e-3] * 3, "verified")
    assert db.query_tuning_record(last.mod, TARGET) is topi
    assert "1 verified" in repr(db)
    tuned = _record(db, last, last.default_schedule, [1e-3] * 3, "verified-default")
    assert db.query_tuning_record(last.mod, TARGET) is tuned  # a new group, only TOPI


# -- records ---------------------------------------------------------------------------------
def test_verified_origins_round_trip_through_json_and_old_lines_still_load(tmp_path):
    mod, params = mlp()
    last = _last_layer(ms.relay_integration.extract_tasks(mod, TARGET, params))
    db = ms.database.JSONDatabase(work_dir=str(tmp_path))
    _record(db, last, hand_tuned(last), [2e-3], None)  # written with 4 fields, as before
    _record(db, last, last.default_schedule, [1e-3, 1.1e-3], "verified-default")
    _record(db, last, hand_tuned(last), [0.5e-3, 0.6e-3], "verified")
    lines = (tmp_path / "database_tuning_record.json").read_text().splitlines()
    assert [len(json.loads(line)[1]) for line in lines] == [4, 5, 5]
    again = ms.database.JSONDatabase(work_dir=str(tmp_path))
    records = again.get_all_tuning_records()
    assert [r.origin for r in records] == [None, "verified-default", "verified"]
    assert records[2].run_secs == [0.5e-3, 0.6e-3]
    assert again.query_tuning_record(last.mod, TARGET) is records[2]
    with pytest.raises(IrlabError, match="origin must be one of"):
        ms.database.TuningRecord(hand_tuned(last).trace, records[0].workload, [1.0],
                                 origin="checked")


# -- verify_best end to end ------------------------------------------------------------------
def test_verify_best_commits_a_group_per_task_and_the_build_stays_exact(tmp_path):
    mod, params = mlp()
    tasks = ms.relay_integration.extract_tasks(mod, TARGET, params)
    last = _last_layer(tasks)
    db = ms.database.JSONDatabase(work_dir=str(tmp_path))
    _record(db, last, last.default_schedule, [1e-3], "default")
    _record(db, last, hand_tuned(last), [1e-6], None)
    _record(db, last, hand_tuned(last), [2e-6], None)  # the same trace: verified once
    runner = LocalRunner(evaluator_config=FAST)
    chosen = ms.relay_integration.verify_best(tasks, db, LocalBuilder(max_workers=2), runner,
                                              rounds=3, progress=False)
    assert list(chosen) == [last.task_name]  # the other task has no tuned record
    group = latest_verification(_records_of(db, last))
    assert [r.origin for r in group] == ["verified-default", "verified"]
    assert all(r.is_valid and len(r.run_secs) == 3 for r in group)
    assert chosen[last.task_name] in group
    tuned_top = db.get_top_k(db.commit_workload(last.mod), 10)  # the tuner's records only
    assert [r.origin for r in tuned_top] == [None, None, "default"]

    # resumed (a new process on the same work_dir): verified again, the new group decides
    db = ms.database.JSONDatabase(work_dir=str(tmp_path))
    chosen = ms.relay_integration.verify_best(tasks, db, LocalBuilder(max_workers=2), runner,
                                              rounds=3, progress=False)
    records = _records_of(db, last)
    assert [r.origin for r in records].count("verified-default") == 2
    assert latest_verification(records) == records[-2:]
    assert chosen[last.task_name] in records[-2:]

    x = np.random.default_rng(5).uniform(-1, 1, (4, 32)).astype("float32")
    want = interpret(mod, params, x)
    lib = ms.relay_integration.compile_relay(db, mod, TARGET, params)
    np.testing.assert_allclose(run_graph(lib, {"x": x}), want, rtol=1e-5, atol=1e-5)
    # whichever won there, the tuned kernel's build is exact when it is chosen
    _record(db, last, last.default_schedule, [1e-3] * 3, "verified-default")
    _record(db, last, hand_tuned(last), [1e-4] * 3, "verified")
    lib = ms.relay_integration.compile_relay(db, mod, TARGET, params)
    assert sorted(bool(lf.tuned) for lf in lib.lowered) == [False, True]
    np.testing.assert_allclose(run_graph(lib, {"x": x}), want, rtol=1e-5, atol=1e-5)


class ScriptedRunner(ms.runner.Runner):
    """A runner whose interleaved sessions return made-up times: TOPI's 1 ms per round,
    the tuned ones ``ratios[session]`` times that."""

    def __init__(self, ratios):
        self.ratios, self.sessions, self.threads = list(ratios), 0, []

    def run_interleaved(self, runner_inputs, rounds=10, round_ms=None):
        ratio = self.ratios[self.sessions]
        self.sessions += 1
        self.threads.append({i.num_threads for i in runner_inputs})
        return [ms.runner.RunnerResult([1e-3 * (1.0 if i == 0 else ratio)] * rounds)
                for i in range(len(runner_inputs))]


class NoBuilder(ms.builder.Builder):
    def build(self, builder_inputs):
        return [ms.builder.BuilderResult("/nonexistent/irlab-verify/a.irlab", None)
                for _ in builder_inputs]


@pytest.mark.parametrize("ratios, sessions, tuned_wins", [
    ((1.0,), 1, False),        # no win: one session
    ((0.8, 0.8), 2, True),     # a win confirmed by the second session
    ((0.8, 1.2), 2, False),    # a win the second session contradicts: TOPI's
])
def test_a_win_is_confirmed_by_a_second_session(ratios, sessions, tuned_wins):
    mod, params = mlp()
    last = _last_layer(ms.relay_integration.extract_tasks(mod, TARGET, params))
    db = ms.database.MemoryDatabase()
    _record(db, last, hand_tuned(last), [1e-6], None)
    runner = ScriptedRunner(ratios)
    chosen = ms.relay_integration.verify_best([last], db, NoBuilder(), runner, rounds=4,
                                              progress=False, single_thread=False)
    assert runner.sessions == sessions
    group = latest_verification(_records_of(db, last))
    assert [len(r.run_secs) for r in group] == [4 * sessions] * 2
    assert (chosen[last.task_name] is group[1]) == tuned_wins


@pytest.mark.parametrize("ratios, one_thread_wins", [
    ((0.8, 0.8, 1.2), False),           # wins on 2 threads, loses on 1 (one session there)
    ((0.8, 0.8, 0.8, 0.8), True),       # wins on both, each confirmed by a second session
])
def test_a_win_on_two_threads_is_built_for_one_thread_only_if_it_wins_there(ratios,
                                                                          one_thread_wins):
    """A kernel tuned on two threads can be slower on one: the winner is timed again on one
    thread and committed as that thread count's group; each build reads its own."""
    mod, params = mlp()
    tasks = ms.relay_integration.extract_tasks(mod, TARGET, params)
    last = _last_layer(tasks)
    db = ms.database.MemoryDatabase()
    _record(db, last, hand_tuned(last), [1e-6], None)
    runner = ScriptedRunner(ratios)
    chosen = ms.relay_integration.verify_best([last], db, NoBuilder(), runner, rounds=4,
                                              progress=False)
    assert runner.threads == [{2}, {2}] + [{1}] * (len(ratios) - 2)
    two = db.query_tuning_record(last.mod, TARGET)
    one = db.query_tuning_record(last.mod, "llvm -num-cores=1")
    assert chosen[last.task_name] is two and two.origin == "verified"
    assert one.origin == ("verified" if one_thread_wins else "verified-default")
    assert str(one.target).endswith("-num-cores=1")
    # a thread count with no group of its own reads the latest one
    assert db.query_tuning_record(last.mod, "llvm -num-cores=4").origin == one.origin
    # the builds: the tuned kernel on two threads, on one only where it won there
    x = np.random.default_rng(7).uniform(-1, 1, (4, 32)).astype("float32")
    want = interpret(mod, params, x)
    for target, tuned in ((TARGET, True), ("llvm -num-cores=1", one_thread_wins)):
        lib = ms.relay_integration.compile_relay(db, mod, target, params)
        assert sorted(bool(lf.tuned) for lf in lib.lowered) == sorted([False, tuned])
        np.testing.assert_allclose(run_graph(lib, {"x": x}), want, rtol=1e-5, atol=1e-5)
