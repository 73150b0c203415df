"""The Relax pipelines, as visible lists in TVM's order (``relax.get_pipeline(name)``).

A pass not written yet is skipped, so the lists state the intended order even while parts of
Relax are missing; ``pipeline_passes(name)`` shows what actually runs.
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.transform import Sequential

PIPELINES = {
    # graph-level optimization (TVM's "zero" pipeline)
    "zero": [
        "LegalizeOps",  # high-level ops -> call_tir of TOPI PrimFuncs in the same module
        "AnnotateTIROpPattern",  # each PrimFunc's fusion pattern, read from its loops
        "FoldConstant",  # evaluate calls whose inputs are all constants
        "FuseOps",  # group injective ops into their producers / consumers
        "FuseTIR",  # each group becomes one PrimFunc
        # where TVM applies MetaScheduleApplyDatabase (tuned) or DLight (rule-based): every
        # unscheduled kernel gets the generic CPU schedule (parallel, vectorized, tiled)
        "DefaultCPUSchedule",
    ],
    # lowering to the VM (TVM's "default_build", what relax.build runs)
    "default_build": [
        "LegalizeOps",  # anything still high-level becomes call_tir
        "DefaultCPUSchedule",  # kernels made since (or never scheduled) get scheduled
        "ToNonDataflow",  # the VM has no dataflow regions
        "RemovePurityChecking",  # call_pure_packed -> plain calls
        "CallTIRRewrite",  # call_tir outputs -> explicit allocations + PrimFunc call
        "StaticPlanBlockMemory",  # static-shape tensors share storages
        "LowerAllocTensor",  # the other tensors get a storage each
        "VMBuiltinLower",  # memory ops -> the VM's alloc_storage / alloc_tensor
        "VMShapeLower",  # symbolic shapes -> shape heap, run-time checks
        "AttachGlobalSymbol",  # every function gets its exported symbol
    ],
}


def pipeline_passes(name: str = "zero") -> list:
    """The passes of pipeline ``name`` that exist (in order)."""
    from irlab.relax import transform

    if name not in PIPELINES:
        raise IrlabError(f"unknown Relax pipeline {name!r}; there are {sorted(PIPELINES)}")
    return [getattr(transform, p)() for p in PIPELINES[name] if hasattr(transform, p)]


def get_pipeline(name: str = "zero", **kwargs):
    """Pipeline ``name`` as one pass (``tvm.relax.get_pipeline``)."""
    if kwargs:
        raise IrlabError(f"get_pipeline({name!r}) takes no options, got {sorted(kwargs)}")
    return Sequential(pipeline_passes(name), name=f"relax.{name}_pipeline")


__all__ = ["PIPELINES", "pipeline_passes", "get_pipeline"]
