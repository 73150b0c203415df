"""relay.build's step 29 as passes instruments see (reference §2.3):
``Sequential[RelayToTIRTargetHook, LowerTE, InferType, tir.ExtractPrimFuncConstants]``.

``LowerTE`` lowers every primitive function ``@main`` calls (through one ``TECompiler``, so
graph codegen reuses the result) and adds each scheduled PrimFunc to the module under its
``tvmgen_default_fused_*`` name. Departure from TVM: the calls in ``@main`` keep pointing at
the fused Relay functions (TVM rewrites them to ``call_lowered``); graph codegen maps each to
its PrimFunc by structure, and the module shows both levels side by side.
"""

from __future__ import annotations

from irlab.relay import expr as R
from irlab.relay.function import Function, is_primitive
from irlab.transform import Sequential, module_pass


def _primitive_calls(main):
    """Primitive functions called by ``main``, in post order, each once."""
    found, funcs, visited, stack = [], set(), set(), [(main.body, False)]
    while stack:
        e, done = stack.pop()
        if done:
            if isinstance(e, R.Call) and isinstance(e.op, Function) and id(e.op) not in funcs:
                funcs.add(id(e.op))
                found.append(e.op)
            continue
        if id(e) in visited:
            continue
        visited.add(id(e))
        stack.append((e, True))
        children = []
        if isinstance(e, R.Call):
            children = list(e.args)
        elif isinstance(e, R.Tuple):
            children = list(e.fields)
        elif isinstance(e, R.TupleGetItem):
            children = [e.tuple_value]
        elif isinstance(e, R.Let):
            children = [e.value, e.body]
        stack.extend((c, False) for c in reversed(children))
    return found


def LowerTE(compiler):  # noqa: N802 (TVM's name)
    """Lower the primitive functions of ``@main`` and add their PrimFuncs to the module."""

    def transform(mod, ctx):
        out = mod.copy()
        for func in _primitive_calls(mod["main"]):
            # functions for external compilers (BYOC) go to relay.ext.<name> in graph codegen
            if is_primitive(func) and func.get_attr("Compiler") is None:
                lowered = compiler.lower(func)
                out[lowered.name] = lowered.prim_func
        return out

    return module_pass(transform, opt_level=0, name="LowerTE", required=["InferType"])


def RelayToTIRTargetHook():  # noqa: N802
    """Runs targets' own Relay-to-TIR hooks (BYOC targets such as CMSIS-NN); the CPU has
    none, so nothing changes."""
    return module_pass(lambda mod, ctx: mod, opt_level=0, name="RelayToTIRTargetHook")


def ExtractPrimFuncConstants():  # noqa: N802
    """Moves constants out of PrimFuncs into module constants; irlab's PrimFuncs hold none
    (tensor constants are graph params), so nothing changes."""
    return module_pass(lambda mod, ctx: mod, opt_level=0, name="tir.ExtractPrimFuncConstants")


def lower_te_passes(compiler) -> Sequential:
    from irlab.relay.transform import InferType

    return Sequential([RelayToTIRTargetHook(), LowerTE(compiler), InferType(),
                       ExtractPrimFuncConstants()], name="sequential")


__all__ = ["LowerTE", "RelayToTIRTargetHook", "ExtractPrimFuncConstants", "lower_te_passes"]
