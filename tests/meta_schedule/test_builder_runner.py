"""ms.builder / ms.runner: a bad candidate (build error, crash, hang, wrong values) is a failed
result, never a dead tuner."""

import irlab as tvm
from irlab.meta_schedule.arg_info import ArgInfo, TensorInfo
from irlab.meta_schedule.builder import BuilderInput, LocalBuilder
from irlab.meta_schedule.runner import EvaluatorConfig, LocalRunner, RunnerInput
from ms_workloads import aborts, copies_a, gemm_mod, spins

FAST = EvaluatorConfig(number=1, repeat=1, min_repeat_ms=1)


def build_fails(mod, target, params):
    raise RuntimeError("this candidate does not compile")


def test_builder_reports_a_failed_build_and_builds_the_rest():
    builder = LocalBuilder(max_workers=1, f_build=build_fails)
    (result,) = builder.build([BuilderInput(gemm_mod(8), "llvm")])
    assert result.artifact_path is None
    assert "build exception: RuntimeError: this candidate does not compile" in result.error_msg


def test_runner_failure_kinds_and_a_good_candidate():
    mod = gemm_mod(64)
    built = LocalBuilder(max_workers=2).build(
        [BuilderInput(m, "llvm") for m in (mod, tvm.IRModule({"main": aborts}),
                                           tvm.IRModule({"main": copies_a}),
                                           tvm.IRModule({"main": spins}))])
    assert all(b.error_msg is None for b in built), built
    good, crash, wrong, hang = (b.artifact_path for b in built)
    args = ArgInfo.from_entry_func(mod)
    runner = LocalRunner(timeout_sec=3, evaluator_config=FAST)
    futures = runner.run([
        RunnerInput(good, "cpu", args, reference_path=good, num_threads=1),
        RunnerInput(crash, "cpu", [TensorInfo("float32", [4])]),
        RunnerInput(wrong, "cpu", args, reference_path=good),
        RunnerInput(hang, "cpu", [TensorInfo("int32", [4])]),
        RunnerInput(good, "cpu", args, reference_path=good),  # the tuner goes on afterwards
    ])
    ok, crashed, wrong_result, hung, ok_again = [f.result() for f in futures]
    assert ok.error_msg is None and ok.run_secs[0] > 0
    assert crashed.run_secs is None and "run crash: worker process died" in crashed.error_msg
    assert wrong_result.run_secs is None
    assert "WrongResultError: argument 2 differs from the untuned build" in \
        wrong_result.error_msg
    assert hung.run_secs is None and "run timeout: no result within 3 s" in hung.error_msg
    assert ok_again.error_msg is None


def test_reference_outputs_are_saved_once_and_survive_a_new_worker():
    """The (slow, unscheduled) reference runs once under a timeout of its own; its outputs
    are saved beside it, and a fresh worker checks against the saved outputs."""
    import os

    import numpy as np

    from irlab.meta_schedule.runner.measure import reference_outputs_path

    mod = gemm_mod(32)
    (built,) = LocalBuilder(max_workers=1).build([BuilderInput(mod, "llvm")])
    path, args = built.artifact_path, ArgInfo.from_entry_func(mod)
    ok = LocalRunner(timeout_sec=30, evaluator_config=FAST).run(
        [RunnerInput(path, "cpu", args, reference_path=path)])[0].result()
    saved = reference_outputs_path(path)
    assert ok.error_msg is None and os.path.exists(saved)
    with np.load(saved) as data:
        outputs = [data[f"arr_{i}"] for i in range(len(data.files))]
    outputs[2] = outputs[2] + 1.0  # a tampered reference: the next worker must read it
    np.savez(saved, *outputs)
    failed = LocalRunner(timeout_sec=30, evaluator_config=FAST).run(
        [RunnerInput(path, "cpu", args, reference_path=path)])[0].result()
    assert failed.run_secs is None and "argument 2 differs" in failed.error_msg


def test_a_slow_candidate_is_timed_by_single_calls(monkeypatch, tmp_path):
    """A candidate whose checked call outlasts a whole repeat (number x min_repeat_ms) is not
    run number + 1 more times: that call is the first repeat, each further repeat times one
    call. A fast one goes through the time evaluator."""
    import irlab.runtime.benchmark as benchmark
    from irlab.meta_schedule.runner import measure as M

    mod = gemm_mod(64)
    path = tvm.build(mod, target="llvm").export_library(str(tmp_path / "gemm.irlab"))
    args = ArgInfo.from_entry_func(mod)
    evaluated = []
    real = benchmark.time_evaluator
    monkeypatch.setattr(benchmark, "time_evaluator",
                        lambda *a, **k: evaluated.append(k) or real(*a, **k))
    monkeypatch.setattr(M, "_reference_cache", {})
    slow = EvaluatorConfig(number=1, repeat=3, min_repeat_ms=1)
    monkeypatch.setattr(M, "check_against_reference", lambda *a, **k: 1.0)  # a 1 s call
    secs = M.measure(path, args, slow, reference_path=path, num_threads=1)
    assert len(secs) == 3 and secs[0] == 1.0 and secs[1] > 0 and not evaluated
    monkeypatch.setattr(M, "check_against_reference", lambda *a, **k: 1e-6)
    secs = M.measure(path, args, EvaluatorConfig(number=2, repeat=2, min_repeat_ms=1),
                     reference_path=path, num_threads=1)
    assert len(secs) == 2 and evaluated == [{"number": 2, "repeat": 2, "min_repeat_ms": 1.0,
                                             "f_preproc": None}]


def test_cache_flush_evicts_the_inputs_before_each_repeat(monkeypatch, tmp_path):
    """EvaluatorConfig(enable_cpu_cache_flush=True) times each repeat after TVM's
    ``cache_flush_cpu_non_first_arg``, on the fast path (the time evaluator) and the slow
    one (single calls); the candidate still passes its check."""
    from irlab.meta_schedule.runner import measure as M
    from irlab.runtime import cache_flush

    mod = gemm_mod(32)
    path = tvm.build(mod, target="llvm").export_library(str(tmp_path / "gemm.irlab"))
    args = ArgInfo.from_entry_func(mod)
    config = EvaluatorConfig(number=1, repeat=3, min_repeat_ms=0, enable_cpu_cache_flush=True)
    assert config.f_preproc == "cache_flush_cpu_non_first_arg"
    assert EvaluatorConfig().f_preproc is None and "cache_flush" in repr(config)
    flushed = []
    real = cache_flush.flush_array
    monkeypatch.setattr(cache_flush, "flush_array", lambda a: flushed.append(a) or real(a))
    secs = M.measure(path, args, config, reference_path=path, num_threads=1)
    assert len(secs) == 3 and min(secs) > 0
    assert len(flushed) == 3 * (len(args) - 1)  # B and C (not A) before each repeat
    flushed.clear()
    monkeypatch.setattr(M, "check_against_reference", lambda *a, **k: 1.0)  # a slow one
    secs = M.measure(path, args, config, reference_path=path, num_threads=1)
    assert len(secs) == 3 and len(flushed) == 2 * (len(args) - 1)
