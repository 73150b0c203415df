"""Finding oneDNN: its C headers and ``libdnnl.so``, from the PyPI wheels the ``dnnl`` extra
installs (``onednn-cpu-gomp`` + ``onednn-devel-cpu-gomp`` put them under the environment's
``include/`` and ``lib/``) or a system install."""

from __future__ import annotations

import functools
import glob
import os
import re
import sys
from dataclasses import dataclass

INSTALL_HINT = "pip install 'irlab[dnnl]' (the onednn-cpu-gomp and onednn-devel-cpu-gomp wheels)"


@dataclass(frozen=True)
class DnnlLibrary:
    """Where oneDNN is: the directory holding ``oneapi/dnnl/dnnl.h`` and the shared library."""

    include_dir: str
    library: str
    version: str

    def compile_options(self) -> tuple:
        """``(flags, libraries)`` for a C source calling oneDNN: the headers, the library
        linked by its path, and a run path so that the built library finds it."""
        folder = os.path.dirname(self.library)
        return ((f"-I{self.include_dir}",),
                (self.library, f"-Wl,-rpath,{folder}", "-lpthread"))

    def __repr__(self):
        return f"DnnlLibrary(oneDNN {self.version}, {self.library})"


def _prefixes() -> list:
    """Install prefixes to search, the running environment's first."""
    found = [sys.prefix, sys.base_prefix, os.path.expanduser("~/.local"), "/usr/local", "/usr"]
    return list(dict.fromkeys(found))


def _version(include_dir: str) -> str:
    path = os.path.join(include_dir, "oneapi", "dnnl", "dnnl_version.h")
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return "unknown"
    parts = [re.search(rf"#define DNNL_VERSION_{k}\s+(\d+)", text) for k in
             ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts if m) or "unknown"


def _library_in(prefix: str) -> str | None:
    for folder in ("lib", "lib64", "lib/x86_64-linux-gnu"):
        names = sorted(glob.glob(os.path.join(prefix, folder, "libdnnl.so*")), key=len)
        if names:
            return names[0]
    return None


@functools.lru_cache(maxsize=1)
def find_dnnl() -> DnnlLibrary | None:
    """oneDNN's headers and library, or None when either is missing."""
    for prefix in _prefixes():
        include_dir = os.path.join(prefix, "include")
        if not os.path.exists(os.path.join(include_dir, "oneapi", "dnnl", "dnnl.h")):
            continue
        library = _library_in(prefix)
        if library is not None:
            return DnnlLibrary(include_dir, library, _version(include_dir))
    return None


def missing_reason() -> str:
    """Why the dnnl codegen cannot build here (empty when it can)."""
    if find_dnnl() is not None:
        return ""
    where = ", ".join(_prefixes())
    return f"oneDNN (oneapi/dnnl/dnnl.h and libdnnl.so) is not installed under {where}: " \
           f"{INSTALL_HINT}"


__all__ = ["DnnlLibrary", "find_dnnl", "missing_reason", "INSTALL_HINT"]
