"""Compiling PrimFuncs for target "llvm": lowering, codegen and LLVM, in parts on all cores.

``build_llvm(funcs, target)`` returns an ``LLVMModule``. A small program (up to
``PART_INSTRUCTIONS`` LLVM instructions: a kernel or two) is one LLVM module, compiled in the
calling thread. A bigger one -- ``relay.build``'s kernels -- is cut into parts: the functions
are lowered one by one, and as soon as a part's LLVM IR is generated, a background thread
optimizes it and emits its object (LLVM runs without the GIL, see ``llvm_jit._unlocked``)
while Python lowers the next functions. The parts only declare the runtime's hook variables;
a small glue object defines them and carries the library's metadata. All the objects load
into one engine (``LLVMModule``), link into one ``.so``, and show as one linked module in
``get_source("ll")``.

``IRLAB_COMPILE_THREADS`` sets how many parts compile at once (default: the number of
cores, at most 4); ``IRLAB_COMPILE_THREADS=0`` compiles everything as one module in the
calling thread.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from irlab.ir.module import IRModule

# A part this big (LLVM instructions before optimization: about one conv kernel of ResNet-18)
# takes ~0.1 s in O3: small enough that the last part, which no Python work overlaps, is
# short; big enough that each part's fixed cost (context, pass builder, emission) is noise.
PART_INSTRUCTIONS = 3000

_executor = None
_executor_lock = threading.Lock()


def compile_threads() -> int:
    """How many parts compile at once (0: no parts, everything in the calling thread)."""
    value = os.environ.get("IRLAB_COMPILE_THREADS", "")
    if value.strip():
        try:
            return max(0, int(value))
        except ValueError:
            pass
    return max(1, min(4, os.cpu_count() or 1))


def _pool(threads) -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None or _executor._max_workers != threads:
            _executor = ThreadPoolExecutor(threads, thread_name_prefix="irlab-llvm")
        return _executor


class _Part:
    """Functions being generated into one LLVM module."""

    def __init__(self, target, define_hooks):
        from irlab.target.codegen_llvm import CodegenLLVM

        self.cg = CodegenLLVM(target, define_hooks=define_hooks)
        self.instructions = 0
        self._counted = 0

    def add(self, func, symbol):
        self.cg.add_function(func, symbol)
        functions = self.cg.module.functions
        for fn in functions[self._counted:]:
            self.instructions += sum(len(block.instructions) for block in fn.blocks)
        self._counted = len(functions)


def build_llvm(funcs, target):
    """Lower, generate and compile ``funcs`` (``[(GlobalVar, PrimFunc)]``, block-form TIR)."""
    from irlab import build_module
    from irlab.target.codegen_llvm import CodegenLLVM
    from irlab.target.llvm_jit import LLVMModule, compile_ir

    threads = compile_threads()
    lowered = _lowered_one_by_one(funcs, threads)
    submitted = []  # (future of (object, optimized IR, cached), raw IR text)
    infos = []
    part = _Part(target, define_hooks=False)

    def submit(text):
        submitted.append((_pool(threads).submit(compile_ir, text, target), text))

    for k, (gvar, _) in enumerate(funcs):
        low = next(lowered)
        part.add(low, build_module._symbol(gvar, low))
        if k + 1 < len(funcs) and threads and part.instructions >= PART_INSTRUCTIONS:
            submit(str(part.cg.module))
            infos += part.cg.infos
            part = _Part(target, define_hooks=False)
    tir = lowered.module().script()
    if not submitted:  # one module, as a small program always is
        part.cg.define_declared_hooks()
        part.cg.add_metadata()
        raw = str(part.cg.module)
        obj, optimized, cached = compile_ir(raw, target)
        return LLVMModule(obj, part.cg.infos, target,
                          {"ll-raw": raw, "ll": optimized, "tir": tir}, cached=cached)
    submit(str(part.cg.module))
    infos += part.cg.infos
    submit(CodegenLLVM.glue_module(target, infos))
    objects, part_sources, all_cached = [], [], True
    for future, raw in submitted:
        obj, optimized, cached = future.result()
        objects.append(obj)
        part_sources.append({"ll-raw": raw, "ll": optimized})
        all_cached = all_cached and cached
    return LLVMModule(objects, infos, target, {"tir": tir}, cached=all_cached,
                      part_sources=part_sources)


class _lowered_one_by_one:
    """Iterates the lowered PrimFuncs of ``funcs`` in order, each lowered when asked for (so
    that compiling the first ones overlaps lowering the rest). Under instruments (or without
    compile threads) the whole module is lowered at once, as TVM's build does, so
    instruments see one ``tir.build`` sequence."""

    def __init__(self, funcs, threads):
        from irlab import build_module
        from irlab.transform import PassContext

        self.funcs = list(funcs)
        self.done = []
        self._lower = build_module.lower_for_codegen
        self._whole = None
        if PassContext.current().instruments or threads == 0:
            self._whole = self._lower(IRModule(dict(self.funcs)))

    def __iter__(self):
        return self

    def __next__(self):
        if len(self.done) == len(self.funcs):
            raise StopIteration
        gvar, func = self.funcs[len(self.done)]
        mod = self._whole if self._whole is not None else self._lower(IRModule({gvar: func}))
        self.done.append((gvar, mod[gvar.name_hint]))
        return self.done[-1][1]

    def module(self) -> IRModule:
        """The lowered functions so far, as one module (the library's ``tir`` source)."""
        return IRModule(dict(self.done))
