"""Injective (elementwise, broadcast, layout) stages on a CPU: fuse every loop into one, split
off a vector-register-wide inner loop to vectorize, and run the outer loop in parallel when
there is enough work for the thread pool to pay off."""

from __future__ import annotations

from irlab.ir.dtype import parse_dtype
from irlab.tir.schedule import ScheduleError
from irlab.topi.utils import block_of

PARALLEL_MIN_ELEMENTS = 16384  # below this a fan-out costs more than it saves


def vector_lanes(dtype: str, target) -> int:
    """Elements of ``dtype`` in one vector register of ``target``."""
    bits = max(8, parse_dtype(dtype).bits)
    return max(1, target.vector_bits // bits)


def _extent(sch, loop):
    value = sch.get(loop).extent
    return int(value.value) if hasattr(value, "value") else None


def schedule_injective_block(sch, block, target, dtype="float32"):
    """Fuse, vectorize and parallelize one injective block (in place)."""
    loops = sch.get_loops(block)
    if not loops:
        return
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    total = _extent(sch, fused)
    if total is None:
        return
    lanes = vector_lanes(dtype, target)
    while lanes > 1 and total % lanes:
        lanes //= 2
    if lanes > 1 and total > lanes:
        outer, inner = sch.split(fused, [None, lanes])
        sch.vectorize(inner)
    else:
        outer = fused
    if total >= PARALLEL_MIN_ELEMENTS:
        try:
            sch.parallel(outer)
        except ScheduleError:
            pass  # e.g. the block sits under another loop: serial is still correct


def schedule_injective(sch, outs, target):
    """TVM's ``schedule_injective`` for every output tensor in ``outs``."""
    for out in outs:
        schedule_injective_block(sch, block_of(sch, out), target, out.dtype)


__all__ = ["schedule_injective", "schedule_injective_block", "vector_lanes"]
