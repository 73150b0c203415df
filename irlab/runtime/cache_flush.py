"""Evicting a kernel's inputs from the CPU caches before it is timed (TVM's global function
``cache_flush_cpu_non_first_arg``, the ``f_preproc`` of ``time_evaluator`` that MetaSchedule's
``EvaluatorConfig(enable_cpu_cache_flush=True)`` selects).

A kernel timed in a loop finds its inputs in the caches its last call left them in; inside a
network it does not (the kernels before it used the caches for their own data). Flushing the
inputs before each repeat times the colder case. On x86-64 every cache line of each array is
written back and evicted with ``clflush`` (a loop JIT-compiled once with llvmlite, as the
thread pool's code is), then a fence; elsewhere a scratch buffer larger than the caches a core
uses on its own (``SCRATCH_BYTES``) is overwritten, which evicts the inputs from them.
"""

from __future__ import annotations

import ctypes
import platform
import threading

import numpy as np

from irlab.runtime.registry import register_func

CACHE_LINE = 64
SCRATCH_BYTES = 32 << 20  # the fallback's buffer: beyond a core's L1 + L2 (2 MiB on x86 today)

_FLUSH_IR = r"""
declare void @llvm.x86.sse2.clflush(ptr)
declare void @llvm.x86.sse2.mfence()

define void @irlab_cache_flush(ptr %p, i64 %n) {
entry:
  %any = icmp sgt i64 %n, 0
  br i1 %any, label %loop, label %done
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %a = getelementptr i8, ptr %p, i64 %i
  call void @llvm.x86.sse2.clflush(ptr %a)
  %next = add i64 %i, 64
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  call void @llvm.x86.sse2.mfence()
  ret void
}
"""

_FLUSH_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)
_lock = threading.Lock()
_code = None  # (engine, function): the engine must outlive the function


def _native_flush():
    """The JIT-compiled ``clflush`` loop, or None off x86-64 (compiled once per process)."""
    global _code
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    with _lock:
        if _code is None:
            import llvmlite.binding as llvm

            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            mod = llvm.parse_assembly(_FLUSH_IR)
            mod.verify()
            tm = llvm.Target.from_default_triple().create_target_machine(opt=2)
            engine = llvm.create_mcjit_compiler(mod, tm)
            engine.finalize_object()
            _code = (engine, _FLUSH_TYPE(engine.get_function_address("irlab_cache_flush")))
    return _code[1]


def flush_array(array) -> None:
    """Evict the bytes of ``array`` (an ``irlab.nd.NDArray`` or a numpy array) from the CPU
    caches (on x86-64; elsewhere the caches of this core are overwritten instead)."""
    data = np.asarray(array)
    flush = _native_flush()
    if flush is None:
        _overwrite_caches()
        return
    address = data.__array_interface__["data"][0]
    start = address - address % CACHE_LINE  # the whole first and last lines
    flush(start, address + data.nbytes - start)


_scratch = None


def _overwrite_caches() -> None:
    global _scratch
    if _scratch is None:
        _scratch = np.zeros(SCRATCH_BYTES, dtype=np.uint8)
    _scratch += 1


def cache_flush_cpu_non_first_arg(*args) -> None:
    """Evict every argument but the first from the CPU caches, as TVM's function of this
    name does: ``time_evaluator(..., f_preproc="cache_flush_cpu_non_first_arg")``."""
    for array in args[1:]:
        flush_array(array)


register_func("cache_flush_cpu_non_first_arg", cache_flush_cpu_non_first_arg, override=True)
