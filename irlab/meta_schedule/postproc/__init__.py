"""``ms.postproc``: postprocessors that finish or reject sampled schedules."""

from irlab.meta_schedule.postproc.disallow_dynamic_loop import DisallowDynamicLoop
from irlab.meta_schedule.postproc.postproc import (Postproc, PyPostproc, apply_postprocs,
                                                   create_default)
from irlab.meta_schedule.postproc.rewrite_layout import RewriteLayout
from irlab.meta_schedule.postproc.rewrite_parallel_vectorize_unroll import (
    RewriteParallelVectorizeUnroll)
from irlab.meta_schedule.postproc.rewrite_reduction_block import RewriteReductionBlock
from irlab.meta_schedule.postproc.verify_vectorization import VerifyVectorization

__all__ = ["Postproc", "PyPostproc", "create_default", "apply_postprocs",
           "DisallowDynamicLoop", "RewriteLayout", "RewriteParallelVectorizeUnroll",
           "RewriteReductionBlock", "VerifyVectorization"]
