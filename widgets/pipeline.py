"""An editable pass pipeline: entries that can be disabled, moved, removed or added (any
``Pass`` object, e.g. one written in a notebook cell), turned back into the list of passes a
``PassTrace`` runs; and how a step is found again after a re-run.

A top-level ``Sequential`` (relay.optimize's pipeline is one, then five direct calls) is
opened up: its members become entries of a *group*, and consecutive enabled entries of a group
run inside a Sequential again, so opt-level gating and nesting stay as they were.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from irlab.transform import Pass, Sequential


@dataclass
class PipelineEntry:
    """One pass of the pipeline. ``group``: the Sequential it runs in (None: called
    directly); ``custom``: added by the user."""

    pass_: Pass
    enabled: bool = True
    group: Sequential | None = None
    custom: bool = False

    @property
    def name(self) -> str:
        return self.pass_.info.name

    def as_json(self, index) -> dict:
        return {"i": index, "name": self.name, "enabled": self.enabled,
                "group": self.group.info.name if self.group is not None else "",
                "opt_level": self.pass_.info.opt_level, "custom": self.custom}


def default_passes() -> list:
    """relay.optimize's pipeline (what ``PassTrace`` runs by default)."""
    from irlab.viz.pass_trace import default_pipeline

    try:
        return default_pipeline()
    except NotImplementedError as err:
        # Some of relay.optimize's passes may still be unwritten: run the ones that exist
        # rather than show nothing, and say so.
        warnings.warn(f"relay.optimize's pipeline is incomplete ({err}); "
                      "showing the passes that exist", stacklevel=3)
        return _existing_passes()


_PIPELINE_ORDER = (  # relay.optimize's order (irlab/relay/pipeline.py), for the fallback only
    "RemoveUnusedFunctions", "ToBasicBlockNormalForm", "QnnLegalizeSequence", "Legalize",
    "SimplifyInference", "EliminateCommonSubexpr", "CombineParallelConv2D",
    "CombineParallelDense", "CombineParallelBatchMatmul", "FoldConstant", "FoldScaleAxis",
    "SimplifyExpr", "CanonicalizeCast", "CanonicalizeOps", "FlattenAtrousConv", "InferType",
    "AlterOpLayout", "SimplifyExprPostAlterOp", "FastMath", "FoldConstant", "SplitArgs",
    "PlanDevices", "FuseOps")
_POST_FUSION = ("InferType", "Inline", "InferType", "LabelOps", "AnnotateMemoryScope")


def _existing_passes() -> list:
    from irlab.relay import transform as T

    def build(names):
        passes = []
        for name in names:
            try:
                passes.append(getattr(T, name)())
            except (NotImplementedError, AttributeError, TypeError):
                continue
        return passes

    return [Sequential(build(_PIPELINE_ORDER), name="sequential"), *build(_POST_FUSION)]


def available_pass_names(relax: bool = False) -> list:
    """Names of the Relay (or Relax) passes that can be built without arguments (for the
    "add" menu)."""
    if relax:
        return _relax_pass_names()
    from irlab.relay import transform as T

    names = []
    for name in sorted(set(_PIPELINE_ORDER + _POST_FUSION + (
            "DeadCodeElimination", "DefuseOps", "ToANormalForm", "ToGraphNormalForm",
            "ForwardFoldScaleAxis", "BackwardFoldScaleAxis", "ConvertLayout"))):
        factory = getattr(T, name, None)
        if factory is None:
            continue
        try:
            factory()
        except Exception:  # unwritten or needs arguments
            continue
        names.append(name)
    return names


def _relax_pass_names() -> list:
    from irlab.relax import transform as T
    from irlab.transform import Pass

    names = []
    for name in sorted(n for n in dir(T) if n[:1].isupper()):
        try:
            made = getattr(T, name)()
        except Exception:  # noqa: BLE001 - a class, or needs arguments
            continue
        if isinstance(made, Pass):
            names.append(name)
    return names


def entries_from_passes(passes) -> list:
    """Entries for ``passes``; a top-level Sequential's members become a group."""
    entries = []
    for p in passes:
        if isinstance(p, Sequential) and p.passes:
            entries.extend(PipelineEntry(member, group=p) for member in p.passes)
        else:
            entries.append(PipelineEntry(p))
    return entries


def passes_from_entries(entries) -> list:
    """The passes to run: enabled entries, consecutive members of a group in a Sequential
    that carries the group's name, opt level and required passes."""
    passes = []
    run, group = [], None
    for entry in entries:
        if not entry.enabled:
            continue
        if entry.group is not group and run:
            passes.append(_sequential(group, run))
            run = []
        group = entry.group
        if group is None:
            passes.append(entry.pass_)
        else:
            run.append(entry.pass_)
    if run:
        passes.append(_sequential(group, run))
    return passes


def _sequential(group, members):
    info = group.info
    return Sequential(members, opt_level=info.opt_level, name=info.name,
                      required=list(info.required))


# -- finding a step again after a re-run ----------------------------------------------------------
def step_key(trace, index) -> tuple:
    """(name, how many steps of that name came before): stable when other passes are
    disabled, moved or added."""
    name = trace.steps[index].name
    return name, sum(1 for s in trace.steps[:index] if s.name == name)


def find_step(trace, key, fallback: int) -> int:
    """The step of ``trace`` with ``key``; else the last step at or before ``fallback``."""
    name, occurrence = key
    seen = 0
    for step in trace.steps:
        if step.name == name:
            if seen == occurrence:
                return step.index
            seen += 1
    return max(0, min(fallback, len(trace.steps) - 1))
