"""ms.runner.DaskRunner and ms.builder.DaskBuilder on a LocalCluster started in the test; an
unreachable cluster fails at once."""

import pytest

from irlab.errors import IrlabError
from irlab.meta_schedule.arg_info import ArgInfo
from irlab.meta_schedule.builder import BuilderInput
from irlab.meta_schedule.runner import EvaluatorConfig, RunnerInput

distributed = pytest.importorskip(
    "distributed", reason="DaskRunner needs dask distributed (irlab[tune]; CI installs it)")

from irlab.meta_schedule.builder import DaskBuilder  # noqa: E402
from irlab.meta_schedule.runner import DaskRunner  # noqa: E402
from ms_workloads import copies_a, gemm_mod  # noqa: E402


def test_dask_builder_and_runner_on_a_local_cluster():
    mod = gemm_mod(64)
    args = ArgInfo.from_entry_func(mod)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        good, wrong = (b.artifact_path for b in DaskBuilder(client=client).build(
            [BuilderInput(mod, "llvm"), BuilderInput(copies_a, "llvm")]))
        runner = DaskRunner(client=client, evaluator_config=EvaluatorConfig(1, 1, 1))
        inputs = [RunnerInput(good, "cpu", args, reference_path=good),
                  RunnerInput(wrong, "cpu", args, reference_path=good)]
        ok, bad = [f.result() for f in runner.run(inputs)]
        # the final verification's entry point: in turns, on one worker, failures apart
        ok_turns, bad_turns = runner.run_interleaved(inputs + inputs[:1], rounds=3)[:2]
    assert ok.error_msg is None and ok.run_secs[0] > 0
    assert bad.run_secs is None and "differs from the untuned build" in bad.error_msg
    assert ok_turns.error_msg is None and len(ok_turns.run_secs) == 3
    assert bad_turns.run_secs is None and "differs from the untuned build" in \
        bad_turns.error_msg


def test_unreachable_scheduler_fails_at_once():
    with pytest.raises(IrlabError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        DaskRunner("tcp://127.0.0.1:9", connect_timeout_sec=1)
