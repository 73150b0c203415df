"""``create_executor`` and ``bind_params_by_name`` (``relay.build`` arrives with codegen)."""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.relay.expr import bind, const


def bind_params_by_name(func, params):
    """Replace the parameters of ``func`` named in ``params`` by constants."""
    if not params:
        return func
    by_name = {}
    for p in func.params:
        by_name.setdefault(p.name_hint, []).append(p)
    binds = {}
    for name, value in params.items():
        if name not in by_name:
            continue
        if len(by_name[name]) > 1:
            raise IrlabError(f"multiple parameters are named {name!r}")
        binds[by_name[name][0]] = const(value)
    return bind(func, binds)


def create_executor(kind="debug", mod=None, device=None, target="llvm", params=None):
    from irlab.relay.interpreter import create_executor as _create

    return _create(kind, mod, device, target, params)
