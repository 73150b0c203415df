"""MetaSchedule tuning benchmarks (issue 15): a tuned GEMM vs numpy, tuned networks vs
onnxruntime, and XGBModel vs RandomModel, side by side in one run with the machine named.

    python benchmarks/bench_tune.py                    # GEMM 1024 (1,000 trials), MLP, ResNet-18
    python benchmarks/bench_tune.py --quick            # GEMM 256, 64 trials, MLP only
    python benchmarks/bench_tune.py --only gemm --gemm-trials 300 --work-dir /tmp/ms
    python benchmarks/bench_tune.py --only gemm --gemm-trials 0 --work-dir /tmp/ms   (re-time)
    python benchmarks/bench_tune.py --only resnet --net-trials 0 --work-dir /tmp/ms  (re-time)
    python benchmarks/bench_tune.py --budget-minutes 15  # each tuning run stops after 15 min

* GEMM: ``C = A @ B`` given as a TE compute alone (no hand schedule), tuned with ``ms.tune_tir``
  for ``llvm -num-cores=2``; the best schedule is timed at 1 and 2 threads next to numpy
  (threadpoolctl limits OpenBLAS to the same threads) and bench_gemm.py's hand schedule, all
  interleaved (alternating repeats in one process). GFLOPS = 2 N^3 / median time. A second
  1-thread row: the best on one thread of the run's top 10 records (re-ranked in a session of
  its own, then timed in the table's).
* Networks: ``ms.relay_integration.tune_relay`` then ``compile_relay``; latency at 1 and 2
  threads next to the untuned build (TOPI's schedules) and onnxruntime on the same ONNX
  model, with the tuning wall time and how many kernels the build takes from a tuned record
  (tune_relay's final verification keeps TOPI's kernel unless a tuned one beat it by more
  than ``VERIFY_MARGIN``, timed interleaved).
* ``--budget-minutes M``: every tuning run stops after M minutes of wall time (the trial
  counts are then upper bounds; the figures say how many were reached). The load average is
  printed with the machine and again after each tuning run: the machine may be shared.
* Cost models: the same small GEMM tuned with XGBModel and with RandomModel; trials each
  needed to reach 90% of its final best.

Work directories (databases) are kept: a second run with the same ``--work-dir`` resumes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def gemm_te(n):
    import irlab as tvm
    from irlab import te

    a = te.placeholder((n, n), name="A")
    b = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    return tvm.IRModule({"main": te.create_prim_func([a, b, c])})


def irlab_gemm_runner(sch, a, b, threads):
    """(a callable of no arguments running the tuned GEMM on ``a``, ``b`` built for
    ``threads`` threads, its max error relative to numpy's product)."""
    import irlab as tvm

    n = a.shape[0]
    lib = tvm.build(sch.mod, target=f"llvm -num-cores={threads}")
    args = [tvm.nd.array(a), tvm.nd.array(b), tvm.nd.array(np.zeros((n, n), "float32"))]
    func = lib["main"]
    func(*args)
    want = a @ b
    err = float(np.abs(args[2].numpy() - want).max() / np.abs(want).max())
    return (func.bind(args) or (lambda: func(*args))), err


def builder_and_runner():
    """Generous timeouts: a candidate with a 512-step unroll takes seconds to compile, more
    on a loaded machine."""
    from irlab import meta_schedule as ms

    return {"builder": ms.builder.LocalBuilder(timeout_sec=BUILD_TIMEOUT),
            "runner": ms.runner.LocalRunner(timeout_sec=60)}


BUILD_TIMEOUT = 120.0
BUDGET_MINUTES = None  # --budget-minutes: the wall-time limit of each tuning run


def task_scheduler():
    """The gradient-based scheduler, stopped once ``BUDGET_MINUTES`` have passed (its
    listener ends every task after the batch that crossed the deadline)."""
    from irlab import meta_schedule as ms

    scheduler = ms.task_scheduler.TaskScheduler.create("gradient")
    if BUDGET_MINUTES is None:
        return scheduler
    deadline = time.monotonic() + 60.0 * BUDGET_MINUTES

    def stop_at_deadline(sched, task_id):
        if time.monotonic() > deadline:
            for record in sched.tasks:
                record.is_terminated = True

    scheduler.listeners.append(stop_at_deadline)
    return scheduler


def tune_gemm(n, trials, work_dir, cost_model="xgb", per_iter=64, seed=0):
    from irlab import meta_schedule as ms

    start = time.perf_counter()
    db = ms.tune_tir(gemm_te(n), "llvm -num-cores=2", work_dir, trials,
                     num_trials_per_iter=per_iter, cost_model=cost_model, seed=seed,
                     task_scheduler=task_scheduler(), **builder_and_runner())
    wall = time.perf_counter() - start
    return db, wall


def bench_gemm(n, trials, work_dir, per_iter=64):
    from irlab import meta_schedule as ms

    if trials == 0:  # re-time the best record of an earlier run's work_dir, no tuning
        db = ms.database.JSONDatabase(work_dir=work_dir)
        sch = ms.tir_integration.compile_tir(db, gemm_te(n), "llvm -num-cores=2")
        if sch is None:
            print(f"GEMM {n}: no successful record in {work_dir}")
            return
        print(f"\nGEMM {n}x{n}x{n} float32: the best of {len(db)} records in {work_dir}, "
              f"re-timed ({load()})")
        print_gemm_table(sch, n, db=db)
        return
    db, wall = tune_gemm(n, trials, work_dir, per_iter=per_iter)
    sch = ms.tir_integration.compile_tir(db, gemm_te(n), "llvm -num-cores=2")
    if sch is None:
        print(f"GEMM {n}: no successful record after {trials} trials")
        return
    done = db.task_scheduler.tasks[0].trials
    history = db.task_scheduler.tasks[0].best_history
    best_at = next((t for t, secs in history if secs <= history[-1][1]), None)
    print(f"\nGEMM {n}x{n}x{n} float32, {done} of {trials} trials tuned in {wall:.0f} s "
          f"({len(db)} records in {work_dir}; {load()}); the best was found at trial "
          f"{best_at}, 90% of it at trial {trials_to_90(history)}")
    print_gemm_table(sch, n, db=db)


RERANK_TOP_K = 10


def top_schedules(db, n, k=RERANK_TOP_K):
    """The ``k`` best distinct tuned schedules of the GEMM ``n`` in ``db`` (ranked by the
    tuning target's times: two threads)."""
    from irlab.meta_schedule.verification import best_tuned_records
    from irlab.target import Target

    workload = db.commit_workload(gemm_te(n))
    records = best_tuned_records(db, workload, Target("llvm -num-cores=2"), k)
    return [record.schedule() for record in records]


def rerank(schedules, n, threads):
    """The schedule of ``schedules`` fastest at ``threads`` threads (one interleaved session
    of 5 repeats; the table then times it again in a session of its own, so the pick's luck
    does not flatter the figure). A record tuned on two threads is not always the best on
    one: TVM tunes per target, and ``-num-cores`` is part of it."""
    from machine import interleaved

    rng = np.random.default_rng(1)
    a, b = (rng.uniform(-1, 1, (n, n)).astype("float32") for _ in range(2))
    runs = {i: irlab_gemm_runner(sch, a, b, threads)[0] for i, sch in enumerate(schedules)}
    t = interleaved(runs, 5, 0.2)
    return schedules[min(runs, key=lambda i: t[i].median)]


def print_gemm_table(sch, n, repeat=10, db=None):
    """The tuned GEMM next to numpy (its BLAS limited to the same threads) and the hand
    schedule of bench_gemm.py, at 1 and 2 threads, timed interleaved (machine.interleaved:
    alternating repeats, so a drifting host skews all alike): medians of wall time, and of the
    calling thread's CPU time at 1 thread (what other programs on a shared host distort least).
    With ``db``, a second 1-thread row times the record of the top ``RERANK_TOP_K`` that is
    fastest on one thread (``rerank``)."""
    from bench_gemm import irlab_gemm_runner as hand_gemm_runner
    from machine import interleaved
    from threadpoolctl import threadpool_limits

    flops = 2.0 * n ** 3
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (n, n)).astype("float32") for _ in range(2))
    out = np.empty((n, n), "float32")
    rows = [(1, sch, "best on 2 threads"), (2, sch, "best on 2 threads")]
    if db is not None:
        with threadpool_limits(limits=1, user_api="blas"):
            rows.insert(1, (1, rerank(top_schedules(db, n), n, 1),
                            f"top {RERANK_TOP_K} re-ranked on 1 thread"))
    print(f"{'threads':>7} {'tuned ms':>9} {'GFLOPS':>7} {'numpy ms':>9} {'GFLOPS':>7} "
          f"{'hand ms':>8} {'tuned/numpy speed':>17} {'by CPU s':>8}  max rel err  record")
    for threads, chosen, label in rows:
        tuned, err = irlab_gemm_runner(chosen, a, b, threads)
        runs = {"tuned": tuned, "numpy": lambda: np.matmul(a, b, out=out),
                "hand": hand_gemm_runner(a, b, threads)}
        with threadpool_limits(limits=threads, user_api="blas"):
            t = interleaved(runs, repeat, 0.2)
        ours, theirs = t["tuned"].median, t["numpy"].median
        by_cpu = (f"{t['numpy'].cpu_median / t['tuned'].cpu_median:>8.2f}" if threads == 1
                  else f"{'-':>8}")
        print(f"{threads:>7} {ours * 1e3:>9.3f} {flops / ours / 1e9:>7.1f} "
              f"{theirs * 1e3:>9.3f} {flops / theirs / 1e9:>7.1f} "
              f"{t['hand'].median * 1e3:>8.3f} {theirs / ours:>17.2f} {by_cpu}  {err:.1e}  "
              f"{label} ({load()})", flush=True)


