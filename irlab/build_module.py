"""``irlab.build``: TIR to a callable ``runtime.Module`` (TVM's ``tvm.build``).

First every PrimFunc is verified (``tir.analysis.verify_well_formed``: refused with a
``WellFormedError`` unless well formed) and given a run-time check before each buffer access
that could not be proven in bounds (``tir.transform.InsertBoundsChecks``). Then the steps,
each visible to instruments under the current ``PassContext``:

1. ``irlab.lower`` -- block-form TIR to flat loops (skipped passes are no-ops on flat TIR);
2. ``tir.LowerIntrin`` -- floordiv/floormod to what C and LLVM have;
3. codegen -- ``CodegenLLVM`` (target "llvm") or ``CodegenC`` (target "c");
4. machine code -- LLVM (O2 pipeline) for the target CPU, or the system C compiler.

For "llvm", big programs go through these steps function by function and compile in parts on
all cores (``irlab.target.llvm_build``).

Each PrimFunc becomes a function named by its ``global_symbol`` (else its name in the module).

A rebuild of the same program for the same target (and PassContext) skips all four steps: the
compiled result is remembered under a hash of the program's TVMScript text and structural
hash. With instruments attached the steps always run, so the instruments see them.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import threading

from irlab.errors import IrlabError
from irlab.runtime.lru import LRUCache
from irlab.ir.module import IRModule
from irlab.target import Target, as_target
from irlab.tir.transform.insert_bounds_checks import insert_bounds_checks
from irlab.tir.function import PrimFunc


def _as_module(inputs, name) -> IRModule:
    from irlab.tir.schedule import Schedule

    if isinstance(inputs, Schedule):
        inputs = inputs.mod
    if isinstance(inputs, PrimFunc):
        func = inputs
        if func.attrs is None or "global_symbol" not in func.attrs:
            func = func.with_attr("global_symbol", name)
        return IRModule({func.attrs["global_symbol"]: func})
    if isinstance(inputs, IRModule):
        return inputs
    raise IrlabError(f"build takes a PrimFunc, an IRModule or a tir.Schedule, got "
                     f"{type(inputs).__name__}")


_pause_lock = threading.Lock()
_pauses = [0, False]  # builds running with the collector paused; whether it was enabled


@contextlib.contextmanager
def garbage_collection_paused():
    """Python's cyclic garbage collector off for the duration (the outermost of nested or
    concurrent uses turns it back on, if it was on). A build makes hundreds of thousands of
    short-lived nodes; each collection they trigger walks every object of the process (the
    model, its weights' owners, irlab itself): ResNet-18's cold build spent ~0.18 s of CPU,
    7% of its main thread, in 240 collections. The few cycles a build leaves (llvmlite's IR
    points back at its parents) are collected after it, as usual."""
    with _pause_lock:
        if _pauses[0] == 0:
            _pauses[1] = gc.isenabled()
            gc.disable()
        _pauses[0] += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses[0] -= 1
            if _pauses[0] == 0 and _pauses[1]:
                gc.enable()


def _symbol(gvar, func) -> str:
    attrs = func.attrs
    if attrs is not None and "global_symbol" in attrs:
        return str(attrs["global_symbol"])
    return gvar.name_hint


def lower_for_codegen(mod: IRModule) -> IRModule:
    """Flat TIR ready for a code generator: ``lower`` then ``LowerIntrin``."""
    from irlab.tir import transform as T
    from irlab.tir.transform.pipeline import lowering_passes
    from irlab.transform import PassContext, Sequential

    ctx = PassContext.current()
    return Sequential(lowering_passes(ctx) + [T.LowerIntrin()], name="tir.build")(mod)


def build(inputs, args=None, target=None, target_host=None, runtime=None,
          name="default_function", binds=None, codegen=None):
    """Compile ``inputs`` (PrimFunc, IRModule of PrimFuncs, ``{target: IRModule}`` or a
    ``tir.Schedule``) for ``target`` ("llvm" by default, "c", or a kind registered with
    ``irlab.target.register_target_kind``). ``codegen`` (seed 000), an object with
    ``generate_code(func, target)`` such as an ``irlab.codegen.build_module.CodeGenBase``,
    generates the code of each lowered PrimFunc instead of irlab's code generators."""
    with garbage_collection_paused():
        return _build(inputs, target, name, codegen)


def _build(inputs, target, name, codegen):
    if isinstance(inputs, dict):
        if len(inputs) != 1:
            raise IrlabError("build: a {target: module} dict must have exactly one target")
        (target, inputs), = inputs.items()
    target = as_target(target)
    mod = _as_module(inputs, name)
    funcs = [(gv, f) for gv, f in mod.functions.items() if isinstance(f, PrimFunc)]
    if not funcs:
        raise IrlabError("build: the module has no PrimFunc to compile")
    user_code = codegen is not None or target.kind not in ("llvm", "c")
    key = None if user_code else _program_key(IRModule(dict(funcs)), target)
    hit = _built.get(key) if key else None
    if hit is not None:
        return hit()
    # nothing unverified reaches codegen: refused if not well formed, run-time checks where
    # an access could not be proven in bounds
    funcs = [(gv, insert_bounds_checks(f, name=_symbol(gv, f))) for gv, f in funcs]
    if codegen is not None:
        return _build_with_codegen(funcs, target, codegen)
    if target.kind == "llvm":
        from irlab.target.llvm_build import build_llvm
        from irlab.target.llvm_jit import LLVMModule

        module = build_llvm(funcs, target)
        if key:
            objects, infos = module.get_objects(), list(module.infos.values())
            sources, parts = dict(module._sources), list(module._part_sources)
            _built[key] = lambda: LLVMModule(objects, infos, target, sources, cached=True,
                                             part_sources=parts)
        return module
    if target.kind == "c":
        from irlab.target.c_compile import build_c

        lowered, named = _lowered_by_symbol(funcs)
        return build_c(named, target, lowered)
    return _build_registered_kind(funcs, target)


def _lowered_by_symbol(funcs):
    lowered = lower_for_codegen(IRModule(dict(funcs)))
    return lowered, [(_symbol(gv, lowered[gv.name_hint]), lowered[gv.name_hint])
                     for gv, _ in funcs]


def _build_with_codegen(funcs, target, codegen):
    """Seed 000's ``tvm.build(..., codegen=)``: ``codegen.generate_code(func, target)`` per
    lowered PrimFunc, then ``codegen.create_module(results, target)`` (when it has one)."""
    from irlab.errors import CodegenError
    from irlab.runtime.module import Module
    from irlab.runtime.source_module import source_module_from

    label = type(codegen).__name__
    if not callable(getattr(codegen, "generate_code", None)):
        raise IrlabError(f"build: codegen= takes an object with generate_code(stmt, target) "
                         f"(irlab.codegen.build_module.CodeGenBase), got {label}")
    results = []
    for symbol, func in _lowered_by_symbol(funcs)[1]:
        try:
            out = codegen.generate_code(func, target)
        except IrlabError:
            raise
        except Exception as err:
            raise CodegenError(f"{label}.generate_code failed on @{symbol}: "
                               f"{type(err).__name__}: {err}") from err
        if out is not None and not isinstance(out, (str, Module)):
            raise CodegenError(f"{label}.generate_code returned {type(out).__name__} for "
                               f"@{symbol}; expected source text, a runtime.Module or None")
        results.append((symbol, out))
    create = getattr(codegen, "create_module", None)
    module = create(results, target) if create else source_module_from(results, target, label)
    if not isinstance(module, Module):
        raise CodegenError(f"{label}.create_module returned {type(module).__name__}, not a "
                           f"runtime.Module")
    return module


def _build_registered_kind(funcs, target):
    """TVM's dispatch: the global function ``target.build.<kind>(lowered module, target)``."""
    from irlab.runtime.module import Module
    from irlab.runtime.registry import get_global_func

    fbuild = get_global_func(f"target.build.{target.kind}", allow_missing=True)
    if fbuild is None:
        raise IrlabError(f"build: no code generator for target {target}: register one as "
                         f"the global function target.build.{target.kind}(mod, target)")
    module = fbuild(_lowered_by_symbol(funcs)[0], target)
    if not isinstance(module, Module):
        raise IrlabError(f"target.build.{target.kind} returned {type(module).__name__}, not "
                         f"a runtime.Module")
    return module


class IncrementalBuild:
    """``build`` for target ``target`` of PrimFuncs handed over one at a time (``add``), so
    that LLVM compiles the first ones on other cores while the caller makes the next:
    ``relay.build`` adds each kernel as soon as LowerTE has scheduled it, then asks for the
    library of its kernel module (``build_module``). What comes out is what ``build`` of that
    module makes, except that it is not remembered under a program key (``relay.build``
    remembers its own results): the key prints every kernel, a tenth of a cold build.

    Only for target "llvm" with compile threads and without instruments or user lowering
    passes (which must see one ``tir.build`` of the whole module); otherwise, or when the
    module is not the functions added, ``build_module`` is ``build``."""

    def __init__(self, target):
        from irlab.target.llvm_build import LLVMBuilder, compile_threads
        from irlab.transform import PassContext

        self.target = as_target(target)
        self.added: list = []
        ctx = PassContext.current()
        streams = (self.target.kind == "llvm" and compile_threads() > 0
                   and not ctx.instruments and not ctx.config.get("tir.add_lower_pass"))
        self._builder = LLVMBuilder(self.target) if streams else None

    def add(self, name: str, func: PrimFunc):
        """Verify (``WellFormedError`` if not well formed), lower and start compiling
        ``func``, the module's function ``name``."""
        if self._builder is None:
            return
        (gvar, func), = IRModule({name: func}).functions.items()
        self.added.append(func)
        self._builder.add(gvar, insert_bounds_checks(func, name=_symbol(gvar, func)))

    def build_module(self, mod: IRModule):
        """The library of ``mod``'s PrimFuncs (as ``build(mod, target)``)."""
        funcs = [f for f in mod.functions.values() if isinstance(f, PrimFunc)]
        if self._builder is not None and len(funcs) == len(self.added) and \
                all(f is a for f, a in zip(funcs, self.added)):
            return self._builder.finish()
        return build(mod, target=self.target)


_built = LRUCache(64)  # program key -> a function re-creating the built module


def _program_key(mod: IRModule, target: Target) -> str | None:
    """What determines the build's result, hashed; None when instruments must see the build."""
    from irlab.ir.structural import structural_hash
    from irlab.target.llvm_jit import CODEGEN_VERSION
    from irlab.transform import PassContext

    ctx = PassContext.current()
    if ctx.instruments or ctx.config.get("tir.add_lower_pass"):
        return None  # instruments must see the build; user passes are code, not hashable
    h = hashlib.sha256()
    for part in (CODEGEN_VERSION, str(target), str(ctx.opt_level), repr(sorted(ctx.disabled_pass)),
                 repr(sorted((k, repr(v)) for k, v in ctx.config.items())),
                 str(structural_hash(mod)), mod.script()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


__all__ = ["build", "lower_for_codegen", "IncrementalBuild", "garbage_collection_paused"]
