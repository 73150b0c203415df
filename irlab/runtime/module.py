"""``runtime.Module``: compiled functions by name, their sources, timing and saving.

``irlab.build`` returns an ``LLVMModule`` (target "llvm": JIT-loaded machine code) or a
``LibraryModule`` (target "c": a shared library built by the system C compiler; also what
``load_module`` returns for a ``.so``). Both hand out ``CompiledFunction``s, which check every
argument before running native code. ``export_library(path)`` writes a ``.so`` (needs a C
compiler to link) or, for any other suffix, an ``.irlab`` archive that only needs irlab to
load; ``irlab.runtime.load_module(path)`` reads either back.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import tempfile
import zipfile

from irlab.errors import CompileError, IrlabError
from irlab.runtime import abi
from irlab.runtime.registry import get_global_func
from irlab.runtime.compiled import CompiledFunction, install_hooks


IMPORTS_SYMBOL = "__irlab_imports"  # a .so's imported modules, as an archive
IMPORTS_SIZE_SYMBOL = "__irlab_imports_size"


class Module:
    """A set of functions by name, with imported modules (as ``tvm.runtime.Module``)."""

    type_key = "module"

    def __init__(self, infos=(), target=None):
        self.infos: dict[str, abi.FunctionInfo] = {i.name: i for i in infos}
        self.target = target
        self._functions: dict = {}
        self.imported_modules: list = []
        self.entry_name = next(iter(self.infos), None)

    # -- functions -----------------------------------------------------------------------
    def _address(self, name: str) -> int:
        raise NotImplementedError

    def get_function(self, name, query_imports=False):
        func = self._functions.get(name)
        if func is not None:
            return func
        if name in self.infos:
            func = CompiledFunction(self.infos[name], self._address(name), self,
                                    self._num_threads())
            self._functions[name] = func
            return func
        if query_imports:
            for module in self.imported_modules:
                if module.implements_function(name, query_imports=True):
                    return module.get_function(name, query_imports=True)
        raise IrlabError(f"module has no function {name!r}; it has: "
                         f"{', '.join(self.get_func_names()) or '(none)'}")

    def _num_threads(self):
        if self.target is None:
            return None
        target = self.target
        if isinstance(target, str):  # a library's metadata names its target as text
            target = get_global_func("target.Target")(target)
        return target.options.get("num-cores")

    def __getitem__(self, name):
        if not isinstance(name, str):
            raise IrlabError(f"functions are looked up by name, got {name!r}")
        return self.get_function(name)

    def __call__(self, *args):
        if self.entry_name is None:
            raise IrlabError("module has no functions to call")
        return self.get_function(self.entry_name)(*args)

    def implements_function(self, name, query_imports=False):
        if name in self.infos:
            return True
        return query_imports and any(m.implements_function(name, True)
                                     for m in self.imported_modules)

    def get_func_names(self) -> list[str]:
        return list(self.infos)

    def import_module(self, module):
        self.imported_modules.append(module)

    # -- sources -------------------------------------------------------------------------
    def get_source(self, fmt=""):
        raise IrlabError(f"{type(self).__name__} has no source")

    @property
    def format(self):
        return ""

    # -- timing --------------------------------------------------------------------------
    def time_evaluator(self, func_name, dev=None, number=10, repeat=1, min_repeat_ms=0,
                       limit_zero_time_iterations=100, cooldown_interval_ms=0,
                       repeats_to_cooldown=1, f_preproc=""):
        """A callable that runs ``func_name`` and returns a ``BenchmarkResult`` (seconds)."""
        from irlab.runtime.benchmark import time_evaluator

        if dev is not None and getattr(dev, "device_type", 1) != 1:
            raise IrlabError(f"time_evaluator: irlab runs on cpu only, got {dev}")
        func = self.get_function(func_name, query_imports=True)
        return time_evaluator(func, number=number, repeat=repeat, min_repeat_ms=min_repeat_ms,
                              limit_zero_time_iterations=limit_zero_time_iterations,
                              cooldown_interval_ms=cooldown_interval_ms,
                              repeats_to_cooldown=repeats_to_cooldown,
                              f_preproc=f_preproc or None)

    # -- saving --------------------------------------------------------------------------
    def export_library(self, file_name, fcompile=None, addons=None, workspace_dir=None, **kw):
        """Write the module to ``file_name``: a ``.so`` (linked by the C compiler) or an
        ``.irlab`` archive (any other suffix; loadable without a compiler)."""
        file_name = os.fspath(file_name)
        if file_name.endswith((".so", ".dylib", ".dll")):
            with tempfile.TemporaryDirectory(prefix="irlab-") as tmp:
                extra = [self._imports_source(tmp)] if self.imported_modules else []
                self._export_shared(file_name, extra)
        else:
            self._export_archive(file_name)
            self._archive_imports(file_name)
        return file_name

    def _imports_source(self, folder) -> str:
        """A C file defining ``__irlab_imports``: the imported modules as an archive of
        ``import.<k>.irlab`` parts, so a ``.so`` carries them (TVM's ``__tvm_dev_mblob``)."""
        blob = os.path.join(folder, "imports.zip")
        with zipfile.ZipFile(blob, "w") as z:
            z.writestr("kind", "imports")
        self._archive_imports(blob)
        with open(blob, "rb") as f:
            data = f.read()
        rows = [", ".join(str(b) for b in data[i:i + 32]) for i in range(0, len(data), 32)]
        path = os.path.join(folder, "irlab_imports.c")
        with open(path, "w") as out:
            out.write(f"const unsigned long long {IMPORTS_SIZE_SYMBOL} = {len(data)}ULL;\n"
                      f"const unsigned char {IMPORTS_SYMBOL}[] = {{\n" + ",\n".join(rows)
                      + "};\n")
        return path

    def _archive_imports(self, path):
        """Append each imported module to the archive at ``path`` as ``import.<k>.irlab``."""
        if not self.imported_modules:
            return
        with tempfile.TemporaryDirectory(prefix="irlab-") as tmp, \
                zipfile.ZipFile(path, "a") as z:
            for k, module in enumerate(self.imported_modules):
                part = module.export_library(os.path.join(tmp, f"import.{k}.irlab"))
                z.write(part, f"import.{k}.irlab")

    def _export_shared(self, path, extra_sources=()):
        """Write a shared library; ``extra_sources`` are C files linked in with it."""
        if self.infos:
            raise IrlabError(f"{type(self).__name__} cannot be saved as a shared library")
        # no functions of its own (e.g. every kernel offloaded to external codegens)
        with tempfile.TemporaryDirectory(prefix="irlab-") as tmp:
            meta = os.path.join(tmp, "metadata.c")
            with open(meta, "w") as out:
                text = json.dumps(abi.metadata_json([], str(self.target or "")))
                out.write(f"const char {abi.METADATA_SYMBOL}[] = {text};\n")
            link_shared([meta, *extra_sources], path)

    def _export_archive(self, path):
        if self.infos:
            raise IrlabError(f"{type(self).__name__} cannot be saved as an archive")
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("kind", "empty")
            z.writestr("target", str(self.target or ""))

    def save(self, file_name, fmt=""):
        """Save the source (``.ll``, ``.s``, ``.c``) or object code (``.o``)."""
        file_name = os.fspath(file_name)
        fmt = fmt or os.path.splitext(file_name)[1].lstrip(".")
        if fmt in ("o", "obj"):
            data = self.get_object()
            with open(file_name, "wb") as out:
                out.write(data)
            return
        with open(file_name, "w") as out:
            out.write(self.get_source(fmt))

    def get_object(self) -> bytes:
        raise IrlabError(f"{type(self).__name__} has no object code")

    def __repr__(self):
        names = ", ".join(self.get_func_names())
        return f"Module({self.type_key}, {self.target or ''}, functions=[{names}])"


def find_c_compiler() -> str | None:
    """The system C compiler (``$CC``, ``cc``, ``gcc``, ``clang``), or None."""
    for candidate in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def link_shared(objects_or_sources, path, extra_flags=(), relocatable=False, libraries=()):
    """Compile/link C sources or objects into the shared library ``path`` (or, with
    ``relocatable``, objects into one object file). ``libraries`` (``-l``/``-L`` flags) go
    after the inputs, where the linker needs them."""
    compiler = find_c_compiler()
    if compiler is None:
        raise CompileError("no C compiler found (set $CC or install gcc/clang): it is needed "
                           "to build a .so; export_library('name.irlab') needs none")
    if relocatable:
        cmd = [compiler, "-r", "-o", path, *objects_or_sources]
    else:
        cmd = [compiler, "-shared", "-fPIC", "-o", path, *extra_flags, *objects_or_sources,
               *libraries, "-lm"]
    try:
        proc = subprocess.run(cmd, capture_output=True, encoding="utf-8",
                              errors="replace", timeout=300)
    except subprocess.TimeoutExpired as err:
        raise CompileError(f"{' '.join(cmd)} timed out") from err
    if proc.returncode != 0:
        raise CompileError(f"{' '.join(cmd)} failed:\n{proc.stderr.strip()}")
    return path


class LibraryModule(Module):
    """Functions in a shared library loaded with ctypes (target "c", or ``load_module``)."""

    type_key = "library"

    def __init__(self, path, source=None, kind="c"):
        path = os.path.abspath(os.fspath(path))
        try:
            self._lib = ctypes.CDLL(path)
        except OSError as err:
            raise IrlabError(f"cannot load {path}: {err}") from err
        try:
            first = ctypes.c_char.in_dll(self._lib, abi.METADATA_SYMBOL)
            raw = ctypes.string_at(ctypes.addressof(first))
        except ValueError:
            raise IrlabError(f"{path} is not an irlab library (no {abi.METADATA_SYMBOL})") \
                from None
        target, infos = abi.parse_metadata(raw.decode())
        super().__init__(infos, target)
        self.path = path
        self.kind = kind
        self._source = source

        def address_of(symbol):
            try:
                return ctypes.addressof(ctypes.c_void_p.in_dll(self._lib, symbol))
            except ValueError:
                return None

        install_hooks(address_of)

    def _address(self, name):
        return ctypes.cast(getattr(self._lib, name), ctypes.c_void_p).value

    def get_source(self, fmt=""):
        if self._source is not None and fmt in ("", "c", "cc"):
            return self._source
        raise IrlabError(f"this library module has no {fmt or 'source'} source "
                         f"(C source is kept for target 'c' builds)")

    @property
    def format(self):
        return "c" if self._source is not None else "so"

    def _export_shared(self, path, extra_sources=()):
        if not extra_sources:
            shutil.copyfile(self.path, path)
        elif self._source is not None:
            with tempfile.TemporaryDirectory(prefix="irlab-") as tmp:
                source = os.path.join(tmp, "module.c")
                with open(source, "w") as out:
                    out.write(self._source)
                link_shared([source, *extra_sources], path, ("-O2", "-march=native",
                                                             "-std=c99"))
        else:
            raise IrlabError(f"{self.path} was loaded without its source: it cannot be "
                             f"linked with the modules it imports; export an '.irlab' archive")

    def embedded_imports(self) -> bytes | None:
        """The archive of imported modules a ``.so`` carries (``__irlab_imports``), if any."""
        try:
            size = ctypes.c_uint64.in_dll(self._lib, IMPORTS_SIZE_SYMBOL).value
            first = ctypes.c_char.in_dll(self._lib, IMPORTS_SYMBOL)
        except ValueError:
            return None
        return ctypes.string_at(ctypes.addressof(first), size)

    def _export_archive(self, path):
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("kind", "so")
            z.write(self.path, "lib.so")
            if self._source is not None:
                z.writestr("source.c", self._source)


def load_module(path, fmt=""):
    """Load a module written by ``export_library`` (``.so`` or ``.irlab`` archive), with the
    modules it imports."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise IrlabError(f"load_module: {path} does not exist")
    if _is_archive(path):
        with zipfile.ZipFile(path) as z:
            module = _load_archive(path, z)
            for name in _import_names(z):
                with tempfile.TemporaryDirectory(prefix="irlab-") as tmp:
                    part = os.path.join(tmp, name)
                    with open(part, "wb") as out:
                        out.write(z.read(name))
                    module.import_module(load_module(part))
            return module
    module = LibraryModule(path, kind="so")
    blob = module.embedded_imports()
    if blob:
        with tempfile.TemporaryDirectory(prefix="irlab-") as tmp:
            part = os.path.join(tmp, "imports.zip")
            with open(part, "wb") as out:
                out.write(blob)
            carried = load_module(part)
            if type(carried) is not Module:  # the .so wraps a whole module (a Relax VM
                return carried               # executable): that module is what was saved
            for imported in carried.imported_modules:
                module.import_module(imported)
    return module


def _is_archive(path) -> bool:
    """Whether ``path`` is an ``.irlab`` archive: a zip from its first byte (a ``.so`` that
    embeds its imports holds a zip inside, which ``zipfile.is_zipfile`` would accept)."""
    with open(path, "rb") as f:
        return f.read(4) == b"PK\x03\x04" and zipfile.is_zipfile(path)


def _import_names(z) -> list:
    """The archive's imported modules ``import.<k>.irlab``, in order."""
    names = [n for n in z.namelist() if n.startswith("import.") and n.endswith(".irlab")]
    return sorted(names, key=lambda n: int(n.split(".")[1]))


def _load_archive(path, z):
    """The module stored in the archive ``z`` itself (without its imports)."""
    kind = z.read("kind").decode()
    if kind == "llvm":
        meta = json.loads(z.read("metadata.json"))
        target, infos = abi.parse_metadata(json.dumps(meta))
        sources = {name[len("source."):]: z.read(name).decode()
                   for name in z.namelist() if name.startswith("source.")}
        names = [n for n in z.namelist() if n.startswith("object.")]
        # object.o, then the further parts object.1.o, object.2.o... in order
        names.sort(key=lambda n: int(n.split(".")[1]) if n.count(".") == 2 else 0)
        # The LLVM loader lives in the target layer: reach it through the registry.
        load_objects = get_global_func("runtime.module.load_llvm_objects")
        return load_objects([z.read(n) for n in names], infos, target, sources)
    if kind == "so":
        tmp = tempfile.mkdtemp(prefix="irlab-")
        lib = os.path.join(tmp, "lib.so")
        with open(lib, "wb") as out:
            out.write(z.read("lib.so"))
        source = z.read("source.c").decode() if "source.c" in z.namelist() else None
        return LibraryModule(lib, source)
    if kind == "empty":
        return Module((), z.read("target").decode() or None)
    if kind == "imports":  # the modules a .so carries: load_module adds them
        return Module(())
    # module kinds of higher runtime parts (a Relax VM executable) register their loader
    loader = get_global_func(f"runtime.module.load_archive.{kind}", allow_missing=True)
    if loader is not None:
        return loader(path, z)
    raise IrlabError(f"{path}: unknown module kind {kind!r}")


__all__ = ["Module", "LibraryModule", "load_module", "find_c_compiler", "link_shared"]
