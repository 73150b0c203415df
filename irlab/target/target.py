"""``Target``: what code is generated for, parsed from TVM's target strings.

``Target("llvm")`` means the host CPU with every feature it has (LLVM's name for it and its
feature list are read from llvmlite, so AVX-512 is used where the machine has it);
``Target("llvm -mcpu=skylake-avx512 -mattr=+avx512f -num-cores=2")`` pins them;
``Target("c")`` asks for C source compiled by the system C compiler.
What the schedules size themselves by -- ``vector_width(dtype)``, ``num_vector_registers``,
``cache_sizes`` -- comes from the host for ``llvm`` and from a table of named CPUs for
``-mcpu=...`` (``cpu_info.py``), so code for a CPU the host lacks is scheduled as for that CPU.
``-num-cores`` sets how many threads a ``parallel`` loop uses (default: the CPUs this process
may run on, or ``IRLAB_NUM_THREADS`` / ``TVM_NUM_THREADS`` when set).

``IRLAB_HOST_CPU=znver3`` (any CPU of the table whose features this machine has) makes the host
*be* that CPU for plain ``llvm``: schedules size themselves for it and LLVM generates code for
it, which still runs here. The test suite run that way on an AVX-512 machine is the suite of an
AVX2 machine (``scripts/run.sh test`` passes it through).
"""

from __future__ import annotations

import functools
import os
import shlex
import threading

from irlab.errors import IrlabError
from irlab.runtime.dtype import parse_dtype
from irlab.runtime.registry import register_func
from irlab.runtime.threading import default_num_threads

HOST_CPU_ENV = "IRLAB_HOST_CPU"  # pretend the host is this (named, supported) CPU
KINDS = ("llvm", "c")  # irlab's own code generators; more come from register_target_kind
_USER_KINDS: dict = {}  # kind -> its extra options (name -> parser), see register_target_kind
# options every kind accepts, with how the value is parsed
_OPTIONS = {"mcpu": str, "mtriple": str, "mattr": lambda v: [a for a in v.split(",") if a],
            "num-cores": int, "opt-level": int, "fast-math": lambda v: v not in ("0", "false"),
            "slp-vectorize": lambda v: v not in ("0", "false")}


@functools.lru_cache(maxsize=1)
def host_cpu() -> tuple[str, tuple[str, ...], str]:
    """(LLVM's name for the host CPU, its enabled features as ``+feat``, the process triple)."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    features = tuple(f for f in llvm.get_host_cpu_features().flatten().split(",")
                     if f.startswith("+"))
    pretend = os.environ.get(HOST_CPU_ENV, "").strip()
    if pretend:
        return pretend, _pretended_features(pretend, features), llvm.get_process_triple()
    return llvm.get_host_cpu_name(), features, llvm.get_process_triple()


def _pretended_features(name: str, real: tuple) -> tuple:
    """The features of the named CPU ``IRLAB_HOST_CPU`` asks for, checked against the real
    host's: code for a CPU with a feature this machine lacks could not run here."""
    from irlab.target.cpu_info import NAMED_CPUS

    info = NAMED_CPUS.get(name)
    if info is None:
        raise IrlabError(f"{HOST_CPU_ENV}={name!r} is not a CPU irlab knows; known: "
                         + ", ".join(sorted(NAMED_CPUS)))
    missing = sorted(info.features - {f.lstrip("+") for f in real})
    if missing:
        raise IrlabError(f"{HOST_CPU_ENV}={name!r}: this machine lacks {', '.join(missing)}, "
                         f"so code built for {name} could not run here")
    return tuple(sorted("+" + f for f in info.features))


class _TargetScopes(threading.local):
    """The ``with Target(...)`` stack, one per thread: a build in one thread never sees
    another thread's target."""

    def __init__(self):
        self.stack = []


_SCOPES = _TargetScopes()


