"""Injective (elementwise, broadcast, layout) stages on a CPU: fuse every loop into one, split
off a vector-register-wide inner loop to vectorize, and run the outer loop in parallel when
there is enough work for the thread pool to pay off."""

from __future__ import annotations

from irlab.tir.schedule import ScheduleError
from irlab.topi.utils import block_of, loop_extent
from irlab.topi.x86.register_tile import vector_lanes

PARALLEL_MIN_ELEMENTS = 16384  # below this a fan-out costs more than it saves



def schedule_injective_block(sch, block, target, dtype="float32"):
    """Vectorize the innermost loop and parallelize the fused outer ones (in place).

    The innermost loop stays a loop of its own (fusing it with the outer ones would put a
    div/mod on every element); a vector-width piece of it is vectorized. When it is too short
    to vectorize, every loop is fused instead.
    """
    loops = sch.get_loops(block)
    if not loops:
        return
    # trailing unit loops (a block of 1 channel: the stem's NCHW1c input) join the loop
    # outside them, which is then the one vectorized: fusing every loop instead put a
    # div/mod on each element (the 1x3x224x224 input's copy: 0.12 vs 0.02 ms at 2 threads)
    last = len(loops) - 1
    while last > 0 and loop_extent(sch, loops[last]) == 1:
        last -= 1
    if last < len(loops) - 1:
        loops = loops[:last] + [sch.fuse(*loops[last:])]
    lanes = vector_lanes(dtype, target)
    inner_extent = loop_extent(sch, loops[-1])
    if inner_extent is not None and inner_extent >= lanes:
        width = lanes
        while width > 1 and inner_extent % width:
            width //= 2
        outer_loops = loops[:-1]
        if width > 1 and inner_extent > width:
            rest, vec = sch.split(loops[-1], [None, width])
            sch.vectorize(vec)
            outer_loops = outer_loops + [rest]
        elif width > 1:
            sch.vectorize(loops[-1])
        outer = sch.fuse(*outer_loops) if len(outer_loops) > 1 else (
            outer_loops[0] if outer_loops else None)
    else:
        outer = sch.fuse(*loops) if len(loops) > 1 else loops[0]
        total = loop_extent(sch, outer)
        width = lanes
        while total and width > 1 and total % width:
            width //= 2
        if total and width > 1 and total > width:
            outer, vec = sch.split(outer, [None, width])
            sch.vectorize(vec)
    elements = 1
    for loop in sch.get_loops(block):
        extent = loop_extent(sch, loop)
        elements *= extent if extent else 1
    if outer is not None and elements >= PARALLEL_MIN_ELEMENTS:
        try:
            sch.parallel(outer)
        except ScheduleError:
            pass  # e.g. the block sits under another loop: serial is still correct


def schedule_injective(sch, outs, target):
    """TVM's ``schedule_injective`` for every output tensor in ``outs``."""
    for out in outs:
        schedule_injective_block(sch, block_of(sch, out), target, out.dtype)


__all__ = ["schedule_injective", "schedule_injective_block"]
