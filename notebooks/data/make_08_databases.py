"""Make the tuning databases that ``08_auto_scheduling.ipynb`` reads (the "longer run").

    python notebooks/data/make_08_databases.py [--gemm-trials 128] [--mlp-trials 96]

Writes three work_dirs under ``notebooks/data/08_tuned/``: ``gemm_xgb`` and ``gemm_random``
(GEMM 128 as a TE compute, tuned with XGBModel / RandomModel, 16 trials a round) and ``mlp``
(``relay.testing.mlp`` at batch 16, ``tune_relay``). The records are kept in the order they
were measured, so the notebook rebuilds the best-so-far curves from them. Targets: GEMM
``llvm -num-cores=2``; the MLP ``llvm -num-cores=1`` (its kernels take microseconds: on a
shared machine two threads' wake-ups would dominate the timings). Generic targets: the
notebook re-times the best on whatever CPU runs it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

TARGET = "llvm -num-cores=2"
MLP_TARGET = "llvm -num-cores=1"
GEMM_N = 128
MLP_BATCH = 16


def gemm_te(n=GEMM_N):
    import irlab as tvm
    from irlab import te

    a = te.placeholder((n, n), name="A")
    b = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    return tvm.IRModule({"main": te.create_prim_func([a, b, c])})


def components():
    from irlab import meta_schedule as ms

    return {"builder": ms.builder.LocalBuilder(timeout_sec=120.0),
            "runner": ms.runner.LocalRunner(timeout_sec=60.0)}


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    return path


def main():
    from irlab import meta_schedule as ms
    from irlab.relay.testing import mlp

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gemm-trials", type=int, default=128)
    parser.add_argument("--mlp-trials", type=int, default=96)
    parser.add_argument("--only", choices=("gemm", "mlp"), default=None)
    args = parser.parse_args()
    root = os.path.join(HERE, "08_tuned")
    parts = components()
    if args.only in (None, "gemm"):
        for model in ("xgb", "random"):
            start = time.perf_counter()
            ms.tune_tir(gemm_te(), TARGET, fresh(os.path.join(root, f"gemm_{model}")),
                        args.gemm_trials, num_trials_per_iter=16, cost_model=model, seed=0,
                        **parts)
            print(f"gemm {model}: {time.perf_counter() - start:.0f} s", flush=True)
    if args.only in (None, "mlp"):
        mod, params = mlp.get_workload(batch_size=MLP_BATCH)
        start = time.perf_counter()
        db = ms.relay_integration.tune_relay(mod, params, MLP_TARGET,
                                             fresh(os.path.join(root, "mlp")),
                                             args.mlp_trials, num_trials_per_iter=16,
                                             seed=0, num_tuning_cores=1, **parts)
        print(db.task_scheduler.tuning_statistics())
        print(f"mlp: {time.perf_counter() - start:.0f} s", flush=True)
    for path, _, files in os.walk(root):  # the cost models are not needed to read results
        for name in files:
            if name == "cost_model.npz":
                os.remove(os.path.join(path, name))


if __name__ == "__main__":
    main()
