"""What a CPU offers the schedules: its vector ISA, vector register file and cache sizes.

The host is read from llvmlite (LLVM's name for the CPU and its feature list) and from
``/sys/devices/system/cpu``; a CPU named with ``-mcpu`` is looked up in ``NAMED_CPUS``, a small
table of x86 CPUs LLVM knows (their vector features and typical per-core cache sizes), so that
code for a CPU the host lacks can be scheduled and inspected on any machine.
"""

from __future__ import annotations

import dataclasses
import functools
import os

KIB = 1024
MIB = 1024 * KIB

# Feature sets of the x86 ISA levels, each including the one before.
_SSE4 = ("sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt")
_AVX = _SSE4 + ("avx",)
_AVX2 = _AVX + ("avx2", "fma", "f16c", "bmi", "bmi2")
_AVX512 = _AVX2 + ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl")
_AVX512_VNNI = _AVX512 + ("avx512vnni",)


@dataclasses.dataclass(frozen=True)
class CPUInfo:
    """Features (LLVM's names, without ``+``) and per-core cache sizes in bytes (L3: shared)."""

    name: str
    features: frozenset
    l1d: int = 32 * KIB
    l2: int = 256 * KIB
    l3: int = 8 * MIB

    @property
    def cache_sizes(self) -> dict:
        return {"L1d": self.l1d, "L2": self.l2, "L3": self.l3}

    def __repr__(self) -> str:
        isa = next((f for f in ("avx512f", "avx2", "avx", "sse4.2", "sse2")
                    if f in self.features), "scalar")
        return (f"CPUInfo({self.name}: {isa}, {len(self.features)} features, "
                f"L1d {_size(self.l1d)}, L2 {_size(self.l2)}, L3 {_size(self.l3)})")


def _size(nbytes: int) -> str:
    return f"{nbytes // MIB} MiB" if nbytes >= MIB else f"{nbytes // KIB} KiB"


def _cpu(name, features, l1d=32 * KIB, l2=256 * KIB, l3=8 * MIB):
    return CPUInfo(name, frozenset(features), l1d, l2, l3)


NAMED_CPUS = {cpu.name: cpu for cpu in [
    _cpu("x86-64", ("sse2",)),
    _cpu("x86-64-v2", _SSE4),
    _cpu("x86-64-v3", _AVX2),
    _cpu("x86-64-v4", _AVX512, l2=1 * MIB),
    _cpu("nehalem", _SSE4),
    _cpu("sandybridge", _AVX),
    _cpu("ivybridge", _AVX),
    _cpu("haswell", _AVX2),
    _cpu("core-avx2", _AVX2),
    _cpu("broadwell", _AVX2),
    _cpu("skylake", _AVX2),
    _cpu("alderlake", _AVX2, l1d=48 * KIB, l2=1280 * KIB, l3=30 * MIB),
    _cpu("skylake-avx512", _AVX512, l2=1 * MIB, l3=32 * MIB),
    _cpu("cascadelake", _AVX512_VNNI, l2=1 * MIB, l3=32 * MIB),
    _cpu("cooperlake", _AVX512_VNNI + ("avx512bf16",), l2=1 * MIB, l3=32 * MIB),
    _cpu("icelake-server", _AVX512_VNNI, l1d=48 * KIB, l2=1280 * KIB, l3=48 * MIB),
    _cpu("sapphirerapids", _AVX512_VNNI + ("avx512bf16", "amx-tile"), l1d=48 * KIB,
         l2=2 * MIB, l3=64 * MIB),
    _cpu("emeraldrapids", _AVX512_VNNI + ("avx512bf16", "amx-tile"), l1d=48 * KIB,
         l2=2 * MIB, l3=160 * MIB),
    _cpu("graniterapids", _AVX512_VNNI + ("avx512bf16", "avx512fp16", "amx-tile"),
         l1d=48 * KIB, l2=2 * MIB, l3=256 * MIB),
    _cpu("znver1", _AVX2, l2=512 * KIB),
    _cpu("znver2", _AVX2, l2=512 * KIB, l3=16 * MIB),
    _cpu("znver3", _AVX2, l2=512 * KIB, l3=32 * MIB),
    _cpu("znver4", _AVX512_VNNI + ("avx512bf16",), l2=1 * MIB, l3=32 * MIB),
    _cpu("znver5", _AVX512_VNNI + ("avx512bf16",), l1d=48 * KIB, l2=1 * MIB, l3=32 * MIB),
]}


def _read_sys_caches(cpu: int = 0) -> dict:
    """Data/unified cache sizes of one core from sysfs: {"L1d": bytes, "L2": ..., "L3": ...}."""
    base = f"/sys/devices/system/cpu/cpu{cpu}/cache"
    sizes = {}
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return sizes
    for entry in entries:
        if not entry.startswith("index"):
            continue
        try:
            level, kind, size = (open(os.path.join(base, entry, f)).read().strip()
                                 for f in ("level", "type", "size"))
        except OSError:
            continue
        if kind == "Instruction":
            continue
        units = {"K": KIB, "M": MIB, "G": 1024 * MIB}
        value = int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
        sizes["L1d" if level == "1" else f"L{level}"] = value
    return sizes


@functools.lru_cache(maxsize=1)
def host_cpu_info() -> CPUInfo:
    """The machine this process runs on (features from LLVM, caches from sysfs), or the named
    CPU ``IRLAB_HOST_CPU`` pretends it is (its table entry, caches included)."""
    from irlab.target.target import HOST_CPU_ENV, host_cpu

    name, features, _ = host_cpu()
    if os.environ.get(HOST_CPU_ENV, "").strip():
        return NAMED_CPUS[name]
    known = NAMED_CPUS.get(name)
    caches = _read_sys_caches()
    default = known or _cpu(name, ())
    return CPUInfo(name, frozenset(f.lstrip("+") for f in features),
                   caches.get("L1d", default.l1d), caches.get("L2", default.l2),
                   caches.get("L3", default.l3))


def named_cpu_info(name: str) -> CPUInfo:
    """A CPU by LLVM's name; one missing from NAMED_CPUS counts as baseline x86-64 (SSE2):
    features it has beyond that must be given with ``-mattr``."""
    return NAMED_CPUS.get(name) or dataclasses.replace(NAMED_CPUS["x86-64"], name=name)


__all__ = ["CPUInfo", "NAMED_CPUS", "host_cpu_info", "named_cpu_info"]
