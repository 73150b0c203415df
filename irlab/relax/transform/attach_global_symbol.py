"""AttachGlobalSymbol: every function of the module gets a ``global_symbol`` attribute (its
name), the symbol under which the kernel library or the VM exports it."""

from __future__ import annotations

from irlab.transform import module_pass


def _attach(mod, ctx):
    changes = {}
    for gv, func in mod.functions.items():
        attrs = getattr(func, "attrs", None)
        if attrs is not None and attrs.get("global_symbol"):
            continue
        changes[gv] = func.with_attr("global_symbol", gv.name_hint)
    if not changes:
        return mod
    out = mod.copy()
    for gv, func in changes.items():
        out[gv] = func
    return out


def AttachGlobalSymbol():
    """Name every function by its GlobalVar unless it already has a ``global_symbol``."""
    return module_pass(_attach, opt_level=0, name="AttachGlobalSymbol")


def global_symbol(gv, func) -> str:
    """The symbol ``func`` is exported under (its ``global_symbol``, else its name)."""
    attrs = getattr(func, "attrs", None)
    symbol = attrs.get("global_symbol") if attrs is not None else None
    return str(symbol) if symbol else gv.name_hint


__all__ = ["AttachGlobalSymbol", "global_symbol"]
