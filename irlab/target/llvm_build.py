"""Compiling PrimFuncs for target "llvm": lowering, codegen and LLVM, in parts on all cores.

``build_llvm(funcs, target)`` returns an ``LLVMModule``. A small program (one function, or
fewer than ``PART_INSTRUCTIONS`` LLVM instructions) is one LLVM module, compiled in the
calling thread. A bigger one -- ``relay.build``'s kernels -- is cut into parts: the functions
are lowered one by one, and as soon as a part's LLVM IR is generated, a background thread
optimizes it and emits its object (LLVM runs without the GIL, see ``llvm_jit._unlocked``)
while Python lowers the next functions; once every part is generated, the calling thread
compiles the parts no one has started yet, beside the background threads. The parts only
declare the runtime's hook variables; a small glue object defines them and carries the
library's metadata. ``LLVMBuilder`` takes the functions one at a time, so that a caller
making them (``relay.build``: LowerTE) overlaps their compilation too. All the objects load
into one engine (``LLVMModule``), link into one
``.so``, and show as one linked module in ``get_source("ll")``.

``IRLAB_COMPILE_THREADS`` sets the number of background compile threads (default: one less
than the cores, so that the Python thread keeps a core; at least 1, at most 4);
``IRLAB_COMPILE_THREADS=0`` compiles everything as one module in the calling thread.
"""

from __future__ import annotations

import functools
import os
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor

from irlab.ir.module import IRModule

# A part is cut once it has this many LLVM instructions (before optimization). A conv kernel
# of ResNet-18 has 600-800 (0.1-0.2 s of LLVM), so each gets its own part and the last part,
# which no Python work overlaps, is short; a part's fixed cost (context, pass builder,
# emission) is ~1 ms.
PART_INSTRUCTIONS = 500

_executor = None
_executor_lock = threading.Lock()


def compile_threads() -> int:
    """Background compile threads (0: no parts, everything in the calling thread)."""
    value = os.environ.get("IRLAB_COMPILE_THREADS", "")
    if value.strip():
        try:
            return max(0, int(value))
        except ValueError:
            pass
    return max(1, min(4, (os.cpu_count() or 1) - 1))


def _submit(threads, fn):
    """``fn`` queued on the shared compile pool of ``threads`` threads. Under the lock: a
    build in another thread asking for another size shuts the old pool down, and a pool
    refuses work once shut down."""
    global _executor
    with _executor_lock:
        if _executor is None or _executor._max_workers != threads:
            if _executor is not None:
                _executor.shutdown(wait=False)  # its queued parts still run
            _executor = ThreadPoolExecutor(threads, thread_name_prefix="irlab-llvm")
        return _executor.submit(fn)


class _Compiler:
    """The parts to compile: background threads take them in order as they come; ``results``
    then lets the calling thread take the rest itself before it waits."""

    def __init__(self, target, threads):
        self.target = target
        self.threads = threads
        self.texts: list[str] = []
        self.todo: deque = deque()
        self.done: dict = {}  # part index -> (object, optimized IR, cached) or the exception
        self.lock = threading.Lock()
        self.futures = []

    def submit(self, text):
        with self.lock:
            self.todo.append(len(self.texts))
            self.texts.append(text)
        self.futures.append(_submit(self.threads, self._run_one))

    def _run_one(self) -> bool:
        from irlab.target.llvm_jit import compile_ir

        with self.lock:
            if not self.todo:
                return False
            k = self.todo.popleft()
        try:
            self.done[k] = compile_ir(self.texts[k], self.target)
        except BaseException as err:  # noqa: BLE001 - re-raised in the calling thread
            self.done[k] = err
        return True

    def results(self):
        """[(object, optimized IR, cached, raw IR)] of every part, in order."""
        while self._run_one():
            pass
        for future in self.futures:
            future.result()
        out = []
        for k, text in enumerate(self.texts):
            result = self.done[k]
            if isinstance(result, BaseException):
                raise result
            out.append((*result, text))
        return out


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
    funcs = list(funcs)
    builder = LLVMBuilder(target, whole=funcs)
    for gvar, func in funcs:
        builder.add(gvar, func)
    return builder.finish()


