"""``ScheduleRule``: a rule turns one schedule and one of its blocks into the schedules of
the design space (TVM's ``ms.schedule_rule.ScheduleRule``); ``create("llvm")`` is the CPU
default list."""

from __future__ import annotations

import copy


class ScheduleRule:
    """Base of the rules. ``apply(sch, block)`` returns the schedules this rule makes of
    ``sch`` at ``block``: ``[sch]`` when it does not apply; it may change ``sch`` in place or
    return copies (``sch.copy()``), one per alternative it explores.

    A rule that samples passes its default as the ``decision=`` of the ``sample_*`` call
    (``default_decision``: what a hand schedule would pick): the design space's trace then
    records that point, which the search measures first (``EvolutionarySearch``'s
    ``seed_defaults``) and re-samples for every other candidate."""

    def _initialize_with_tune_context(self, context) -> None:
        """Read what the rule needs from the task (target, cores)."""

    def apply(self, sch, block) -> list:
        raise NotImplementedError(f"{type(self).__name__}.apply")

    def clone(self) -> "ScheduleRule":
        return copy.deepcopy(self)

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"

    @staticmethod
    def create(kind) -> list:
        """The default rules of a target kind (TVM's ``ScheduleRule.create``): "llvm"."""
        if kind != "llvm":
            raise ValueError(f"irlab's MetaSchedule has default schedule rules for 'llvm' "
                             f"only, got {kind!r}")
        return create_default()


# TVM's name for a rule written in Python.
PyScheduleRule = ScheduleRule


def target_cores_and_lanes(context, dtype="float32"):
    """(cores, vector lanes of ``dtype``) of the task's target (1 and 4 without one); the
    cores are the target's ``-num-cores`` (else the host's), as TVM's GetTargetNumCores."""
    target = getattr(context, "target", None)
    if target is None:
        return 1, 4
    return max(1, int(target.num_cores)), max(1, int(target.vector_width(dtype)))


def create_default(target=None) -> list:
    """TVM's ``ScheduleRule::DefaultLLVM`` (without tensorization rules): blocks annotated
    ``schedule_rule`` to their custom functions (``ApplyCustomRule``), inline cheap
    elementwise blocks, rfactor reductions short on parallelism, multi-level tiling with a
    write cache, then parallelize / vectorize / unroll and random compute locations. The
    rules read the target (cores, vector lanes) when initialized with a task; ``target``
    is accepted for symmetry with TVM's per-target defaults."""
    from irlab.meta_schedule.schedule_rule.add_rfactor import AddRFactor
    from irlab.meta_schedule.schedule_rule.apply_custom_rule import ApplyCustomRule
    from irlab.meta_schedule.schedule_rule.auto_inline import AutoInline
    from irlab.meta_schedule.schedule_rule.multi_level_tiling import MultiLevelTiling
    from irlab.meta_schedule.schedule_rule.parallel_vectorize_unroll import (
        ParallelizeVectorizeUnroll)
    from irlab.meta_schedule.schedule_rule.random_compute_location import (
        RandomComputeLocation)

    return [
        ApplyCustomRule(),
        AutoInline(into_producer=False, into_consumer=True, inline_const_tensor=True,
                   disallow_if_then_else=True, require_injective=True, require_ordered=True,
                   disallow_op=["tir.exp"]),
        AddRFactor(max_jobs_per_core=16, max_innermost_factor=64),
        MultiLevelTiling(structure="SSRSRS", tile_binds=None, max_innermost_factor=64,
                         vector_load_lens=None, reuse_read=None,
                         reuse_write={"req": "may", "levels": [1, 2], "scope": "global"},
                         vector_axis=True),
        ParallelizeVectorizeUnroll(max_jobs_per_core=16, max_vectorize_extent=None,
                                   unroll_max_steps=[0, 16, 64, 512], unroll_explicit=True),
        RandomComputeLocation(),
    ]
