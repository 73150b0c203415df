"""LoweringExplorer on a library built with tuning records: the tuned kernel is marked, its
trace is the record's (sampled decisions highlighted) beside TOPI's default schedule; the
other kernels keep TOPI's and show no comparison."""

import numpy as np
import pytest

pytest.importorskip("anywidget")

import irlab as tvm  # noqa: E402
from irlab import meta_schedule as ms  # noqa: E402
from irlab import relay  # noqa: E402
from irlab.meta_schedule.arg_info import ArgInfo  # noqa: E402
from irlab.widgets import LoweringExplorer  # noqa: E402


def mlp():
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(4, 32))
    w0, b0 = relay.var("w0", shape=(64, 32)), relay.var("b0", shape=(64,))
    w1, b1 = relay.var("w1", shape=(16, 64)), relay.var("b1", shape=(16,))
    h = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w0), b0))
    out = relay.nn.bias_add(relay.nn.dense(h, w1), b1)
    params = {n: rng.uniform(-1, 1, s).astype("float32")
              for n, s in (("w0", (64, 32)), ("b0", (64,)), ("w1", (16, 64)), ("b1", (16,)))}
    return tvm.IRModule.from_expr(relay.Function([x, w0, b0, w1, b1], out)), params


def sampled_schedule(task):
    """The last layer's dense loop split by a sampled tile (a decision in the trace)."""
    sch = tvm.tir.Schedule(task.mod, seed=3)
    dense = sch.get_child_blocks(sch.get_block("root"))[0]
    i, j, k = sch.get_loops(dense)
    sch.split(j, sch.sample_perfect_tile(j, n=2))
    return sch


def test_the_tuned_kernel_shows_its_trace_beside_topi():
    mod, params = mlp()
    tasks = ms.relay_integration.extract_tasks(mod, "llvm", params)
    last = next(t for t in tasks if "relu" not in t.task_name)
    sch = sampled_schedule(last)
    db = ms.database.MemoryDatabase()
    db.commit_tuning_record(ms.database.TuningRecord(
        sch.trace, db.commit_workload(last.mod), [1e-6], "llvm",
        ArgInfo.from_entry_func(last.mod)))
    lib = ms.relay_integration.compile_relay(db, mod, "llvm", params)
    explorer = LoweringExplorer(lib)
    rows = {k["name"]: k for k in explorer.kernels}
    tuned = [name for name, row in rows.items() if row["tuned"]]
    assert len(tuned) == 1 and "relu" not in tuned[0]
    assert rows[tuned[0]]["impl"] == "meta_schedule (tuned)"

    explorer.select(tuned[0])
    assert explorer.tuned
    lines = explorer.trace.split("\n")
    assert explorer.decision_lines and all("sample_perfect_tile" in lines[i] and
                                           "decision=" in lines[i]
                                           for i in explorer.decision_lines)
    # TOPI's default of the same kernel: another trace, the dense block unsplit there
    assert explorer.default_trace and explorer.default_trace != explorer.trace
    assert "decision=" not in explorer.default_trace
    assert "T.block" in explorer.default_scheduled or "T.sblock" in \
        explorer.default_scheduled
    texts = explorer.texts
    assert texts["default_trace"] == explorer.default_trace
    page = explorer.to_html()
    assert "TOPI default" in page and "decision=" in page and "<b>tuned</b>" in page

    explorer.select(next(n for n in rows if n not in tuned))
    assert not explorer.tuned and explorer.default_trace == "" and not explorer.decision_lines
    assert "TOPI default" not in explorer.to_html()


def test_explore_with_a_database_builds_with_its_records():
    from irlab.widgets import explore

    mod, params = mlp()
    tasks = ms.relay_integration.extract_tasks(mod, "llvm", params)
    last = next(t for t in tasks if "relu" not in t.task_name)
    sch = sampled_schedule(last)
    db = ms.database.MemoryDatabase()
    db.commit_tuning_record(ms.database.TuningRecord(
        sch.trace, db.commit_workload(last.mod), [1e-6], "llvm",
        ArgInfo.from_entry_func(last.mod)))
    app = explore(mod, params, database=db, tab="Lowering")
    tuned = [k["name"] for k in app.lowering.kernels if k["tuned"]]
    assert len(tuned) == 1
    app.lowering.select(tuned[0])
    assert app.lowering.decision_lines and app.lowering.default_trace
