"""float32 GEMM from an irlab schedule vs numpy (OpenBLAS), at 1 and 2 threads (issue 7).

    python benchmarks/bench_gemm.py            # 512 and 1024, 1 and 2 threads, build times
    python benchmarks/bench_gemm.py --quick    # smoke run (256 and 512, short timings)

The schedule (``gemm_schedule``): B is packed into panels ``packedB[jo, k, ji]`` of ``bn``
columns (one panel per outer column tile, packed just before it is used, so it is hot in L2);
C is computed in ``bm x bn`` register tiles (``cache_write(..., "local")``) sized from the
host target by TOPI's ``dense_tile``: 4x64 floats (16 ``<16 x float>`` accumulators) with
AVX-512, 4x16 (8 ``<8 x float>``) with AVX2; ``k`` runs outside the unrolled ``ii`` and
vectorized ``ji`` loops so the inner loop is bm broadcasts + bn/lanes loads + bm*bn/lanes FMAs;
the outer column tiles run in parallel (``-num-cores`` threads).

A second table: ``nn.dense`` of an N x N weight bound as a constant, through ``relay.build``
at opt_level 3 (AlterOpLayout + FoldConstant pack the weight once), against numpy's ``x @ w.T``.

irlab's two and numpy's ``a @ b`` (its BLAS limited to the same threads) are timed
interleaved (``machine.interleaved``: alternating repeats in one process, each started once no
thread of the process is left spinning), so each ratio compares medians over the same minutes
on a host whose speed drifts. When the environment forces OpenBLAS's kernel
(``OPENBLAS_CORETYPE``, ``OPENBLAS_L2_SIZE``), numpy is also run in a subprocess without those
variables (its own kernel, e.g. SkylakeX) and shown in a column of its own (not interleaved).
GFLOPS = 2*M*N*K / median time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

FORCED_KERNEL_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


# -- the schedule --------------------------------------------------------------------------
def gemm_func(M, N, K, bn=64, name="gemm"):
    """C = A @ B with B packed into (N // bn, K, bn) panels, as a PrimFunc(A, B, C)."""
    from irlab import te

    if N % bn:
        raise ValueError(f"N={N} must be a multiple of bn={bn}")
    A = te.placeholder((M, K), "float32", name="A")
    B = te.placeholder((K, N), "float32", name="B")
    packed = te.compute((N // bn, K, bn), lambda jo, k, ji: B[k, jo * bn + ji], name="packedB")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * packed[j // bn, k, j % bn], axis=k),
                   name="C")
    return te.create_prim_func([A, B, C]).with_attr("global_symbol", name)


def gemm_schedule(M, N, K, bm=None, bn=None, kb=None, pack_at="jo", name="gemm"):
    """The tir.Schedule of a float32 GEMM ``C[M, N] = A[M, K] @ B[K, N]``.

    bm x bn: the register tile (None: TOPI's ``dense_tile`` for the host target; bn a
    multiple of the vector lanes).
    kb: split the reduction into blocks of kb (None: no split). pack_at: "jo" packs each B
    panel inside the parallel column loop just before it is used; "root" packs all of B first
    in its own parallel loop.
    """
    from irlab import tir
    from irlab.target import Target
    from irlab.topi.x86.dense import dense_tile

    if bm is None or bn is None:
        tile_m, tile_n = dense_tile(M, N, Target("llvm"))
        bm, bn = bm or tile_m, bn or tile_n
    if M % bm:
        raise ValueError(f"M={M} must be a multiple of bm={bm}")
    if kb is not None and K % kb:
        raise ValueError(f"K={K} must be a multiple of kb={kb}")
    sch = tir.Schedule(gemm_func(M, N, K, bn, name))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    io, ii = sch.split(i, [None, bm])
    jo, ji = sch.split(j, [None, bn])
    if kb is None:
        sch.reorder(jo, io, k, ii, ji)
        red = k
    else:
        ko, ki = sch.split(k, [None, kb])
        sch.reorder(jo, io, ko, ki, ii, ji)
        red = ko
    cl = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(cl, io)
    sch.decompose_reduction(c, red)
    sch.vectorize(ji)
    sch.unroll(ii)
    sch.parallel(jo)
    sch.vectorize(sch.get_loops(cl)[-1])  # write-back of the register tile
    pb = sch.get_block("packedB")
    if pack_at == "jo":
        sch.compute_at(pb, jo)
        sch.vectorize(sch.get_loops(pb)[-1])
    else:
        loops = sch.get_loops(pb)
        sch.vectorize(loops[-1])
        sch.parallel(loops[0])
    return sch


# -- timing --------------------------------------------------------------------------------
def _gflops(n, seconds):
    return 2.0 * n ** 3 / seconds / 1e9


def _time_numpy(a, b, repeat, min_repeat_ms):
    """Median seconds per ``a @ b``, each repeat averaging enough calls to last min_repeat_ms."""
    out = np.empty((a.shape[0], b.shape[1]), np.float32)
    np.matmul(a, b, out=out)  # warm-up
    number = 1
    while True:  # grow number until one repeat lasts min_repeat_ms (as time_evaluator does)
        start = time.perf_counter()
        for _ in range(number):
            np.matmul(a, b, out=out)
        elapsed = time.perf_counter() - start
        if elapsed * 1000 >= min_repeat_ms:
            break
        number = max(int(min_repeat_ms / max(elapsed / number * 1000, 1e-3)) + 1,
                     int(number * 1.618) + 1)
    results = [elapsed / number]
    for _ in range(repeat - 1):
        start = time.perf_counter()
        for _ in range(number):
            np.matmul(a, b, out=out)
        results.append((time.perf_counter() - start) / number)
    return float(np.median(results))


def numpy_part(sizes, threads, repeat, min_repeat_ms):
    """numpy's GFLOPS per (size, threads) and the BLAS it used (threadpoolctl)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    rng = np.random.default_rng(0)
    info = [{k: i.get(k) for k in ("internal_api", "architecture", "version", "num_threads")}
            for i in threadpool_info() if i.get("user_api") == "blas"]
    results = {}
    for n in sizes:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        for t in threads:
            with threadpool_limits(limits=t, user_api="blas"):
                results[f"{n}x{t}"] = _gflops(n, _time_numpy(a, b, repeat, min_repeat_ms))
    return {"blas": info, "gflops": results,
            "env": {k: os.environ.get(k) for k in FORCED_KERNEL_VARS}}


def numpy_part_without_forced_kernel(sizes, threads, repeat, min_repeat_ms):
    """numpy_part in a subprocess whose environment lacks OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE
    (``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE``): OpenBLAS then picks its AVX-512 kernel."""
    env = {k: v for k, v in os.environ.items() if k not in FORCED_KERNEL_VARS}
    cmd = [sys.executable, os.path.abspath(__file__), "--numpy-only",
           "--sizes", *map(str, sizes), "--threads", *map(str, threads),
           "--repeat", str(repeat), "--min-repeat-ms", str(min_repeat_ms)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"numpy subprocess failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def irlab_gemm_runner(a, b, threads, **schedule_kw):
    """A callable of no arguments running ``gemm_schedule``'s GEMM of ``a @ b`` built for
    ``threads`` threads (checked against float64 numpy once)."""
    import irlab

    n = a.shape[0]
    A, B, C = irlab.nd.array(a), irlab.nd.array(b), irlab.nd.empty((n, n), "float32")
    mod = irlab.build(gemm_schedule(n, n, n, **schedule_kw).mod,
                      target=f"llvm -num-cores={threads}")
    gemm = mod["gemm"]
    gemm(A, B, C)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(C.numpy(), expected, rtol=1e-3, atol=1e-3 * np.sqrt(n))
    return gemm.bind([A, B, C]) or (lambda: gemm(A, B, C))


def relay_dense_runner(x, w, threads):
    """The graph executor's ``run`` of ``nn.dense(x, const w)`` through relay.build
    (opt_level 3) for ``threads`` threads (checked against numpy once)."""
    import irlab
    from irlab import relay
    from irlab.contrib import graph_executor

    n = x.shape[0]
    data = relay.var("x", shape=x.shape)
    mod = irlab.IRModule.from_expr(relay.Function([data], relay.nn.dense(data, relay.const(w))))
    with irlab.transform.PassContext(opt_level=3):
        lib = relay.build(mod, f"llvm -num-cores={threads}")
    m = graph_executor.GraphModule(lib["default"](irlab.cpu()))
    m.set_input(x=x)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), x @ w.T, rtol=1e-3,
                               atol=1e-3 * np.sqrt(n))
    return m.run


def side_by_side(sizes, threads, repeat, min_repeat_ms):
    """``{"NxT": {name: machine.Timing}}``: irlab's GEMM schedule ("gemm"), ``nn.dense``
    through relay.build ("dense") and numpy's ``a @ b`` ("numpy", its BLAS limited to T
    threads), timed interleaved at each size and thread count."""
    from machine import interleaved
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    results = {}
    for n in sizes:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        out = np.empty((n, n), np.float32)
        for t in threads:
            runs = {"gemm": irlab_gemm_runner(a, b, t), "dense": relay_dense_runner(a, b, t),
                    "numpy": lambda: np.matmul(a, b, out=out)}
            with threadpool_limits(limits=t, user_api="blas"):
                results[f"{n}x{t}"] = interleaved(runs, repeat, min_repeat_ms / 1000)
    return results


def build_times(n, **schedule_kw):
    """Seconds: schedule construction; a cold build (the program cache, the object memory cache
    and the disk cache all empty); rebuilds hitting the disk object cache (lowering + codegen
    + loading the object), the memory object cache, and the program cache (``irlab.build``'s
    cache of built modules)."""
    import irlab
    from irlab import build_module
    from irlab.target import llvm_jit

    def clear(objects=True):
        getattr(build_module, "_built", {}).clear()
        if objects:
            llvm_jit._memory_cache.clear()

    def timed_build():
        start = time.perf_counter()
        irlab.build(sch.mod, target="llvm -num-cores=1")
        return time.perf_counter() - start

    start = time.perf_counter()
    sch = gemm_schedule(n, n, n, **schedule_kw)
    times = {"schedule": time.perf_counter() - start}
    saved = {k: os.environ.get(k) for k in ("IRLAB_CACHE", "IRLAB_CACHE_DIR")}
    try:
        with tempfile.TemporaryDirectory(prefix="irlab-bench-cache-") as tmp:
            os.environ.pop("IRLAB_CACHE", None)
            os.environ["IRLAB_CACHE_DIR"] = tmp  # an empty disk cache
            clear()
            times["cold"] = timed_build()
            clear()
            times["disk"] = timed_build()
            clear(objects=False)
            times["memory"] = timed_build()
            times["program"] = timed_build()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return times


# -- report --------------------------------------------------------------------------------
def _kernel(part):
    return ", ".join(f"{b['internal_api']} {b['version']} {b['architecture']}"
                     for b in part["blas"]) or "no BLAS found"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fast smoke run")
    parser.add_argument("--sizes", type=int, nargs="+")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int)
    parser.add_argument("--min-repeat-ms", type=float)
    parser.add_argument("--no-avx512", action="store_true",
                        help="skip the numpy run without the forced AVX2 kernel")
    parser.add_argument("--numpy-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = args.sizes or ([256, 512] if args.quick else [512, 1024])
    repeat = args.repeat or (3 if args.quick else 10)
    min_ms = args.min_repeat_ms if args.min_repeat_ms is not None else (
        50 if args.quick else 200)
    try:
        import threadpoolctl  # noqa: F401
    except ImportError:
        sys.exit("bench_gemm needs threadpoolctl to tell numpy's BLAS kernel: "
                 "pip install threadpoolctl")
    if args.numpy_only:
        print(json.dumps(numpy_part(sizes, args.threads, repeat, min_ms)))
        return

    from machine import SETTLE_NOTE, blas_kernel, describe, load

    print(describe())
    print(f"float32 GEMM, N = M = K in {sizes}, threads {args.threads}; "
          f"median of {repeat} repeats of >= {min_ms:g} ms")
    forced_now = {k: v for k, v in os.environ.items() if k in FORCED_KERNEL_VARS}
    fast = None
    if forced_now and not args.no_avx512:
        fast = numpy_part_without_forced_kernel(sizes, args.threads, repeat, min_ms)
    timings = side_by_side(sizes, args.threads, repeat, min_ms)
    print(f"numpy (this environment{', ' + str(forced_now) if forced_now else ''}): "
          f"{blas_kernel()}")
    if fast is not None:
        print(f"numpy-512 (a separate process without {' / '.join(FORCED_KERNEL_VARS)}, "
              f"not interleaved): {_kernel(fast)}")
    print(f"irlab and numpy timed interleaved: {repeat} alternating repeats, same process, "
          f"numpy's BLAS limited to the same threads; ratio = median / median; {SETTLE_NOTE}.")
    print("others: CPU the process's other threads used during irlab's 1-thread runs, in % "
          "of its wall time (0 = nothing left spinning)")
    tables = (("float32 GEMM, irlab's schedule (bench_gemm.gemm_schedule)", "gemm"),
              ("nn.dense(x, constant w) through relay.build, opt_level 3 (numpy: x @ w)",
               "dense"))
    for title, key in tables:
        print(f"\n{title}: GFLOPS (2*N^3 / median time)")
        header = f"{'N':>5} {'thr':>3} {'irlab':>8} {'numpy':>8} {'ratio':>6} {'others':>7}"
        print(header + (f" {'numpy-512':>10} {'ratio':>6}" if fast is not None else ""))
        for n in sizes:
            for t in args.threads:
                timing = timings[f"{n}x{t}"]
                mine, theirs = timing[key].median, timing["numpy"].median
                others = f"{100 * timing[key].others_median / mine:.1f}%" if t == 1 else "-"
                line = (f"{n:>5} {t:>3} {_gflops(n, mine):>8.1f} {_gflops(n, theirs):>8.1f} "
                        f"{theirs / mine:>6.2f} {others:>7}")
                if fast is not None:
                    best = fast["gflops"][f"{n}x{t}"]
                    line += f" {best:>10.1f} {_gflops(n, mine) / best:>6.2f}"
                print(line)
    print("\nbuild times (ms): schedule; build cold (all caches empty); rebuild from the disk "
          "object cache, the memory object cache, the program cache")
    print(f"{'N':>5} {'schedule':>9} {'cold':>8} {'disk':>8} {'memory':>8} {'program':>8}")
    for n in sizes:
        bt = {k: v * 1000 for k, v in build_times(n).items()}
        print(f"{n:>5} {bt['schedule']:>9.1f} {bt['cold']:>8.1f} {bt['disk']:>8.1f} "
              f"{bt['memory']:>8.1f} {bt['program']:>8.2f}")
    print(f"\n{load()}")


if __name__ == "__main__":
    main()
