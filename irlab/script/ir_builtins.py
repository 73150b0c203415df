"""The ``I`` namespace of TVMScript (``from irlab.script import ir as I``)."""

from irlab.script.parser import ir_module

__all__ = ["ir_module"]
