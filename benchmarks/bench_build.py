"""relay.build time of the small models (ResNet-18, the MLP) at opt_level 3: cold (the first
build in this process) and warm (the same build again), with the per-stage split.

Stages: ``optimize`` (the Relay pipeline), ``LowerTE`` (fused functions to PrimFuncs and the
graph codegen), ``TIR lowering`` (``lower_for_codegen``: the TIR passes + LowerIntrin),
``codegen`` (TIR to LLVM IR text in Python), ``LLVM O3`` (llvmlite: parse, O3, emit object) and
``LLVM load`` (MCJIT). Times are wall-clock seconds (CPU seconds in brackets). Prints figures;
asserts nothing. The disk cache is turned off (``IRLAB_CACHE=0``) unless ``--disk-cache``.

Run: python benchmarks/bench_build.py [--models resnet18,mlp] [--repeat 1] [--disk-cache]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

STAGES = ("optimize", "LowerTE", "TIR lowering", "codegen", "LLVM O3", "LLVM load")


class _Clock:
    """Accumulates (wall, cpu) per stage; ``wrap`` patches a module attribute to be timed."""

    def __init__(self):
        self.times = defaultdict(lambda: [0.0, 0.0])

    def reset(self):
        self.times.clear()

    def wrap(self, owner, attr, stage):
        inner = getattr(owner, attr)
        clock = self

        def timed(*args, **kwargs):
            w, c = time.perf_counter(), time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                t = clock.times[stage]
                t[0] += time.perf_counter() - w
                t[1] += time.process_time() - c

        setattr(owner, attr, timed)


def _install(clock):
    import irlab.build_module as bm
    import irlab.relay.pipeline as pipeline
    import irlab.relay.backend.lower_te_pass as lte
    import irlab.target.llvm_jit as jit
    from irlab.relay.backend.graph_codegen import GraphCodegen

    clock.wrap(pipeline, "optimize", "optimize")
    clock.wrap(lte, "lower_te_passes", "LowerTE:factory")  # cheap; the pass runs below
    original = lte.lower_te_passes

    def lower_te_passes(*args, **kwargs):
        seq = original(*args, **kwargs)

        def run(mod):
            w, c = time.perf_counter(), time.process_time()
            try:
                return seq(mod)
            finally:
                t = clock.times["LowerTE"]
                t[0] += time.perf_counter() - w
                t[1] += time.process_time() - c

        return run

    lte.lower_te_passes = lower_te_passes
    clock.wrap(GraphCodegen, "codegen", "LowerTE")
    clock.wrap(bm, "lower_for_codegen", "TIR lowering")
    clock.wrap(bm, "_build_llvm", "codegen+LLVM")
    clock.wrap(jit, "compile_ir", "LLVM O3")
    clock.wrap(jit.LLVMModule, "__init__", "LLVM load")


def _report(label, total_wall, total_cpu, times):
    parts = dict(times)
    both = parts.pop("codegen+LLVM", [0.0, 0.0])
    o3, load = parts.get("LLVM O3", [0.0, 0.0]), parts.get("LLVM load", [0.0, 0.0])
    # _build_llvm holds codegen, compile_ir and the first LLVMModule
    parts["codegen"] = [max(0.0, both[0] - o3[0] - load[0]), max(0.0, both[1] - o3[1] - load[1])]
    parts.pop("LowerTE:factory", None)
    row = ", ".join(f"{s} {parts.get(s, [0, 0])[0]:.2f} ({parts.get(s, [0, 0])[1]:.2f})"
                    for s in STAGES)
    print(f"  {label:5s} {total_wall:6.2f} s ({total_cpu:.2f} cpu): {row}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default="resnet18,mlp")
    parser.add_argument("--repeat", type=int, default=1, help="warm builds after the cold one")
    parser.add_argument("--disk-cache", action="store_true")
    args = parser.parse_args()
    if not args.disk_cache:
        os.environ["IRLAB_CACHE"] = "0"
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))

    import irlab as tvm
    from irlab import relay
    from irlab.relay.testing import MODELS

    clock = _Clock()
    _install(clock)
    for name in args.models.split(","):
        mod, params = MODELS[name]()
        print(f"{name}:")
        for run in range(1 + args.repeat):
            clock.reset()
            w, c = time.perf_counter(), time.process_time()
            with tvm.transform.PassContext(opt_level=3):
                relay.build(mod, "llvm", params=params)
            _report("cold" if run == 0 else "warm", time.perf_counter() - w,
                    time.process_time() - c, clock.times)


if __name__ == "__main__":
    main()
