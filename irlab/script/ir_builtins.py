"""The ``I`` namespace of TVMScript (``from irlab.script import ir as I``)."""

from irlab.script.parser import PENDING_MODULE_ATTRS, ir_module

__all__ = ["ir_module", "module_attrs"]


def module_attrs(attrs: dict) -> None:
    """``I.module_attrs({...})`` in an ``@I.ir_module`` class body: the module's attributes
    (the class body runs before the decorator, which takes them)."""
    if not isinstance(attrs, dict):
        raise TypeError(f"I.module_attrs takes a dict, got {type(attrs).__name__}")
    PENDING_MODULE_ATTRS.append(dict(attrs))
