"""irlab: a deep-learning compiler in Python, built to be seen (TVM's stack, re-implemented).

``import irlab as tvm`` runs TVM-style code: ``irlab.relay``, ``irlab.IRModule``,
``irlab.transform``, ``irlab.ir``... The notebook layer (``irlab.widgets``) and LLVM codegen are
imported only when used.
"""

__version__ = "0.1.0"

import sys as _sys

from irlab.errors import IrlabError, TVMError, DiagnosticError, RelayTypeError, ParseError
from irlab import ir, error
from irlab.ir import IRModule
from irlab.runtime.dtype import DataType
from irlab.runtime.ndarray import cpu, device, Device
from irlab.runtime.registry import register_func, get_global_func
from irlab import nd, runtime
from irlab import transform
from irlab import instrument
from irlab import relay
from irlab import parser
from irlab import tir
from irlab import te
from irlab import script  # ``@tvm.script.ir_module`` must work after ``import irlab as tvm``
from irlab.tir.transform.pipeline import lower
from irlab import target
from irlab.build_module import build
from irlab import codegen  # seed 000: tvm.codegen.build_module.CodeGenBase
from irlab import contrib

runtime.registry.register_func_provider("tvm.graph_executor.create_executor",
                                        "irlab.contrib.graph_executor")
# load_module of an LLVM archive, in a process that has not compiled anything yet
runtime.registry.register_func_provider("runtime.module.load_llvm_objects",
                                        "irlab.target.llvm_jit")
# ``from irlab.script import relax as R`` reaches Relax's TVMScript (above script) this way
runtime.registry.register_func_provider("script.relax.namespace", "irlab.relax.script")

# TVM also spells the pass infrastructure ``tvm.ir.transform`` / ``tvm.ir.instrument``; irlab
# keeps one module each, reachable under both paths (ir sits below them, so it cannot import them).
for _name, _module in (("transform", transform), ("instrument", instrument)):
    setattr(ir, _name, _module)
    _sys.modules[f"irlab.ir.{_name}"] = _module
del _name, _module


# Relax and MetaSchedule load on first use (``tvm.relax``, ``from irlab import meta_schedule``):
# neither is needed to build a Relay model, and ``import irlab`` must stay fast.
_LAZY_SUBPACKAGES = ("relax", "meta_schedule")


def __getattr__(name):
    if name in _LAZY_SUBPACKAGES:
        import importlib

        return importlib.import_module(f"irlab.{name}")
    raise AttributeError(f"module 'irlab' has no attribute {name!r}")


def explore(mod_or_expr, **kw):
    """Graph view and pass stepper of a program, as one notebook app (``irlab.widgets``)."""
    from irlab.widgets import explore as _e

    return _e(mod_or_expr, **kw)


__all__ = ["explore", "IrlabError", "TVMError", "DiagnosticError", "RelayTypeError", "ParseError",
           "ir", "IRModule", "DataType", "error", "cpu", "device", "Device", "register_func",
           "get_global_func", "nd", "runtime", "transform",
           "instrument", "relay", "parser", "tir", "te", "script", "lower", "target", "build",
           "codegen", "contrib"]
