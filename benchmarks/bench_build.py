"""relay.build time of the small models (ResNet-18, the MLP) at opt_level 3: cold (the first
build in this process) and warm (the same build again), with the per-stage split.

Stages: ``optimize`` (the Relay pipeline), ``LowerTE`` (fused functions to PrimFuncs and the
graph codegen), ``TIR lowering`` (``lower_for_codegen``: the TIR passes + LowerIntrin),
``codegen`` (TIR to LLVM IR in Python; printing the IR as text is not counted), ``LLVM``
(llvmlite: parse, the O2 pipeline, emit object; in background threads, overlapping the
Python stages: ``irlab.target.llvm_build``) and ``LLVM load`` (MCJIT). Each stage shows its
CPU seconds (all threads), without the stages run inside it (relay.build lowers, generates
and starts compiling each kernel inside LowerTE, as soon as it is scheduled); ``verify`` is
``tir.analysis.verify_well_formed`` (in ``irlab.build`` and once per scheduled kernel; also
counted in the stage that called it); ``import compile`` is the CPU spent compiling modules
imported during the build from source (their ``.pyc`` files missing or not written:
``PYTHONDONTWRITEBYTECODE``; a user with ``.pyc`` files does not pay it) and ``gc`` Python's
cyclic garbage collections, both also counted in the stage that ran them; ``wait`` is the
wall time the build spent waiting for LLVM after Python had finished.
The head names the machine (``machine.describe()``). Prints figures; asserts nothing. The
disk cache is turned off (``IRLAB_CACHE=0``) unless ``--disk-cache``.

Run: python benchmarks/bench_build.py [--models resnet18,mlp] [--repeat 1] [--disk-cache] [--nchw]
     (IRLAB_COMPILE_THREADS=0 compiles in one part, in the calling thread)
"""

from __future__ import annotations

import argparse
import gc
import importlib.machinery
import os
import sys
import threading
import time
from collections import defaultdict

STAGES = ("optimize", "LowerTE", "TIR lowering", "codegen", "LLVM", "LLVM load", "verify",
          "import compile", "gc")


class _Clock:
    """Accumulates CPU seconds per stage (of the thread that runs it) and the main thread's
    wall time waiting for compiled parts; ``wrap`` patches an attribute to be timed. A stage
    run inside another (relay.build lowers and generates each kernel inside LowerTE) is
    counted in its own stage only, unless it is wrapped ``nested=True`` (``verify``)."""

    def __init__(self):
        self.cpu = defaultdict(float)
        self.lock = threading.Lock()
        self.local = threading.local()  # .inner: CPU seconds of the stages run inside

    def reset(self):
        self.cpu.clear()

    def add(self, stage, seconds):
        with self.lock:
            self.cpu[stage] += seconds

    def wrap(self, owner, attr, stage, nested=False):
        inner = getattr(owner, attr)
        clock = self

        def timed(*args, **kwargs):
            c = time.thread_time()
            outer = getattr(clock.local, "inner", 0.0)
            clock.local.inner = 0.0
            try:
                return inner(*args, **kwargs)
            finally:
                spent = time.thread_time() - c
                clock.add(stage, spent if nested else spent - clock.local.inner)
                clock.local.inner = outer + (0.0 if nested else spent)

        setattr(owner, attr, timed)


def _install(clock):
    import concurrent.futures

    import irlab.build_module as bm
    import irlab.relay.pipeline as pipeline
    import irlab.relay.backend.lower_te_pass as lte
    import irlab.target.llvm_jit as jit
    import irlab.tir.analysis.well_formed as well_formed
    import irlab.tir.transform.insert_bounds_checks as bounds_checks
    from irlab.relay.backend.graph_codegen import GraphCodegen
    from irlab.target.codegen_llvm import CodegenLLVM

    clock.wrap(pipeline, "optimize", "optimize")
    original = lte.lower_te_passes

    def lower_te_passes(*args, **kwargs):
        seq = original(*args, **kwargs)

        holder = type("Holder", (), {"run": staticmethod(seq)})
        clock.wrap(holder, "run", "LowerTE")
        return holder.run

    lte.lower_te_passes = lower_te_passes
    clock.wrap(GraphCodegen, "codegen", "LowerTE")
    clock.wrap(bm, "lower_for_codegen", "TIR lowering")
    clock.wrap(CodegenLLVM, "add_function", "codegen")
    clock.wrap(jit, "compile_ir", "LLVM")
    clock.wrap(jit.LLVMModule, "__init__", "LLVM load")
    clock.wrap(well_formed, "memory_safety_checks", "verify", nested=True)
    clock.wrap(bounds_checks, "memory_safety_checks", "verify", nested=True)
    clock.wrap(importlib.machinery.SourceFileLoader, "source_to_code", "import compile",
               nested=True)
    gc.callbacks.append(_gc_clock(clock))
    result = concurrent.futures.Future.result

    def waited(self, *args, **kwargs):  # the build's wall time blocked on LLVM
        w = time.perf_counter()
        try:
            return result(self, *args, **kwargs)
        finally:
            clock.add("wait", time.perf_counter() - w)

    concurrent.futures.Future.result = waited


def _gc_clock(clock):
    """A ``gc.callbacks`` entry adding each collection's CPU seconds to the "gc" stage."""
    started = threading.local()

    def callback(phase, info):
        if phase == "start":
            started.cpu = time.thread_time()
        elif getattr(started, "cpu", None) is not None:
            clock.add("gc", time.thread_time() - started.cpu)
            started.cpu = None

    return callback


def _report(label, total_wall, total_cpu, main_cpu, cpu):
    row = ", ".join(f"{s} {cpu.get(s, 0.0):.2f}" for s in STAGES)
    print(f"  {label:5s} {total_wall:6.2f} s wall ({total_cpu:.2f} s cpu, main thread "
          f"{main_cpu:.2f}; load {os.getloadavg()[0]:.2f}): {row}; "
          f"wait {cpu.get('wait', 0.0):.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default="resnet18,mlp")
    parser.add_argument("--repeat", type=int, default=1, help="warm builds after the cold one")
    parser.add_argument("--disk-cache", action="store_true")
    parser.add_argument("--nchw", action="store_true",
                        help="build with the packed NCHW convs instead of the default NCHWc "
                             "(PassContext config relay.x86.conv2d_NCHWc=False)")
    args = parser.parse_args()
    if not args.disk_cache:
        os.environ["IRLAB_CACHE"] = "0"
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))

    import irlab as tvm
    from irlab import relay
    from irlab.relay.testing import MODELS

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import describe

    print(describe())
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("PYTHONDONTWRITEBYTECODE is set: modules the build imports lazily are compiled "
              "from source inside the cold build (see 'import compile')")
    clock = _Clock()
    _install(clock)
    for name in args.models.split(","):
        mod, params = MODELS[name]()
        print(f"{name}:")
        for run in range(1 + args.repeat):
            clock.reset()
            w, c, m = time.perf_counter(), time.process_time(), time.thread_time()
            config = {"relay.x86.conv2d_NCHWc": False} if args.nchw else {}
            with tvm.transform.PassContext(opt_level=3, config=config):
                relay.build(mod, "llvm", params=params)
            _report("cold" if run == 0 else "warm", time.perf_counter() - w,
                    time.process_time() - c, time.thread_time() - m, clock.cpu)


if __name__ == "__main__":
    main()
