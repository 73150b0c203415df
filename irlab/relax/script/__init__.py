"""TVMScript for Relax: the ``R`` namespace, the ``@R.function`` parser and the printer.

It joins irlab's TVMScript (``irlab.script``, a lower layer) through that layer's hooks: the
registry entry ``script.relax.namespace`` gives ``irlab.script.relax`` its namespace, and a
function printer registered in ``irlab.script.dialect`` prints Relax functions in modules.
"""

from irlab.relax import expr as _expr
from irlab.relax import struct_info as _struct_info
from irlab.relax.script import builtins
from irlab.relax.script.printer import print_function
from irlab.runtime.registry import register_func
from irlab.script import dialect as _dialect

register_func("script.relax.namespace", lambda: builtins, override=True)
_dialect.register_function_printer(  # functions, and any Relax node printed alone
    "relax", lambda f: isinstance(f, (_expr.Expr, _expr.Binding, _expr.BindingBlock,
                                      _struct_info.StructInfo)), print_function)

__all__ = ["builtins", "print_function"]
