"""What the LLVM code generator promises schedules, without LLVM: the facts a TOPI schedule
reads to write TIR the codegen turns into good code. Kept apart from ``codegen_llvm`` (which
needs llvmlite) so that the schedules, and ``import irlab``, do not load LLVM."""

from __future__ import annotations

MAX_LOAD_STRIDE = 4  # strided vector loads up to this stride read their span and shuffle it
# A loop annotation (``sch.annotate(loop, UNROLL_COUNT_KEY, n)``) that LLVM's unroller reads:
# ``n`` copies of the body per iteration, unrolled by LLVM, not by TIR's UnrollLoop (cheaper to
# build: TIR's copies each go through lowering and code generation). The key is also the
# name of LLVM's loop metadata the codegen attaches.
UNROLL_COUNT_KEY = "llvm.loop.unroll.count"

__all__ = ["MAX_LOAD_STRIDE", "UNROLL_COUNT_KEY"]
