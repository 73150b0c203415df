"""ms.tune_tir on a small TE GEMM: the best schedule computes what numpy does, the database
reloads and a second call resumes; search strategies never measure a candidate twice."""

import numpy as np

import irlab as tvm
from irlab import meta_schedule as ms
from ms_workloads import gemm_mod, quick_runner, small_search, small_space

TARGET = "llvm -num-cores=2"
# one builder and one runner for the file: their worker processes start once
BUILDER = ms.builder.LocalBuilder(max_workers=2)
RUNNER = quick_runner()


def run_gemm(sch, n):
    lib = tvm.build(sch.mod, target=TARGET)
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (n, n)).astype("float32") for _ in range(2))
    c = tvm.nd.array(np.zeros((n, n), "float32"))
    lib["main"](tvm.nd.array(a), tvm.nd.array(b), c)
    return c.numpy(), a @ b


def test_tune_tir_gemm_then_resume(tmp_path):
    n, mod = 32, gemm_mod(32)
    db = ms.tune_tir(mod, TARGET, str(tmp_path), 8, num_trials_per_iter=4, seed=0,
                     space=small_space(), strategy=small_search(), builder=BUILDER, runner=RUNNER)
    assert len(db) == 8
    sch = ms.tir_integration.compile_tir(db, mod, TARGET)
    assert sch is not None and any(i.kind == "sample_perfect_tile" for i in sch.trace.insts)
    got, want = run_gemm(sch, n)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    # a second call on the same work_dir resumes: old records stay, new ones are added, and
    # its best can only be as good or better
    best_before = db.get_top_k(db.commit_workload(mod), 1)[0].run_secs
    again = ms.tune_tir(mod, TARGET, str(tmp_path), 4, num_trials_per_iter=4, seed=1,
                        space=small_space(), strategy=small_search(), builder=BUILDER,
                        runner=RUNNER)
    assert len(again) == 12
    reloaded = ms.database.JSONDatabase(work_dir=str(tmp_path))
    assert len(reloaded) == 12
    assert (tmp_path / "cost_model.npz").exists()
    best_after = reloaded.get_top_k(reloaded.commit_workload(mod), 1)[0].run_secs
    assert best_after[0] <= best_before[0]
    stats = again.task_scheduler.tuning_statistics()
    assert "main" in stats and "Total trials: 4" in stats


def test_replay_trace_gives_distinct_candidates():
    ctx = ms.TuneContext(gemm_mod(32), target=TARGET, space_generator=small_space(),
                         search_strategy=ms.search_strategy.ReplayTrace(), rand_state=5)
    ctx.pre_tuning(6, 3, database=ms.database.MemoryDatabase())
    seen = set()
    while (cands := ctx.generate_measure_candidates()) is not None:
        keys = {str(c.sch.trace) for c in cands}
        assert not keys & seen
        seen |= keys
        ctx.notify_runner_results(cands, [ms.runner.RunnerResult([1e-3])] * len(cands))
    ctx.post_tuning()
    assert len(seen) == 6


def test_a_task_without_design_space_is_reported_and_skipped(tmp_path):
    class Broken(ms.space_generator.ScheduleFn):
        def generate_design_space(self, mod):
            raise RuntimeError("no rule applies")

    db = ms.tune_tir(gemm_mod(16), TARGET, str(tmp_path), 4, num_trials_per_iter=4,
                     space=Broken(lambda sch: None), strategy=small_search(),
                     builder=BUILDER, runner=RUNNER)
    record = db.task_scheduler.tasks[0]
    assert record.trials == 0 and "no rule applies" in record.error
    assert ms.tir_integration.compile_tir(db, gemm_mod(16), TARGET) is None


class InterruptedRunner(ms.runner.Runner):
    """Measures the first batch, then acts as if the user pressed Ctrl-C."""

    def __init__(self):
        self.inner, self.calls = RUNNER, 0

    def run(self, runner_inputs):
        self.calls += len(runner_inputs)
        if self.calls > 2:
            raise KeyboardInterrupt
        return self.inner.run(runner_inputs)


def test_interrupted_tuning_keeps_every_measured_record(tmp_path, monkeypatch):
    import tempfile

    import pytest

    builds = tmp_path / "tmp"
    builds.mkdir()
    # where a new builder's workers (forked or spawned) put their builds
    monkeypatch.setattr(tempfile, "tempdir", str(builds))
    monkeypatch.setenv("TMPDIR", str(builds))
    with pytest.raises(KeyboardInterrupt):
        ms.tune_tir(gemm_mod(16), TARGET, str(tmp_path), 8, num_trials_per_iter=2, seed=0,
                    space=small_space(), strategy=small_search(),
                    builder=ms.builder.LocalBuilder(max_workers=1),
                    runner=InterruptedRunner())
    db = ms.database.JSONDatabase(work_dir=str(tmp_path))
    assert len(db) == 2
    assert ms.tir_integration.compile_tir(db, gemm_mod(16), TARGET) is not None
    assert not list(builds.iterdir())  # the interrupted batch's builds are deleted too


def test_tune_config_of_tvm_0_10(tmp_path):
    config = ms.TuneConfig(max_trials_global=2, num_trials_per_iter=2,
                           strategy="replay-trace")
    db = ms.tune_tir(gemm_mod(16), TARGET, config, str(tmp_path), space=small_space(),
                     builder=BUILDER, runner=RUNNER)
    assert len(db) == 2
