"""The machine a benchmark ran on, printed beside its figures: CPU model, LLVM's name for it,
vector ISA, cores, numpy's BLAS kernel (and whether ``OPENBLAS_CORETYPE`` forces it), load."""

from __future__ import annotations

import os


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
