"""Loop kinds and annotations: parallel, vectorize, unroll, bind, annotate, unannotate."""

from __future__ import annotations

from irlab.tir import stmt as S
from irlab.tir.schedule.errors import ScheduleError
from irlab.tir.schedule.primitives_getters import child_realizes, replace, uses_var, walk


def _check_data_parallel(loop, what):
    """Parallel/vector/thread loops must not drive a reduction iter of any block below."""
    for node, _ in walk(loop.body):
        if not isinstance(node, S.BlockRealize):
            continue
        for iv, value in zip(node.block.iter_vars, node.iter_values):
            if iv.iter_type != S.IterVar.DataPar and uses_var(value, loop.loop_var):
                raise ScheduleError(
                    f"cannot {what} loop {loop.loop_var.name_hint}: it is bound to the "
                    f"reduction iter {iv.var.name_hint} of block {node.block.name_hint}")
    if not child_realizes(loop) and what != "unroll":
        raise ScheduleError(f"cannot {what} loop {loop.loop_var.name_hint}: no block under it")


# One Var per thread tag: structural equality treats an IterVar's var as free, so replaying a
# trace must reuse the same variable to give an equal module (TVM defines it in the IterVar).
_THREAD_VARS = {}


def _thread_var(tag, dtype):
    from irlab.tir.expr import Var

    return _THREAD_VARS.setdefault((tag, dtype), Var(tag, dtype))


def set_kind(func, loop, kind, what, thread_axis=None):
    """``loop`` turned into a loop of ``kind`` (checked to be data parallel)."""
    if kind != S.ForKind.UNROLLED:
        _check_data_parallel(loop, what)
    binding = None
    if thread_axis is not None:
        binding = S.IterVar(None, _thread_var(thread_axis, loop.loop_var.dtype),
                            S.IterVar.ThreadIndex, thread_axis)
    new = S.For(loop.loop_var, loop.min, loop.extent, kind, loop.body, binding,
                loop.annotations)
    return replace(func, loop, new)


def annotate(func, node, key, value):
    """``node`` (a For or a BlockRealize's block) with annotation ``key`` = ``value``."""
    if isinstance(node, S.BlockRealize):
        block = node.block
        anns = dict(block.annotations)
        anns[key] = value
        return replace(func, block, block.with_fields(annotations=S._freeze(anns)))
    anns = dict(node.annotations)
    anns[key] = value
    return replace(func, node, node.with_fields(annotations=S._freeze(anns)))


def unannotate(func, node, key):
    """``node`` without annotation ``key``."""
    target = node.block if isinstance(node, S.BlockRealize) else node
    anns = dict(target.annotations)
    if key not in anns:
        raise ScheduleError(f"no annotation {key!r} to remove")
    del anns[key]
    return replace(func, target, target.with_fields(annotations=S._freeze(anns)))
