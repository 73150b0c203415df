"""Compiling the generated C: the system compiler, a cache of shared libraries by content,
and ``build_c`` (what ``irlab.build`` calls for target "c")."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile

from irlab.errors import CompileError
from irlab.target.c_syntax import CFLAGS


def compile_source(source: str, target=None, flags=(), libraries=()) -> str:
    """Compile ``source`` into a shared library (cached); return its path. ``flags`` (e.g.
    ``-I``) are added to the compiler's, ``libraries`` (``-L``/``-l``/``-Wl,``) to the link."""
    from irlab.runtime.module import find_c_compiler, link_shared
    from irlab.target.llvm_jit import cache_dir

    compiler = find_c_compiler()
    if compiler is None:
        raise CompileError("target \"c\" needs a C compiler, and none was found: install gcc "
                           "or clang, or set $CC (target \"llvm\" needs none)")
    flags = list(CFLAGS) + list(flags)
    if target is not None and getattr(target, "fast_math", False):
        flags.append("-ffast-math")
    key = hashlib.sha256("\0".join([source, compiler, " ".join(flags), *libraries,
                                    "-fPIC -shared -lm"]).encode()).hexdigest()
    root = cache_dir()
    folder = os.path.join(root, "c", key[:2]) if root else tempfile.mkdtemp(prefix="irlab-c-")
    so_path = os.path.join(folder, key + ".so")
    if os.path.exists(so_path):
        return so_path
    os.makedirs(folder, exist_ok=True)
    # Unique names for the source and the library being linked: threads (and processes)
    # compiling the same source at once never write each other's files; the finished library
    # is renamed into place atomically, so a reader sees it whole or not at all.
    fd, c_path = tempfile.mkstemp(prefix=key[:16] + ".", suffix=".c", dir=folder)
    with os.fdopen(fd, "w") as out:
        out.write(source)
    tmp = c_path[:-2] + ".so.tmp"
    try:
        link_shared([c_path], tmp, flags, libraries=libraries)
    except CompileError as err:
        os.unlink(c_path)
        raise CompileError(_explain(str(err), source)) from None
    os.replace(c_path, os.path.join(folder, key + ".c"))  # kept next to its library
    os.replace(tmp, so_path)
    return so_path


def _explain(message: str, source: str) -> str:
    lines = source.splitlines()
    found = re.search(r"\.c:(\d+):(?:\d+:)? (?:fatal )?error", message)
    if not found:
        return f"the C compiler rejected the generated source:\n{message}"
    n = int(found.group(1))
    text = lines[n - 1].strip() if 0 < n <= len(lines) else "?"
    return (f"the C compiler rejected the generated source at line {n}: {text}\n"
            f"{message}")


def build_c(named, target, lowered=None):
    """Generate C for ``named`` [(symbol, lowered PrimFunc)], compile, load."""
    from irlab.runtime.module import LibraryModule

    from irlab.target.codegen_c import CodegenC  # here: codegen_c re-exports build_c

    cg = CodegenC(target)
    for symbol, func in named:
        cg.add_function(func, symbol)
    source = cg.source()
    return LibraryModule(compile_source(source, target), source)


__all__ = ["build_c", "compile_source"]