class Target:
    """A compilation target: ``kind`` ("llvm" or "c") plus options."""

    def __init__(self, target, host=None):
        if isinstance(target, Target):
            self.kind, self.options = target.kind, dict(target.options)
            return
        if isinstance(target, dict):
            target = " ".join([target["kind"]] + [f"-{k}={v}" for k, v in target.items()
                                                   if k != "kind"])
        if not isinstance(target, str) or not target.strip():
            raise IrlabError(f"a target is a string such as 'llvm' or 'c', got {target!r}")
        words = shlex.split(target)
        kind = words[0]
        if kind not in KINDS and kind not in _USER_KINDS:
            raise IrlabError(f"unknown target kind {kind!r} in {target!r}; irlab generates "
                             f"code for {', '.join(KINDS + tuple(_USER_KINDS))} (a new kind: "
                             f"irlab.target.register_target_kind)")
        self.kind = kind
        self.options: dict = {}
        options = {**_OPTIONS, **_USER_KINDS.get(kind, {})}
        for word in words[1:]:
            if not word.startswith("-"):
                raise IrlabError(f"target {target!r}: option {word!r} must look like -key=value")
            key, _, value = word.lstrip("-").partition("=")
            if key not in options:
                raise IrlabError(f"target {target!r}: unknown option -{key}; known: "
                                 + ", ".join("-" + k for k in options))
            try:
                self.options[key] = options[key](value if value else "1")
            except ValueError:
                raise IrlabError(f"target {target!r}: bad value for -{key}: {value!r}") from None
        if self.options.get("num-cores", 1) < 1:
            raise IrlabError(f"target {target!r}: -num-cores must be at least 1")

    # -- what the code generator needs -----------------------------------------------------
    @property
    def mcpu(self) -> str:
        return self.options.get("mcpu") or host_cpu()[0]

    @property
    def mattr(self) -> list[str]:
        """Feature flags: the host's when ``-mcpu`` is not given, plus any ``-mattr``."""
        given = self.options.get("mattr", [])
        base = list(host_cpu()[1]) if "mcpu" not in self.options else []
        return base + [f for f in given if f not in base]

    @property
    def triple(self) -> str:
        return self.options.get("mtriple") or host_cpu()[2]

    @property
    def num_cores(self) -> int:
        return self.options.get("num-cores") or default_num_threads()

    @property
    def opt_level(self) -> int:
        return self.options.get("opt-level", 3)

    @property
    def fast_math(self) -> bool:
        return bool(self.options.get("fast-math", False))

    @property
    def slp_vectorize(self) -> bool:
        """Whether LLVM's SLP vectorizer runs: off unless ``-slp-vectorize=1``. irlab's schedules
        vectorize explicitly (and the loop vectorizer stays on); SLP was half of O3's time on
        ResNet-18 for no measured speed (ResNet-18 23.0-23.9 ms and a 512 GEMM 205-221 GFLOPS
        either way)."""
        return bool(self.options.get("slp-vectorize", False))

    @property
    def keys(self) -> tuple:
        return ("cpu",)

    # -- what the schedules need: the CPU's vector ISA, registers and caches ------------------
    @property
    def cpu_info(self):
        """The CPU as ``cpu_info.CPUInfo``: the host's for plain ``llvm``, else ``-mcpu``'s
        entry in the table of named CPUs (``irlab.target.cpu_info.NAMED_CPUS``)."""
        from irlab.target.cpu_info import host_cpu_info, named_cpu_info

        if "mcpu" not in self.options:
            return host_cpu_info()
        return named_cpu_info(self.options["mcpu"])

    @property
    def features(self) -> frozenset:
        """The CPU's features (LLVM names, no ``+``) with ``-mattr``'s ``+f`` / ``-f`` applied."""
        features = set(self.cpu_info.features)
        for flag in self.options.get("mattr", []):
            name = flag.lstrip("+-")
            if flag.startswith("-"):
                features.discard(name)
            else:
                features.add(name)
        return frozenset(features)

    def has_feature(self, name: str) -> bool:
        return name.lstrip("+") in self.features

    @property
    def vector_bits(self) -> int:
        """The widest vector register the target has (512 with AVX-512, 256 with AVX2...)."""
        if self.has_feature("avx512f"):
            return 512
        if self.has_feature("avx") or self.has_feature("avx2"):
            return 256
        return 128

    def vector_width(self, dtype="float32") -> int:
        """Elements of ``dtype`` in one vector register (16 float32 with AVX-512, 8 with
        AVX2): the lanes a schedule vectorizes by."""
        return max(1, self.vector_bits // max(8, parse_dtype(str(dtype)).bits))

    @property
    def num_vector_registers(self) -> int:
        """Vector registers a kernel can keep values in: 32 zmm with AVX-512, else 16
        (ymm/xmm on x86-64): the budget of a register tile."""
        return 32 if self.has_feature("avx512f") else 16

    @property
    def cache_sizes(self) -> dict:
        """Per-core data cache sizes in bytes: ``{"L1d": ..., "L2": ..., "L3": ...}`` (L3
        shared); the host's from sysfs, a named CPU's typical ones from the table."""
        return self.cpu_info.cache_sizes

    # -- TVM's context-manager protocol -----------------------------------------------------
    @staticmethod
    def current(allow_none=True):
        """The innermost ``with Target(...)`` of this thread (each thread has its own)."""
        if _SCOPES.stack:
            return _SCOPES.stack[-1]
        if allow_none:
            return None
        raise IrlabError("no target is set: use `with irlab.target.Target('llvm'):`")

    def __enter__(self):
        _SCOPES.stack.append(self)
        return self

    def __exit__(self, *exc):
        _SCOPES.stack.pop()

    def __str__(self):
        parts = [self.kind]
        for key, value in self.options.items():
            if isinstance(value, list):
                value = ",".join(value)
            elif isinstance(value, bool):
                value = int(value)
            parts.append(f"-{key}={value}")
        return " ".join(parts)

    def __repr__(self):
        return f"Target({str(self)!r})"

    def __eq__(self, other):
        return isinstance(other, Target) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


def as_target(target) -> Target:
    """``None`` -> the current target or ``llvm``; strings and dicts are parsed."""
    if target is None:
        return Target.current() or Target("llvm")
    return target if isinstance(target, Target) else Target(target)


def register_target_kind(name: str, options=None, override: bool = False):
    """Make ``name`` a target kind (TVM's ``TVM_REGISTER_TARGET_KIND``, from Python):
    ``Target("name -opt=v")`` parses, with ``options`` (option name -> parser such as ``int``,
    or a list of names parsed as text) beside the common ones. ``tvm.build`` compiles for it
    by calling the global function ``target.build.<name>(mod, target)`` that the user
    registers (``tvm.register_func``); the schedules treat it as a CPU."""
    if not isinstance(name, str) or not name.isidentifier():
        raise IrlabError(f"register_target_kind: a kind is an identifier, got {name!r}")
    if name in KINDS or (name in _USER_KINDS and not override):
        raise IrlabError(f"target kind {name!r} is already registered (override=True to "
                         f"replace a kind registered from Python)")
    if options is None:
        options = {}
    elif not isinstance(options, dict):
        options = {str(o): str for o in options}
    _USER_KINDS[name] = dict(options)
    return name


register_func("target.Target", lambda text: Target(text))

__all__ = ["Target", "as_target", "host_cpu", "default_num_threads", "register_target_kind"]