class LLVMBuilder:
    """Builds one library from PrimFuncs handed over one at a time (``add``), so that LLVM
    compiles the first parts while the caller is still making the next functions
    (``relay.build`` adds each kernel as soon as LowerTE has scheduled it); ``finish``
    returns the ``LLVMModule``. ``whole``: all the functions, known in advance (``build``),
    lowered at once under instruments (see ``_LoweredOneByOne``).

    Parts are cut as ``build_llvm`` always cut them: after a function that fills a part,
    unless it is the last one. Not knowing which function is the last, the first cut waits
    for the next function (a program that fits one part stays one module, compiled in the
    calling thread with its metadata); later full parts are sent off at once, and an empty
    last part is dropped."""

    def __init__(self, target, whole=None):
        self.target = target
        self.threads = compile_threads()
        self.lowered = _LoweredOneByOne(whole, self.threads)
        self.compiler = _Compiler(target, self.threads)
        self.infos = []
        self.part = _Part(target, define_hooks=False)
        self.functions = 0  # in the current part

    def add(self, gvar, func):
        """Lower, generate (and, once a part is full, compile) ``func``."""
        if self.functions and self.threads and self.part.instructions >= PART_INSTRUCTIONS:
            self._send()  # the first full part: another function follows
        from irlab import build_module

        low = self.lowered.lower(gvar, func)
        self.part.add(low, build_module._symbol(gvar, low))
        self.functions += 1
        if self.compiler.texts and self.threads and \
                self.part.instructions >= PART_INSTRUCTIONS:
            self._send()

    def _send(self):
        self.compiler.submit(str(self.part.cg.module))
        self.infos += self.part.cg.infos
        self.part = _Part(self.target, define_hooks=False)
        self.functions = 0

    def finish(self):
        """The library of the functions added, once every part is compiled."""
        from irlab.target.codegen_llvm import CodegenLLVM
        from irlab.target.llvm_jit import LLVMModule, compile_ir

        tir = functools.cache(self.lowered.module().script)  # printed when asked for
        if not self.compiler.texts:  # one module, as a small program always is
            cg = self.part.cg
            cg.define_declared_hooks()
            cg.add_metadata()
            raw = str(cg.module)
            obj, optimized, cached = compile_ir(raw, self.target)
            return LLVMModule(obj, cg.infos, self.target,
                              {"ll-raw": raw, "ll": optimized, "tir": tir}, cached=cached)
        if self.functions:
            self._send()
        self.compiler.submit(CodegenLLVM.glue_module(self.target, self.infos))
        results = self.compiler.results()
        return LLVMModule([r[0] for r in results], self.infos, self.target, {"tir": tir},
                          cached=all(r[2] for r in results),
                          part_sources=[{"ll-raw": r[3], "ll": r[1]} for r in results])


class _LoweredOneByOne:
    """Lowers PrimFuncs one by one, each when asked for (so that compiling the first ones
    overlaps lowering the rest). Under instruments (or without compile threads) the whole
    module ``whole`` is lowered at once, as TVM's build does, so that instruments see one
    ``tir.build`` sequence."""

    def __init__(self, whole, threads):
        from irlab import build_module
        from irlab.transform import PassContext

        self.done = []
        self._lower = build_module.lower_for_codegen
        self._whole = None
        if whole is not None and (PassContext.current().instruments or threads == 0):
            self._whole = self._lower(IRModule(dict(whole)))

    def lower(self, gvar, func):
        """``func`` (``gvar`` in the module) lowered for codegen."""
        mod = self._whole if self._whole is not None else self._lower(IRModule({gvar: func}))
        self.done.append((gvar, mod[gvar.name_hint]))
        return self.done[-1][1]

    def module(self) -> IRModule:
        """The lowered functions so far, as one module (the library's ``tir`` source)."""
        return IRModule(dict(self.done))
