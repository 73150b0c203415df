"""The global function registry, as TVM's ``tvm.register_func`` / ``tvm.get_global_func``.

Names are dotted strings (``"relay.backend.lower"``, ``"my.add"``). Registering a name twice is an
error unless ``override=True``, so two libraries cannot silently replace each other's functions.
"""

from __future__ import annotations

import difflib
import threading

from irlab.errors import IrlabError
from irlab.runtime.packed_func import PackedFunc, as_packed_func

_GLOBALS: dict[str, PackedFunc] = {}
_LOCK = threading.Lock()
# name -> module that registers it when imported (loaded on first lookup, so a lazily
# imported layer -- the graph executor -- is found as TVM's C++ registry always finds it)
_PROVIDERS: dict[str, str] = {}


def register_func_provider(func_name: str, module_name: str) -> None:
    """Say that importing ``module_name`` registers ``func_name``."""
    _PROVIDERS[func_name] = module_name


def register_func(func_name, f=None, override=False):
    """Register ``f`` as a global function; usable three ways, as in TVM::

        @register_func                # name is f.__name__
        def my_add(a, b): ...

        @register_func("my.add")      # explicit name
        def add(a, b): ...

        register_func("my.add", add, override=True)

    Returns the registered PackedFunc (so a decorated name is bound to the PackedFunc).
    """
    if callable(func_name):
        f, func_name = func_name, func_name.__name__
    if not isinstance(func_name, str) or not func_name:
        raise IrlabError(f"register_func: expected a function name string, got {func_name!r}")

    def register(fn):
        packed = as_packed_func(fn, func_name)
        with _LOCK:
            if func_name in _GLOBALS and not override:
                raise IrlabError(f"Global PackedFunc {func_name} is already registered "
                                 f"(pass override=True to replace it)")
            _GLOBALS[func_name] = packed
        return packed

    return register(f) if f is not None else register


def get_global_func(name: str, allow_missing: bool = False) -> PackedFunc | None:
    """The function registered as ``name``; ``None`` if missing and ``allow_missing``."""
    packed = _GLOBALS.get(name)
    if packed is None and name in _PROVIDERS:
        import importlib

        importlib.import_module(_PROVIDERS[name])
        packed = _GLOBALS.get(name)
    if packed is not None or allow_missing:
        return packed
    close = difflib.get_close_matches(name, list(_GLOBALS), n=5, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise IrlabError(f"Cannot find global function {name}{hint}")


def list_global_func_names() -> list[str]:
    """All registered names, sorted."""
    return sorted(_GLOBALS)


def remove_global_func(name: str) -> None:
    """Unregister ``name``; removing a missing name does nothing, as in TVM."""
    with _LOCK:
        _GLOBALS.pop(name, None)
