"""TVMScript: ``from irlab.script import tir as T``, ``ir as I``, ``relax as R``.

``@T.prim_func`` parses a Python function into a PrimFunc, ``@I.ir_module`` (also
``irlab.script.ir_module``) a class of them into an IRModule; ``from_source(text)`` parses
printed text; ``printer.script(node)`` prints. Relax (``@R.function``) joins through the hooks
of ``irlab.script.dialect``: its parser and printer live in ``irlab.relax.script``.
"""

from irlab.script import tir_builtins as tir
from irlab.script import ir_builtins as ir
from irlab.script import relax  # a thin face: Relax itself loads on first use
from irlab.script.parser import ir_module, from_source, parse
from irlab.script.printer import print_prim_func, print_module, script

__all__ = ["tir", "ir", "relax", "ir_module", "from_source", "parse", "print_prim_func",
           "print_module", "script"]
