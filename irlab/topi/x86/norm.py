"""CPU schedules of the row-wise reductions: softmax, log-softmax, layer norm, instance norm.

The output block's leading loops that are not reduced (the "rows") are fused into one loop,
every intermediate stage (max, exp, sum / mean, variance) is moved under it with
``compute_at`` (so each row's statistics and exps live in a small buffer), the innermost loop
of each elementwise stage is vectorized when its extent allows, and the row loop runs in
parallel when there is enough work.
"""

from __future__ import annotations

from irlab.tir.schedule import ScheduleError
from irlab.topi.utils import block_of, const_shape, loop_extent
from irlab.topi.x86.injective import PARALLEL_MIN_ELEMENTS
from irlab.topi.x86.register_tile import vector_lanes



def _stages(out):
    """The compute stages under ``out`` (not the placeholders), consumers first."""
    order, seen, stack = [], set(), [out]
    while stack:
        t = stack.pop()
        for s in t.op.input_tensors:
            if hasattr(s.op, "body") and id(s.op) not in seen:
                seen.add(id(s.op))
                order.append(s)
                stack.append(s)
    return order


def _vectorize_inner(sch, block, target, dtype):
    loops = sch.get_loops(block)
    if not loops:
        return
    inner = loops[-1]
    extent = loop_extent(sch, inner)
    if extent is None:
        return
    lanes = vector_lanes(dtype, target)
    try:
        if extent <= lanes:
            if extent > 1:
                sch.vectorize(inner)
            return
        while lanes > 1 and extent % lanes:
            lanes //= 2
        if lanes > 1:
            _, vi = sch.split(inner, [None, lanes])
            sch.vectorize(vi)
    except ScheduleError:
        pass


def _has_block(sch, tensor) -> bool:
    """False for a stage LowerTE inlined (an elementwise op fused before the softmax)."""
    try:
        block_of(sch, tensor)
    except ScheduleError:
        return False
    return True


def row_axis(out, default):
    """The ``axis`` attribute of ``out`` or, when elementwise ops were fused after the
    softmax / norm, of the stage under it that has one."""
    for t in [out] + _stages(out):
        attrs = t.op.attrs
        if attrs and "axis" in attrs:
            return int(attrs["axis"])
    return default


def schedule_rows(sch, out, target, rows: int):
    """Schedule ``out`` and its stages with its first ``rows`` loops as the (parallel) rows."""
    oblock = block_of(sch, out)
    stages = [t for t in _stages(out) if _has_block(sch, t)]
    loops = sch.get_loops(oblock)
    rows = min(rows, len(loops))
    row = None
    if rows >= 2:
        row = sch.fuse(*loops[:rows])
    elif rows == 1:
        row = loops[0]
    if row is not None:
        pending = list(stages)
        while pending:  # a stage moves once all its consumers are under row
            moved = []
            for t in pending:
                try:
                    sch.compute_at(block_of(sch, t), row)
                    moved.append(t)
                except ScheduleError:
                    pass
            if not moved:
                break
            pending = [t for t in pending if t not in moved]
    for t in [out] + stages:
        block = block_of(sch, t)
        if t is out or not _is_reduction(t):
            _vectorize_inner(sch, block, target, t.dtype)
    size = 1
    for d in const_shape(out):
        size *= d
    if row is not None and size >= PARALLEL_MIN_ELEMENTS and (loop_extent(sch, row) or 0) >= 2:
        try:
            sch.parallel(row)
        except ScheduleError:
            pass


def _is_reduction(t):
    from irlab.te.reduction import Reduce

    return isinstance(t.op.body[0], Reduce)


def schedule_layer_norm(sch, outs, target):
    out = outs[0]
    schedule_rows(sch, out, target, row_axis(out, len(out.shape) - 1))


def schedule_instance_norm(sch, outs, target):
    out = outs[0]
    ndim = len(out.shape)
    axis = int(out.op.attrs.get("axis", 1)) if out.op.attrs else 1
    rows = 2 if axis == 1 else 1
    schedule_rows(sch, out, target, min(rows, ndim))


__all__ = ["schedule_rows", "schedule_layer_norm", "schedule_instance_norm"]