def bench_network(name, model, trials, work_dir):
    from bench_e2e import irlab_runner, ort_runner
    from machine import interleaved

    from irlab import meta_schedule as ms
    from irlab.relay.frontend import from_onnx, onnx_models

    inputs = onnx_models.random_input(model)
    mod, params = from_onnx(model, freeze_params=True)
    target = "llvm -num-cores=2"
    if trials == 0:  # re-time an earlier run's records (work_dir), no tuning
        db = ms.database.JSONDatabase(work_dir=work_dir)
        print(f"\n{name}: the records of {work_dir} ({len(db)}), re-timed ({load()})")
    else:
        start = time.perf_counter()
        per_iter = max(4, min(32, trials // 16))  # small rounds: every task gets several
        db = ms.relay_integration.tune_relay(mod, params, target, work_dir, trials,
                                             num_trials_per_iter=per_iter,
                                             task_scheduler=task_scheduler(),
                                             **builder_and_runner())
        wall = time.perf_counter() - start
        tasks = db.task_scheduler.tasks
        done = sum(t.trials for t in tasks)
        print(f"\n{name}: {len(tasks)} tasks, {done} of {trials} trials tuned in {wall:.0f} s "
              f"({load()})")
        print(db.task_scheduler.tuning_statistics())
    print(f"{'threads':>7} {'tuned ms':>9} {'TOPI ms':>8} {'ort ms':>8} {'tuned/ort':>9} "
          f"{'TOPI/ort':>8}  max rel err  kernels tuned (after verification)")
    for threads in (1, 2):
        threaded = f"llvm -num-cores={threads}"
        tuned_lib = ms.relay_integration.compile_relay(db, mod, threaded, params)
        tuned_kernels = sum(bool(lf.tuned) for lf in tuned_lib.lowered)
        tuned_run, tuned_out = irlab_runner(tuned_lib, inputs)
        topi_run, _ = irlab_runner(untuned_build(mod, params, threaded), inputs)
        ort_run, ort_out = ort_runner(model, inputs, threads)
        # timed in alternation (machine.interleaved): a drifting host skews all three alike
        t = interleaved({"tuned": tuned_run, "topi": topi_run, "ort": ort_run}, 15, 0.2)
        ours, topi, theirs = (t[k].median for k in ("tuned", "topi", "ort"))
        expect = ort_out()
        err = float(np.abs(tuned_out() - expect).max() / max(np.abs(expect).max(), 1e-30))
        print(f"{threads:>7} {ours * 1e3:>9.3f} {topi * 1e3:>8.3f} {theirs * 1e3:>8.3f} "
              f"{ours / theirs:>9.2f} {topi / theirs:>8.2f}  {err:.1e}      "
              f"{tuned_kernels} of {len(tuned_lib.lowered)}", flush=True)


def untuned_build(mod, params, target):
    """relay.build with TOPI's schedules only (no database in scope)."""
    import irlab as tvm
    from irlab import relay

    with tvm.transform.PassContext(opt_level=3):
        return relay.build(mod, target=target, params=params)


def load():
    from machine import load as machine_load

    return machine_load()


def trials_to_90(history):
    """First trial whose best-so-far is within 90% of the final best throughput."""
    final = history[-1][1]
    return next((trial for trial, best in history if final / best >= 0.9), None)


def bench_cost_models(n, trials, work_root):
    print(f"\nCost models on GEMM {n}, {trials} trials each: trials to reach 90% of the "
          f"final best")
    for model in ("xgb", "random"):
        db, wall = tune_gemm(n, trials, os.path.join(work_root, f"cost-{model}-{n}"),
                             cost_model=model, per_iter=16)
        record = db.task_scheduler.tasks[0]
        print(f"  {model:>6}: best {record.best_secs * 1e3:.3f} ms, 90% after "
              f"{trials_to_90(record.best_history)} trials ({wall:.0f} s)", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="GEMM 256, 64 trials, MLP only")
    parser.add_argument("--only", choices=("gemm", "mlp", "resnet", "cost"), default=None)
    parser.add_argument("--gemm-trials", type=int, default=None)
    parser.add_argument("--net-trials", type=int, default=None)
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--per-iter", type=int, default=None, help="trials per search round")
    parser.add_argument("--budget-minutes", type=float, default=None,
                        help="stop each tuning run after this many minutes of wall time")
    args = parser.parse_args()
    global BUDGET_MINUTES
    BUDGET_MINUTES = args.budget_minutes
    from machine import describe

    from irlab.relay.frontend import onnx_models

    print(describe())
    root = args.work_dir or tempfile.mkdtemp(prefix="irlab-bench-tune-")
    n = 256 if args.quick else 1024
    gemm_trials = args.gemm_trials if args.gemm_trials is not None else (64 if args.quick else 1000)
    net_trials = args.net_trials if args.net_trials is not None else \
        (64 if args.quick else 1000)
    if args.only in (None, "gemm"):
        bench_gemm(n, gemm_trials, os.path.join(root, f"gemm-{n}"), args.per_iter or 64)
    if args.only in (None, "mlp"):
        bench_network("mlp 784-256-256-10 b32", onnx_models.mlp(), net_trials,
                      os.path.join(root, "mlp"))
    if args.only in (None, "resnet") and not args.quick:
        bench_network("resnet18 1x3x224x224", onnx_models.resnet18(image_size=224),
                      net_trials, os.path.join(root, "resnet18"))
    if args.only in (None, "cost"):
        bench_cost_models(128 if args.quick else 256, 32 if args.quick else 128, root)


if __name__ == "__main__":
    main()
