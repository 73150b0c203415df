"""Does MetaSchedule's GEMM design space hold a fast kernel? (issue 15, item 2)

    python benchmarks/bench_ms_space.py                 # 512^3, 1 thread, 24 samples, 24 mutations
    python benchmarks/bench_ms_space.py --size 1024 --threads 2 --samples 64 --mutations 64

The workload is a TE matmul given alone (``te.create_prim_func``, no hand schedule). Its
design space comes from the default CPU rules (``PostOrderApply`` over ``ScheduleRule.create
("llvm")``: SSRSRS multi-level tiling with a write cache, parallelize / vectorize / unroll).
Three points of that space are timed against TOPI's hand schedule of the same GEMM
(``bench_gemm.gemm_schedule``: packed B panels, a ``dense_tile`` register tile):

- the best of ``--samples`` random samples;
- that best after ``--mutations`` steps of hill climbing with the default mutators (a mutant
  replaces the best when it is faster) -- a poor man's search, not ms-tune's evolution;
- a hand-picked point: TOPI's register tile (``dense_tile``: ``bm`` rows unrolled x ``bn``
  vectorized columns) with k in slices of 64 inside the tile (unrolled with the rows: the
  unroll depth 512; depth 64 ran 1.3x slower at 1024) and ``16`` register tiles down
  the rows sharing each slice of B while it is in L1 (the blocking TOPI gets from packing B;
  with one register tile per slice, B's rows, a page apart at 1024, cost 2-3x), the write
  cache at the tile; replayed through the space's own trace, one time per design space.

Every candidate is checked against numpy once built. GFLOPS = 2*n^3 / median time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def gemm_workload(n):
    from irlab import te

    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


class Timer:
    """Builds and times candidate modules on fixed inputs, checking each result."""

    def __init__(self, n, threads, repeat):
        import irlab

        rng = np.random.default_rng(0)
        self.a = rng.standard_normal((n, n), dtype=np.float32)
        self.b = rng.standard_normal((n, n), dtype=np.float32)
        self.expected = self.a.astype(np.float64) @ self.b.astype(np.float64)
        self.args = (irlab.nd.array(self.a), irlab.nd.array(self.b),
                     irlab.nd.empty((n, n), "float32"))
        self.n, self.threads, self.repeat = n, threads, repeat

    def gflops(self, mod, name="main"):
        import irlab

        lib = irlab.build(mod, target=f"llvm -num-cores={self.threads}")
        lib[name](*self.args)
        np.testing.assert_allclose(self.args[2].numpy(), self.expected, rtol=1e-3,
                                   atol=1e-3 * np.sqrt(self.n))
        timer = lib.time_evaluator(name, irlab.cpu(), number=1, repeat=self.repeat,
                                   min_repeat_ms=50)
        return 2.0 * self.n ** 3 / timer(*self.args).median / 1e9


def replay(ctx, trace, seed, provider=None):
    """``trace`` replayed on the workload (missing decisions sampled) and postprocessed."""
    from irlab.meta_schedule.postproc import apply_postprocs
    from irlab.tir.schedule import Schedule

    sch = Schedule(ctx.mod, seed=seed, enable_check=False)
    trace.apply_to_schedule(sch, remove_postproc=True, decision_provider=provider)
    return sch if apply_postprocs(sch, ctx.space_generator.postprocs) else None


def topi_like_provider(n, bm, bn, rows=16):
    """Decisions of the hand-picked point, in the order the GEMM space samples them."""
    rows = rows if n % (bm * rows) == 0 else 1
    tiles = iter([[1, n // (bm * rows), rows, bm], [n // bn, 1, 1, bn], [n // 64, 64]])

    def provide(inst, args, kwargs, decision):
        if inst.kind == "sample_perfect_tile":
            return next(tiles)
        if inst.kind == "sample_categorical":  # unroll up to 512: bm x the 64-deep k slice
            return kwargs["candidates"].index(512)
        return decision

    return provide


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--samples", type=int, default=24)
    parser.add_argument("--mutations", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()

    from tqdm import tqdm

    from irlab import meta_schedule as ms
    from irlab.target import Target
    from irlab.tir.schedule import RandomEngine, Trace
    from irlab.topi.x86.dense import dense_tile
    from bench_gemm import gemm_schedule
    from machine import blas_kernel, cpu_model, isa, load

    n, target = opts.size, f"llvm -num-cores={opts.threads}"
    print(f"# {cpu_model()}; {isa()}; {load()}\n# numpy: {blas_kernel()}")
    timer = Timer(n, opts.threads, opts.repeat)

    ctx = ms.TuneContext(gemm_workload(n), target=target, space_generator="post-order-apply",
                         rand_state=opts.seed)
    start = time.perf_counter()
    spaces = ctx.generate_design_space()
    print(f"# {len(spaces)} design spaces in {time.perf_counter() - start:.2f} s")

    # TOPI and the hand-picked point are timed alternately, best of two each: on a loaded
    # machine one timing of each, minutes apart, says more about the load than the kernels
    bm, bn = dense_tile(n, n, Target(target))
    topi_mod = gemm_schedule(n, n, n).mod
    hand_mods = [sch.mod for sch in (
        replay(ctx, Trace(space.trace.insts), 0, topi_like_provider(n, bm, bn))
        for space in spaces) if sch is not None]
    topi = hand = 0.0
    for _ in range(2):
        topi = max(topi, timer.gflops(topi_mod, "gemm"))
        hand = max([hand] + [timer.gflops(mod) for mod in hand_mods])

    best, best_sch = 0.0, None
    for seed in tqdm(range(opts.samples), desc="random samples"):
        sch = replay(ctx, Trace(spaces[seed % len(spaces)].trace.insts), seed)
        if sch is not None:
            g = timer.gflops(sch.mod)
            best, best_sch = (g, sch) if g > best else (best, best_sch)
    sampled = best
    rand = RandomEngine(opts.seed)
    mutators = list(ctx.space_generator.mutator_probs.items())
    for step in tqdm(range(opts.mutations if best_sch is not None else 0), desc="mutations"):
        mutator = mutators[rand.choice([p for _, p in mutators])][0]
        trace = mutator.apply(best_sch.trace, rand)
        sch = None if trace is None else replay(ctx, trace, step)
        if sch is not None:
            g = timer.gflops(sch.mod)
            best, best_sch = (g, sch) if g > best else (best, best_sch)

    print(f"\nGEMM {n}^3 float32, {opts.threads} thread(s), GFLOPS (x TOPI)")
    print(f"  TOPI hand schedule (bench_gemm)        {topi:8.1f}")
    for label, g in [(f"best of {opts.samples} random samples", sampled),
                     (f"  + {opts.mutations} mutation steps", best),
                     (f"hand-picked point (tile {bm}x{bn}, x16 rows)", hand)]:
        print(f"  {label:38s} {g:8.1f}  ({g / topi:.2f}x)")
    if best_sch is not None:
        print("\nbest trace:\n" + str(best_sch.trace))


if __name__ == "__main__":
    main()
