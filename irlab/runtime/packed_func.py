"""``PackedFunc``: a named callable, the unit the global registry and runtime modules hand out.

TVM's PackedFunc type-erases arguments across the C ABI; in irlab a Python callable already takes
any arguments, so a PackedFunc only adds a name and a readable repr. Compiled functions compose it
(their own ``__call__`` converts arguments before entering machine code).
"""

from __future__ import annotations


class PackedFunc:
    """Wraps ``fn`` under ``name`` (default: the function's ``__name__``)."""

    __slots__ = ("_fn", "name", "__weakref__")

    def __init__(self, fn=None, name: str | None = None):
        if fn is not None and not callable(fn):
            raise TypeError(f"PackedFunc wraps a callable, got {type(fn).__name__}")
        self._fn = fn
        self.name = name if name is not None else getattr(fn, "__name__", "<anonymous>")

    def __call__(self, *args, **kwargs):
        # Keyword arguments pass through: Python callers of a registered hook may use them
        # (PrimFunc.script(show_meta=True) reaches the TVMScript printer through the registry).
        return self._fn(*args, **kwargs)

    def __repr__(self):
        target = self._fn
        where = getattr(target, "__qualname__", type(target).__name__)
        module = getattr(target, "__module__", None)
        source = f"{module}.{where}" if module else where
        return f"<PackedFunc {self.name!r} -> {source}>"


def as_packed_func(fn, name: str | None = None) -> PackedFunc:
    """``fn`` itself when it already is a PackedFunc (renaming is not needed), else a wrapper."""
    if isinstance(fn, PackedFunc):
        return fn
    return PackedFunc(fn, name)
