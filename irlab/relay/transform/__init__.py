"""Relay passes (``relay.transform``): ``function_pass`` and the passes themselves.

Issue 2 provides ``InferType``; the optimization passes arrive with the pass issue.
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.module import IRModule
from irlab.transform import (Pass, PassContext, PassInfo, Sequential, module_pass, _wrap_pass,
                             ModulePass, PrintIR)
from irlab.relay.function import Function

# Functions carrying one of these attrs are left alone by function passes
# (TVM's AsOptimizableFunctionNode).
_SKIP_ATTRS = ("Compiler", "Extern", "SkipOptimization")


class FunctionPass(Pass):
    """Applies ``f(func, mod, ctx) -> func`` to every Relay function of the module, then runs
    InferType (as every TVM function pass does)."""

    def __init__(self, pass_func, info: PassInfo):
        self.pass_func = pass_func
        self.info = info

    def transform_module(self, mod, ctx):
        updated = mod.copy()
        for gv, func in mod.functions.items():
            if not isinstance(func, Function):
                continue
            if func.attrs is not None and any(k in func.attrs for k in _SKIP_ATTRS):
                continue
            new_func = self.pass_func(func, mod, ctx)
            if not isinstance(new_func, Function):
                raise IrlabError(f"function pass {self.info.name} returned "
                                 f"{type(new_func).__name__}, not a relay.Function")
            if new_func is not func:
                updated[gv] = new_func
        return InferType()(updated)


def function_pass(pass_func=None, opt_level=None, name=None, required=None):
    """Decorate ``f(func, mod, ctx) -> func`` (or a class with ``transform_function``)."""
    return _wrap_pass(pass_func, opt_level, name, required, FunctionPass)


class InferType(Pass):
    """Type inference over every Relay function of the module (module pass, opt level 0).

    Fills ``checked_type`` on every expression and the ``ret_type`` of functions.
    """

    def __init__(self):
        self.info = PassInfo(0, "InferType")

    def transform_module(self, mod, ctx):
        from irlab.relay.ty_infer import infer_module

        return infer_module(mod)


__all__ = ["FunctionPass", "function_pass", "InferType", "module_pass", "Sequential",
           "PassContext", "PassInfo", "ModulePass", "PrintIR", "IRModule"]
