"""Relay passes (``relay.transform``): ``function_pass``, ``InferType`` and the optimization
passes, one module per pass (imported on first use, so ``import irlab`` stays light)."""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.module import IRModule
from irlab.transform import (Pass, PassContext, PassInfo, Sequential, module_pass, _wrap_pass,
                             ModulePass, PrintIR, register_pass_finder)
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


# Pass name -> the module of this package that defines it.
_PASS_MODULES = {
    "FuseOps": "fuse_ops",
    "DefuseOps": "fuse_ops",
    "LabelOps": "label_ops",
    "SimplifyInference": "simplify_inference",
    "FoldConstant": "fold_constant",
    "FoldScaleAxis": "fold_scale_axis",
    "BackwardFoldScaleAxis": "fold_scale_axis",
    "ForwardFoldScaleAxis": "fold_scale_axis",
    "CanonicalizeOps": "canonicalize",
    "CanonicalizeCast": "canonicalize",
    "FastMath": "fast_math",
    "ConvertLayout": "layout",
    "AlterOpLayout": "layout",
    "Legalize": "layout",
    "EliminateCommonSubexpr": "eliminate_common_subexpr",
    "DeadCodeElimination": "dead_code",
    "SimplifyExpr": "simplify_expr",
    "SimplifyExprPostAlterOp": "simplify_expr",
    "ToANormalForm": "normal_form",
    "ToGraphNormalForm": "normal_form",
    "ToBasicBlockNormalForm": "normal_form",
    "RemoveUnusedFunctions": "module_passes",
    "Inline": "module_passes",
    "MergeComposite": "partition_graph",
    "UnmatchedPatternWarning": "partition_graph",
    "AnnotateTarget": "partition_graph",
    "MergeCompilerRegions": "partition_graph",
    "PartitionGraph": "partition_graph",
    "CombineParallelConv2D": "combine_parallel",
    "CombineParallelDense": "combine_parallel",
    "CombineParallelBatchMatmul": "combine_parallel",
    "FlattenAtrousConv": "build_pipeline_passes",
    "SplitArgs": "build_pipeline_passes",
    "PlanDevices": "build_pipeline_passes",
    "AnnotateMemoryScope": "build_pipeline_passes",
    "QnnLegalize": "build_pipeline_passes",
    "QnnCanonicalize": "build_pipeline_passes",
    "QnnLegalizeSequence": "build_pipeline_passes",
    "AnnotateSpans": "annotate_spans",
    "InferTypeLocal": "annotate_spans",
}


def __getattr__(name):
    module = _PASS_MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'irlab.relay.transform' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"irlab.relay.transform.{module}"), name)
    globals()[name] = value
    return value


def _find_pass(name):
    """A Relay pass factory by name: an exported factory, or one its module registers when
    loaded (PassInfo names that differ from the factory's: InlineGlobals is Inline())."""
    if name in _PASS_MODULES:
        return __getattr__(name)
    if name in _PASS_FACTORY_NAMES:
        return globals()[name]
    import importlib

    for module in set(_PASS_MODULES.values()):
        importlib.import_module(f"irlab.relay.transform.{module}")
    return None


_PASS_FACTORY_NAMES = ("InferType",)
register_pass_finder(_find_pass)


def __dir__():
    return sorted(set(globals()) | set(_PASS_MODULES))


__all__ = ["FunctionPass", "function_pass", "InferType", "module_pass", "Sequential",
           "PassContext", "PassInfo", "ModulePass", "PrintIR", "IRModule", *_PASS_MODULES]
