"""Registering what external compilers support: per-op predicates and composite pattern tables.

An external ("BYOC") compiler ``<name>`` declares the operators it takes with an op attribute
``target.<name>``: a predicate called with the ``Call`` (typed) that returns whether this call is
supported (a plain ``True``/``False`` works too). ``AnnotateTarget`` reads it::

    @register_op_attr("add", "target.test_target")
    def _add_supported(expr):
        return True

Fused operator groups are declared as a pattern table: ``[(name, pattern[, check]), ...]``
with names ``"<compiler>.<what>"``, consumed by ``MergeComposite``::

    @register_pattern_table("test_target")
    def pattern_table():
        return [("test_target.add_relu", is_op("nn.relu")(is_op("add")(wildcard(), wildcard())))]

    MergeComposite(get_pattern_table("test_target"))
"""

from __future__ import annotations

from typing import Callable

from irlab.errors import IrlabError
from irlab.ir.op import Op

_PATTERN_TABLES: dict[str, Callable] = {}


def register_op_attr(op_name: str, attr_key: str, value=None, level: int = 10):
    """Set ``attr_key`` of operator ``op_name`` (TVM's ``tvm.ir.register_op_attr``).

    With ``value=None`` it returns a decorator that registers the decorated function.
    """
    op = Op.get(op_name)

    def _register(v):
        op.set_attr(attr_key, v, level)
        return v

    return _register(value) if value is not None else _register


def register_pattern_table(compiler: str, table=None):
    """Register a function returning the pattern table of ``compiler`` (usable as decorator)."""
    if not isinstance(compiler, str) or not compiler:
        raise IrlabError("register_pattern_table needs a compiler name")

    def _register(fn):
        if not callable(fn):
            raise IrlabError(f"the pattern table of {compiler!r} must be a function returning "
                             f"a list of (name, pattern[, check]) entries")
        _PATTERN_TABLES[compiler] = fn
        return fn

    return _register(table) if table is not None else _register


def get_pattern_table(compiler: str):
    """The pattern table registered for ``compiler``, or ``None`` when there is none."""
    fn = _PATTERN_TABLES.get(compiler)
    return fn() if fn is not None else None


def is_supported(op: Op, target: str, call) -> bool:
    """Whether ``target`` declares ``call`` (a call of ``op``) supported."""
    predicate = op.get_attr("target." + target)
    if predicate is None:
        return False
    return bool(predicate(call)) if callable(predicate) else bool(predicate)


__all__ = ["register_op_attr", "register_pattern_table", "get_pattern_table", "is_supported"]
