"""Reductions on a CPU (TVM's ``topi.x86.schedule_reduce``, on a ``tir.Schedule``).

For each reduction block of the fused function: the spatial loops are fused into one, which
runs in parallel when there is enough work; the reduction loops are fused and stay innermost
when the input's innermost axis is reduced (a contiguous scan). When the innermost axis is
*not* reduced (e.g. a sum over rows), the fused spatial loop is split by the vector width,
the reduction loop moves between the two parts and the inner spatial loop is vectorized:
each step of the reduction then updates a vector of contiguous outputs. The elementwise stages
after a reduction (mean's division, casts, fused epilogues) get the injective schedule.
"""

from __future__ import annotations

from irlab.tir.schedule import ScheduleError
from irlab.topi.utils import block_of, loop_extent
from irlab.topi.x86.injective import PARALLEL_MIN_ELEMENTS, schedule_injective_block
from irlab.topi.x86.register_tile import vector_lanes



def _loads(expr):
    """The ``ProducerLoad`` nodes in a TE expression."""
    from irlab.ir.node import Node
    from irlab.te.tensor import ProducerLoad

    out, stack, seen = [], [expr], set()
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, ProducerLoad):
            out.append(e)
        if isinstance(e, Node):
            for name in e._fields:
                value = getattr(e, name)
                stack.extend(value if isinstance(value, (list, tuple)) else [value])
    return out


def _innermost_reduced(op) -> bool:
    """Whether some read's innermost index is a reduction variable (a contiguous scan)."""
    rvars = {iv.var for iv in op.reduce_axis}
    for load in _loads(op.body[0]):
        if load.indices and load.indices[-1] in rvars:
            return True
    return False


def schedule_reduce_block(sch, block, op, target):
    """Fuse / parallelize / vectorize one reduction block (in place)."""
    loops = sch.get_loops(block)
    n_spatial = len(op.axis)
    spatial, reduce = loops[:n_spatial], loops[n_spatial:]
    if len(reduce) > 1:
        try:
            reduce = [sch.fuse(*reduce)]
        except ScheduleError:
            pass
    if not spatial:
        return
    fused = sch.fuse(*spatial) if len(spatial) > 1 else spatial[0]
    total = loop_extent(sch, fused)
    if total is None:
        return
    work = total
    for r in reduce:
        work *= loop_extent(sch, r) or 1
    outer = fused
    if not _innermost_reduced(op) and len(reduce) == 1:
        lanes = vector_lanes(op.output(0).dtype, target)
        while lanes > 1 and total % lanes:
            lanes //= 2
        if 1 < lanes < total:
            try:
                outer, inner = sch.split(fused, [None, lanes])
                sch.reorder(outer, reduce[0], inner)
                sch.vectorize(inner)
            except ScheduleError:
                pass  # the split / reorder is still correct serially
    if work >= PARALLEL_MIN_ELEMENTS and loop_extent(sch, outer) > 1:
        try:
            sch.parallel(outer)
        except ScheduleError:
            pass


def schedule_reduce(sch, outs, target):
    """TVM's ``schedule_reduce`` for the fused function whose outputs are ``outs``."""
    from irlab.te.tensor import ComputeOp

    out_ops = {t.op for t in outs}
    seen = set()

    def visit(op):
        if not isinstance(op, ComputeOp) or op in seen:
            return
        seen.add(op)
        try:
            block = block_of(sch, op.output(0))
        except ScheduleError:
            block = None  # inlined into its consumers
        if block is not None:
            if op.reduce_axis:
                schedule_reduce_block(sch, block, op, target)
            elif op in out_ops:
                schedule_injective_block(sch, block, target, op.output(0).dtype)
        for t in op.input_tensors:
            visit(t.op)

    for out in outs:
        visit(out.op)


__all__ = ["schedule_reduce", "schedule_reduce_block"]
