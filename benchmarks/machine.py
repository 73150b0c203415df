"""The machine a benchmark ran on, printed beside its figures: CPU model, LLVM's name for it,
vector ISA, cores, numpy's BLAS kernel (and whether ``OPENBLAS_CORETYPE`` forces it), load;
and the interleaved timing the side-by-side benchmarks share."""

from __future__ import annotations

import os
import statistics
import time


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def isa(target=None) -> str:
    from irlab.target import Target

    t = Target(target or "llvm")
    name = "AVX-512" if t.has_feature("avx512f") else "AVX2" if t.has_feature("avx2") else \
        "AVX" if t.has_feature("avx") else "SSE"
    return (f"{name} ({t.vector_width('float32')} float32 lanes, "
            f"{t.num_vector_registers} vector registers)")


def blas_kernel() -> str:
    """numpy's BLAS as threadpoolctl reports it (library, version, kernel architecture)."""
    try:
        import numpy  # noqa: F401  (loads the BLAS threadpoolctl reports)
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (threadpoolctl missing)"
    libs = [f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}"
            for i in threadpool_info() if i.get("user_api") == "blas"]
    forced = os.environ.get("OPENBLAS_CORETYPE")
    note = f"; OPENBLAS_CORETYPE={forced} forces it" if forced else ""
    return (", ".join(libs) or "no BLAS found") + note


def load() -> str:
    try:
        return "load average %.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "load average unknown"


def describe() -> str:
    """One paragraph naming the machine, for the head of a benchmark's output."""
    from irlab.target import host_cpu

    pretend = os.environ.get("IRLAB_HOST_CPU")
    llvm_name = f"LLVM: {host_cpu()[0]}" + (", pretended by IRLAB_HOST_CPU" if pretend else "")
    return (f"CPU: {cpu_model()} ({llvm_name}), {os.cpu_count()} CPUs; "
            f"ISA: {isa()}\nnumpy BLAS: {blas_kernel()}; {load()}")


# -- side-by-side timing ---------------------------------------------------------------------
# This host's speed drifts by ~30% within a minute (co-tenants), so two figures measured one
# after the other compare two different machines. ``interleaved`` alternates the contenders'
# repeats in one process, so each median spans the same minutes; ``settle`` first lets the
# threads an earlier run left spinning (irlab's pool workers spin ~0.3 ms, OpenBLAS's ~0.1 s,
# onnxruntime's pool a little) fall asleep, so they do not take a core from the next run.
SETTLE_NOTE = ("each batch starts once this process's other threads are idle (spinning pool "
               "workers of irlab / OpenBLAS / onnxruntime asleep)")


def settle(max_seconds=0.5, step=0.005) -> float:
    """Wait (at most ``max_seconds``) until the other threads of this process stop using CPU;
    the seconds waited."""
    start = time.perf_counter()
    while time.perf_counter() - start < max_seconds:
        before = time.process_time()
        time.sleep(step)
        if time.process_time() - before < 0.05 * step:
            break
    return time.perf_counter() - start


class Timing:
    """Per-call figures of one contender: a list per repeat of wall seconds, the calling
    thread's CPU seconds, and the CPU seconds the process's other threads used meanwhile."""

    def __init__(self, name):
        self.name, self.wall, self.cpu, self.others = name, [], [], []

    @property
    def median(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def others_median(self) -> float:
        return statistics.median(self.others)

    def __repr__(self):
        return (f"Timing({self.name}: {self.median * 1e3:.3f} ms wall, "
                f"{self.cpu_median * 1e3:.3f} ms thread CPU, {len(self.wall)} repeats)")


def _calls_per_repeat(run, seconds) -> int:
    """How many calls of ``run`` last about ``seconds`` (after one warm-up call)."""
    run()
    number, elapsed = 1, 0.0
    while True:
        start = time.perf_counter()
        for _ in range(number):
            run()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds or number >= 1 << 20:
            return number
        number = max(number * 2, int(number * seconds / max(elapsed, 1e-9)) + 1)


def interleaved(runs: dict, repeat=10, seconds=0.1) -> dict:
    """``{name: Timing}`` of the callables ``runs`` (no arguments), timed in alternation:
    repeat r runs every contender once (order reversed on odd repeats), each for about
    ``seconds``, after ``settle()``."""
    numbers = {name: _calls_per_repeat(run, seconds) for name, run in runs.items()}
    timings = {name: Timing(name) for name in runs}
    names = list(runs)
    for r in range(repeat):
        for name in names if r % 2 == 0 else names[::-1]:
            run, number = runs[name], numbers[name]
            settle()
            process, thread, wall = time.process_time(), time.thread_time(), time.perf_counter()
            for _ in range(number):
                run()
            wall = time.perf_counter() - wall
            thread = time.thread_time() - thread
            process = time.process_time() - process
            timing = timings[name]
            timing.wall.append(wall / number)
            timing.cpu.append(thread / number)
            timing.others.append(max(process - thread, 0.0) / number)
    return timings
