"""``AddRFactor``: for a reduction with little spatial parallelism (a row sum, a softmax's
max), also offer schedules that split the reduction and rfactor it, so the partial
reductions can run in parallel (TVM's ``ms.schedule_rule.AddRFactor``)."""

from __future__ import annotations

from irlab.meta_schedule import block_analysis as BA
from irlab.meta_schedule.schedule_rule.default_decision import default_reduction
from irlab.meta_schedule.schedule_rule.schedule_rule import (ScheduleRule,
                                                             target_cores_and_lanes)
from irlab.tir.schedule import ScheduleError


class AddRFactor(ScheduleRule):
    """Returns the original schedule plus, for each of the two tiles of the sampled split
    of the fused reduction loops, one schedule rfactoring that tile. Applies to trivially
    bound reductions over one chain of loops when the spatial extent is below the
    parallelism ``max_jobs_per_core`` x cores (or, for blocks without reuse, when the
    reduction is longer than the core count)."""

    def __init__(self, max_jobs_per_core=16, max_innermost_factor=None):
        self.max_jobs_per_core = int(max_jobs_per_core)
        self.max_innermost_factor = -1 if max_innermost_factor is None \
            else int(max_innermost_factor)
        self.max_parallel_extent = self.max_jobs_per_core
        self.max_parallel_basic = 1

    def _initialize_with_tune_context(self, context) -> None:
        cores, _ = target_cores_and_lanes(context)
        self.max_parallel_extent = self.max_jobs_per_core * cores
        self.max_parallel_basic = cores

    def _needs_rfactor(self, sch, block) -> bool:
        realize = BA.realize_of(sch, block)
        loops = BA.loops_of(sch, block)
        if not realize.block.writes or not BA.is_reduction(realize.block) or not loops:
            return False
        if BA.TILING_STRUCTURE in BA.annotations(realize):
            return False
        if not BA.is_trivial_binding(realize, loops):
            return False
        chained = all(a.body is b for a, b in zip(loops, loops[1:])) \
            and loops[-1].body is realize
        lengths = BA.space_and_reduce_lengths(realize, loops)
        if not chained or lengths is None or lengths[1] <= 1:
            return False
        space, reduce = lengths
        if BA.needs_multi_level_tiling(realize, loops):
            return not (space >= reduce or space > self.max_parallel_extent)
        return reduce > self.max_parallel_basic

    def apply(self, sch, block) -> list:
        if not self._needs_rfactor(sch, block):
            return [sch]
        original = sch.copy()
        kinds = [BA.loop_iter_type(lp) for lp in BA.loops_of(sch, block)]
        extent = 1  # of the fused reduction loop (0: not constant)
        for loop, kind in zip(BA.loops_of(sch, block), kinds):
            extent = extent * (BA.const_extent(loop) or 0) if kind == BA.REDUCE else extent
        loops = sch.get_loops(block)
        spatial = [lp for lp, k in zip(loops, kinds) if k == BA.DATA_PAR]
        reduce = [lp for lp, k in zip(loops, kinds) if k == BA.REDUCE]
        sch.reorder(*spatial, *reduce)
        fused = sch.fuse(*reduce) if len(reduce) > 1 else reduce[0]
        default = default_reduction(extent, 2, self.max_innermost_factor) if extent else None
        factors = sch.sample_perfect_tile(fused, 2, self.max_innermost_factor,
                                          decision=default)
        results = []
        for loop in sch.split(fused, factors):
            attempt = sch.copy()
            try:
                attempt.rfactor(loop, len(spatial))
            except ScheduleError:
                continue
            attempt.annotate(block, BA.RANDOM_COMPUTE_PRODUCER, 1)
            results.append(attempt)
        return results + [original]
