"""``CSourceModule``: C source an external codegen wrote, compiled by the system C compiler
when the library is built (TVM's ``runtime.CSourceModuleCreate``).

The source defines each function with irlab's calling convention (``irlab.runtime.abi``:
``int32_t f(int64_t *args)``); ``CSourceModule`` appends the ``__irlab_metadata`` string built
from the ``FunctionInfo`` list it is given, so the compiled library describes itself and is
called through the same checked ``CompiledFunction`` as every other kernel. ``get_source()``
shows the whole file the compiler sees (line numbers in compiler errors refer to it).
"""

from __future__ import annotations

import json

from irlab.errors import IrlabError
from irlab.runtime import abi
from irlab.runtime.module import LibraryModule, Module


def c_string_literal(text: str) -> str:
    """``text`` as a C string literal (JSON escaping is valid C for printable ASCII)."""
    return json.dumps(text, ensure_ascii=True)


def metadata_definition(infos, target: str) -> str:
    """The C definition of ``__irlab_metadata`` describing ``infos``."""
    meta = abi.metadata_json(infos, target)
    pieces = [meta[i:i + 80] for i in range(0, len(meta), 80)] or [""]
    body = "\n".join("  " + c_string_literal(p) for p in pieces)
    return ("/* what the runtime needs to call the functions above safely */\n"
            f"const char {abi.METADATA_SYMBOL}[] =\n{body};\n")


class CSourceModule(Module):
    """Functions given as C source; compiled (once, cached by content) on ``compile()`` or on
    the first call. Saved, it is the compiled library plus its source. ``flags`` and
    ``libraries`` are what the C compiler needs beyond the defaults (include directories,
    the libraries the source calls)."""

    type_key = "c"

    def __init__(self, source: str, infos, target: str = "c", flags=(), libraries=()):
        infos = list(infos)
        if not infos:
            raise IrlabError("a CSourceModule needs at least one function")
        super().__init__(infos, target)
        self._source = source.rstrip("\n") + "\n\n" + metadata_definition(infos, target)
        self._library = None
        self.flags, self.libraries = tuple(flags), tuple(libraries)

    def get_source(self, fmt=""):
        if fmt not in ("", "c", "cc"):
            raise IrlabError(f"a CSourceModule has C source, not {fmt!r}")
        return self._source

    @property
    def format(self):
        return "c"

    def compile(self) -> LibraryModule:
        """Compile the source with the system C compiler (raises ``CompileError`` with the
        compiler's message and the offending source line)."""
        if self._library is None:
            from irlab.target.c_compile import compile_source

            path = compile_source(self._source, flags=self.flags, libraries=self.libraries)
            self._library = LibraryModule(path, self._source)
        return self._library

    def _address(self, name):
        return self.compile()._address(name)

    def _num_threads(self):
        return None

    def _export_shared(self, path, extra_sources=()):
        self.compile()._export_shared(path, extra_sources)

    def _export_archive(self, path):
        self.compile()._export_archive(path)


__all__ = ["CSourceModule", "metadata_definition", "c_string_literal"]
