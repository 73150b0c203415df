"""``Postproc``: finishes or rejects a sampled schedule after its trace was replayed (TVM's
``ms.postproc.Postproc``); ``create("llvm")`` is the CPU default list."""

from __future__ import annotations

import copy

from irlab.tir.schedule import ScheduleError


class Postproc:
    """Base of the postprocessors. ``apply(sch) -> bool`` rewrites ``sch`` in place; False
    means the candidate is invalid and must be dropped."""

    def _initialize_with_tune_context(self, context) -> None:
        """Read what the postprocessor needs from the task."""

    def apply(self, sch) -> bool:
        raise NotImplementedError(f"{type(self).__name__}.apply")

    def clone(self) -> "Postproc":
        return copy.deepcopy(self)

    def __repr__(self):
        return f"{type(self).__name__}()"

    @staticmethod
    def create(kind) -> list:
        """The default postprocessors of a target kind (TVM's ``Postproc.create``)."""
        if kind != "llvm":
            raise ValueError(f"irlab's MetaSchedule has default postprocessors for 'llvm' "
                             f"only, got {kind!r}")
        return create_default()


PyPostproc = Postproc


def create_default(target=None) -> list:
    """TVM's ``Postproc::DefaultLLVM`` (without RewriteLayout), plus a check that every
    vectorized loop really vectorizes."""
    from irlab.meta_schedule.postproc.disallow_dynamic_loop import DisallowDynamicLoop
    from irlab.meta_schedule.postproc.rewrite_parallel_vectorize_unroll import (
        RewriteParallelVectorizeUnroll)
    from irlab.meta_schedule.postproc.rewrite_reduction_block import RewriteReductionBlock
    from irlab.meta_schedule.postproc.verify_vectorization import VerifyVectorization

    return [DisallowDynamicLoop(), RewriteParallelVectorizeUnroll(), RewriteReductionBlock(),
            VerifyVectorization()]


def apply_postprocs(sch, postprocs) -> bool:
    """Enter postprocessing on ``sch`` and run ``postprocs`` in order; False as soon as
    one rejects the schedule (a ScheduleError inside one counts as a rejection)."""
    sch.enter_postproc()
    for postproc in postprocs:
        try:
            if not postproc.apply(sch):
                return False
        except ScheduleError:
            return False
    return True
