"""From LLVM IR text to callable machine code: optimized for the target CPU, object cache, JIT.

``compile_ir`` optimizes with llvmlite's new pass manager for the target's CPU and features
(LLVM's O2 pipeline at ``-opt-level`` 2 and 3, see ``PIPELINE_LEVEL``; loop vectorizer on; SLP
only with ``-slp-vectorize=1``, see ``Target.slp_vectorize``) and emits an object file.
Objects are cached by the SHA-256 of (IR text, target, llvmlite version) in memory and on
disk (``$IRLAB_CACHE_DIR``, default ``~/.cache/irlab``; ``IRLAB_CACHE=0`` turns the disk cache
off), so a rebuild only loads the object (a few ms). ``LLVMModule`` loads an object into an
MCJIT engine (one target machine per engine: llvmlite crashes when engines share one).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import tempfile
import threading
import zipfile
from ctypes import c_char_p, string_at

import llvmlite
import llvmlite.binding as llvm
from llvmlite.binding import ffi

from irlab.errors import CodegenError, IrlabError
from irlab.runtime import abi
from irlab.runtime.compiled import install_hooks
from irlab.runtime.module import Module, link_shared
from irlab.runtime.registry import register_func

CODEGEN_VERSION = "3"

# LLVM's IR pipeline runs at most at O2 (code generation keeps the target's -opt-level). O3 adds
# passes that find nothing left to do in irlab's kernels, which the schedules already tiled,
# vectorized and unrolled: on ResNet-18 (Xeon Emerald Rapids) O3 took 1.9-2.3 s of LLVM CPU
# against O2's 1.6, for the same run time (13.5 vs 13.3 ms median at 1 thread) and the same
# outputs bit for bit.
PIPELINE_LEVEL = 2

_memory_cache: dict[str, tuple[bytes, str]] = {}
_lock = threading.Lock()
_initialized = False


def _init():
    global _initialized
    if not _initialized:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _initialized = True


def target_machine(target):
    _init()
    try:
        llvm_target = llvm.Target.from_triple(target.triple)
    except RuntimeError as err:
        raise CodegenError(f"LLVM does not know the triple {target.triple}: {err}") from None
    return llvm_target.create_target_machine(
        cpu=target.mcpu, features=",".join(target.mattr), opt=min(3, target.opt_level),
        reloc="pic", codemodel="default")


def cache_dir() -> str | None:
    if os.environ.get("IRLAB_CACHE", "1") in ("0", "false", "no"):
        return None
    return os.environ.get("IRLAB_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "irlab")


def cache_key(ir_text: str, target) -> str:
    h = hashlib.sha256()
    for part in (CODEGEN_VERSION, llvmlite.__version__, str(target), target.mcpu,
                 ",".join(target.mattr), ir_text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _disk_paths(key):
    root = cache_dir()
    if root is None:
        return None
    folder = os.path.join(root, "llvm", key[:2])
    return os.path.join(folder, key + ".o"), os.path.join(folder, key + ".ll")


def _read_disk(key):
    paths = _disk_paths(key)
    if paths is None or not all(os.path.exists(p) for p in paths):
        return None
    try:
        with open(paths[0], "rb") as f:
            obj = f.read()
        with open(paths[1]) as f:
            text = f.read()
        return obj, text
    except OSError:
        return None


def _write_disk(key, obj, text):
    paths = _disk_paths(key)
    if paths is None:
        return
    try:
        os.makedirs(os.path.dirname(paths[0]), exist_ok=True)
        for path, data, mode in ((paths[1], text, "w"), (paths[0], obj, "wb")):
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
            with os.fdopen(fd, mode) as f:
                f.write(data)
            os.replace(tmp, path)  # atomic: a reader never sees half a file
    except OSError:
        pass  # a read-only home only costs the cache


def _unlocked(name):
    """The raw C function ``name`` of llvmlite, without its global lock.

    llvmlite runs every C call under one process-wide lock. LLVM itself is thread-safe when
    each thread works in its own LLVMContext with its own TargetMachine (LLVM's ThinLTO
    backends optimize in parallel that way), which is how ``optimize`` works: so its heavy
    calls (parse, verify, optimize, emit, print) skip the lock and kernels compile on all cores
    (``irlab.target.llvm_build``). Falls back to the locked call if llvmlite's wrapper
    changes."""
    fn = getattr(ffi.lib, name)
    return getattr(fn, "_cfn", fn)


def _parse(ir_text: str, context):
    with ffi.OutputString() as err:
        ptr = _unlocked("LLVMPY_ParseAssembly")(context, c_char_p(ir_text.encode()), err)
        if not ptr:
            raise CodegenError(f"LLVM rejected the generated IR: {err}")
    mod = llvm.module.ModuleRef(ptr, context)
    with ffi.OutputString() as err:
        if _unlocked("LLVMPY_VerifyModule")(mod, err):
            raise CodegenError(f"LLVM rejected the generated IR: {err}")
    return mod


# Printing a module is not safe in several threads at once: two threads printing together
# left the process's C locale at "C" (LC_CTYPE was C.UTF-8), so that Python's open() then read
# ASCII. Printing is a few ms per part, so it runs one at a time.
_print_lock = threading.Lock()


def _text(mod) -> str:
    with _print_lock, ffi.OutputString() as out:
        _unlocked("LLVMPY_PrintModuleToString")(mod, out)
        return str(out)


def _emit_object(tm, mod) -> bytes:
    with ffi.OutputString() as err:
        buffer = _unlocked("LLVMPY_TargetMachineEmitToMemory")(tm, mod, 1, err)
        if not buffer:
            raise CodegenError(f"LLVM could not emit an object: {err}")
    try:
        return string_at(ffi.lib.LLVMPY_GetBufferStart(buffer),
                         ffi.lib.LLVMPY_GetBufferSize(buffer))
    finally:
        ffi.lib.LLVMPY_DisposeMemoryBuffer(buffer)


def optimize(ir_text: str, target) -> tuple[bytes, str]:
    """(object code, optimized LLVM IR) for ``ir_text``, without the cache. Safe to call
    from several threads at once (each call has its own context and target machine)."""
    _init()
    tm = target_machine(target)
    mod = _parse(ir_text, llvm.create_context())
    mod.triple = target.triple
    mod.data_layout = str(tm.target_data)
    if target.opt_level > 0:
        pto = llvm.create_pipeline_tuning_options(
            speed_level=min(PIPELINE_LEVEL, target.opt_level))
        pto.loop_vectorization = True
        pto.slp_vectorization = target.slp_vectorize
        pto.loop_unrolling = True
        pb = llvm.create_pass_builder(tm, pto)
        _unlocked("LLVMPY_RunNewModulePassManager")(pb.getModulePassManager(), mod, pb)
    return _emit_object(tm, mod), _text(mod)


def link_texts(texts) -> str:
    """Several LLVM modules (the parts of one library) linked into one, as text: what a
    reader sees of a library compiled in parts."""
    _init()
    context = llvm.create_context()
    mods = [llvm.parse_assembly(text, context) for text in texts]
    for other in mods[1:]:
        mods[0].link_in(other)
    return str(mods[0])


def compile_ir(ir_text: str, target) -> tuple[bytes, str, bool]:
    """(object, optimized IR, came from the cache?)."""
    key = cache_key(ir_text, target)
    with _lock:
        hit = _memory_cache.get(key)
    if hit is None:
        hit = _read_disk(key)
        if hit is not None:
            with _lock:
                _memory_cache[key] = hit
    if hit is not None:
        return hit[0], hit[1], True
    obj, text = optimize(ir_text, target)
    with _lock:
        _memory_cache[key] = (obj, text)
    _write_disk(key, obj, text)
    return obj, text, False


_VOID_FUNCTION = ctypes.CFUNCTYPE(None)


class LLVMModule(Module):
    """Machine code for the host, loaded into an MCJIT engine.

    A library is one object, or several (``objects``) when it was compiled in parts on
    several cores (``irlab.target.llvm_build``): then ``part_sources`` holds each part's
    ``"ll-raw"``/``"ll"`` text and ``get_source`` shows them linked into one module."""

    type_key = "llvm"

    def __init__(self, objects, infos, target, sources: dict, cached=False, part_sources=()):
        super().__init__(infos, str(target))
        self._target_obj = target
        self._objects = [objects] if isinstance(objects, (bytes, bytearray)) else list(objects)
        # "ll-raw", "ll", "tir": text, or a function making it when first asked for (printing
        # the lowered TIR of a whole model costs more than a cold build can spare)
        self._sources = dict(sources)
        self._part_sources = [dict(p) for p in part_sources]
        self.cached = cached
        _init()
        from irlab.target import Target

        tm = target_machine(target if isinstance(target, Target) else Target(target))
        self._engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
        for obj in self._objects:  # the parts resolve each other's symbols (the hooks)
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self._engine.finalize_object()
        engine = self._engine

        def address_of(symbol):
            return engine.get_global_value_address(symbol) or None

        install_hooks(address_of)
        for name in self.infos:
            if not self._engine.get_function_address(name):
                raise IrlabError(f"compiled object lacks the function {name}")
        releases = [engine.get_function_address(abi.WORKSPACE_RELEASE_PREFIX + name)
                    for name in self.infos]
        # the blocks the functions cache between calls go with the library (__del__)
        self._workspace_releases = [address for address in releases if address]

    def __del__(self):
        # each __irlab_release_<function> frees the blocks that function caches between
        # calls; the engine (an attribute, freed after this) still holds their code. (A
        # weakref.finalize holding the engine instead freed it after the garbage collection
        # that found the library, leaving llvmlite's objects as new garbage.)
        releases = getattr(self, "_workspace_releases", ())
        if releases and _VOID_FUNCTION is not None:  # (None at interpreter shutdown)
            for address in releases:
                _VOID_FUNCTION(address)()

    @classmethod
    def from_object(cls, obj, infos, target, sources):
        return cls(obj, infos, target, sources, cached=True)

    def _address(self, name):
        return self._engine.get_function_address(name)

    @property
    def format(self):
        return "ll"

    @property
    def num_parts(self) -> int:
        """How many objects the library was compiled into."""
        return len(self._objects)

    def get_source(self, fmt=""):
        """``"ll"`` optimized LLVM IR (TVM's default), ``"ll-raw"`` as generated,
        ``"s"``/``"asm"`` assembly for the target CPU, ``"tir"`` the lowered TIR."""
        fmt = fmt or "ll"
        if fmt in ("s", "asm"):
            if "asm" not in self._sources:
                self._sources["asm"] = self._assembly()
            return self._sources["asm"]
        if fmt not in self._sources and self._part_sources and \
                all(fmt in p for p in self._part_sources):
            self._sources[fmt] = link_texts([p[fmt] for p in self._part_sources])
        if fmt in self._sources:
            if callable(self._sources[fmt]):
                self._sources[fmt] = self._sources[fmt]()
            return self._sources[fmt]
        raise IrlabError(f"get_source: unknown format {fmt!r}; this module has "
                         f"{', '.join(sorted(set(self._sources) | {'s', 'asm'}))}")

    def _assembly(self):
        from irlab.target import Target

        try:
            optimized = self.get_source("ll")
        except IrlabError:
            raise IrlabError("the optimized IR was not kept, assembly is not available") \
                from None
        target = self._target_obj if isinstance(self._target_obj, Target) else \
            Target(self._target_obj)
        mod = llvm.parse_assembly(optimized)
        tm = target_machine(target)
        tm.set_asm_verbosity(True)  # keep LLVM's block names as comments: `# %for.i`
        return tm.emit_assembly(mod)

    def get_objects(self) -> list:
        return list(self._objects)

    def get_object(self):
        """The object code; a library compiled in parts is first linked into one
        relocatable object (needs the system C compiler)."""
        if len(self._objects) == 1:
            return self._objects[0]
        with tempfile.TemporaryDirectory(prefix="irlab-") as tmp:
            out = os.path.join(tmp, "module.o")
            link_shared(self._write_objects(tmp), out, relocatable=True)
            with open(out, "rb") as f:
                return f.read()

    def _write_objects(self, folder):
        paths = []
        for k, obj in enumerate(self._objects):
            paths.append(os.path.join(folder, f"part{k}.o"))
            with open(paths[-1], "wb") as f:
                f.write(obj)
        return paths

    def _export_shared(self, path, extra_sources=()):
        with tempfile.TemporaryDirectory(prefix="irlab-") as tmp:
            link_shared(self._write_objects(tmp) + list(extra_sources), path)

    def _export_archive(self, path):
        import json

        meta = json.loads(abi.metadata_json(self.infos.values(), self.target))
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("kind", "llvm")
            z.writestr("metadata.json", json.dumps(meta))
            for k, obj in enumerate(self._objects):
                z.writestr("object.o" if k == 0 else f"object.{k}.o", obj)
            for fmt in ("ll-raw", "ll", "tir"):
                try:
                    z.writestr("source." + fmt, self.get_source(fmt))
                except IrlabError:
                    pass


register_func("runtime.module.load_llvm_objects", LLVMModule.from_object)

__all__ = ["LLVMModule", "compile_ir", "optimize", "link_texts", "target_machine",
           "cache_dir"]
