"""``ParallelizeVectorizeUnroll``: mark the root block with how far its loop nests may be
parallelized and vectorized and a sampled unroll depth; the postprocessor
``RewriteParallelVectorizeUnroll`` turns the marks into loop kinds once the rest of the
schedule is fixed (TVM's rule of the same name)."""

from __future__ import annotations

from irlab.meta_schedule import block_analysis as BA
from irlab.meta_schedule.schedule_rule.default_decision import middle_index
from irlab.meta_schedule.schedule_rule.schedule_rule import (ScheduleRule,
                                                             target_cores_and_lanes)
from irlab.tir import stmt as S
from irlab.tir.schedule import primitives_getters as G


class ParallelizeVectorizeUnroll(ScheduleRule):
    """``max_jobs_per_core`` x cores bounds the fused parallel extent (-1: no
    parallelization), ``max_vectorize_extent`` the fused vector extent (-1: none; None:
    four vector registers of float32 on the target, 64 with AVX-512 as TVM's CPU default,
    32 with AVX2), and the unroll depth is sampled uniformly from ``unroll_max_steps`` when
    the function has a reduction (the middle depth by default)."""

    def __init__(self, max_jobs_per_core=16, max_vectorize_extent=16, unroll_max_steps=None,
                 unroll_explicit=True):
        self.max_jobs_per_core = int(max_jobs_per_core)
        self.max_vectorize_extent = None if max_vectorize_extent is None \
            else int(max_vectorize_extent)
        self.unroll_max_steps = [int(s) for s in (unroll_max_steps or [])]
        self.unroll_explicit = bool(unroll_explicit)
        self.max_parallel_extent = -1
        self.vectorize_extent = 64 if max_vectorize_extent is None else int(max_vectorize_extent)

    def _initialize_with_tune_context(self, context) -> None:
        cores, lanes = target_cores_and_lanes(context)
        if self.max_jobs_per_core != -1:
            self.max_parallel_extent = self.max_jobs_per_core * cores
        if self.max_vectorize_extent is None:
            self.vectorize_extent = 4 * lanes

    def apply(self, sch, block) -> list:
        if not BA.is_root(sch, block):
            return [sch]
        if self.max_jobs_per_core != -1:
            extent = self.max_parallel_extent
            sch.annotate(block, BA.PARALLEL, extent if extent != -1 else self.max_jobs_per_core)
        if self.vectorize_extent != -1:
            sch.annotate(block, BA.VECTORIZE, self.vectorize_extent)
        realize = BA.realize_of(sch, block)
        blocks = [n.block for n, _ in G.walk(realize) if isinstance(n, S.BlockRealize)]
        if self.unroll_max_steps and not all(BA.is_spatial(b) for b in blocks):
            n = len(self.unroll_max_steps)
            step = sch.sample_categorical(self.unroll_max_steps, [1.0 / n] * n,
                                          decision=middle_index(self.unroll_max_steps))
            key = BA.UNROLL_EXPLICIT if self.unroll_explicit else BA.UNROLL_IMPLICIT
            sch.annotate(block, key, step)
        return [sch]
