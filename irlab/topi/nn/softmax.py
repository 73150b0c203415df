"""Softmax and log-softmax in TE (TVM's ``topi.nn.softmax``): a max stage (the overflow
guard), an exp stage, a sum stage and the normalizing output stage, each reducing or mapping
along ``axis``."""

from __future__ import annotations

from irlab import te
from irlab.tir import op as O
from irlab.topi.utils import dims


def _reduce_shape(shape, axis):
    return tuple(d for i, d in enumerate(shape) if i != axis)


def _with_axis(idx, axis, value):
    idx = list(idx)
    idx.insert(axis, value)
    return tuple(idx)


def _drop(idx, axis):
    return tuple(v for i, v in enumerate(idx) if i != axis)


def _max_stage(x, axis, name):
    shape = dims(x)
    k = te.reduce_axis((0, shape[axis]), name="k")
    return te.compute(_reduce_shape(shape, axis),
                      lambda *i: te.max(x(*_with_axis(i, axis, k)), axis=k),
                      name=f"{name}_maxelem", tag=f"{name}_maxelem")


def softmax(x, axis=-1, name="T_softmax"):
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``."""
    shape = dims(x)
    axis = axis % len(shape)
    mx = _max_stage(x, axis, name)
    ex = te.compute(shape, lambda *i: O.exp(x(*i) - mx(*_drop(i, axis))), name=f"{name}_exp",
                    tag=f"{name}_exp")
    k = te.reduce_axis((0, shape[axis]), name="k")
    sm = te.compute(_reduce_shape(shape, axis),
                    lambda *i: te.sum(ex(*_with_axis(i, axis, k)), axis=k),
                    name=f"{name}_expsum", tag=f"{name}_expsum")
    return te.compute(shape, lambda *i: ex(*i) / sm(*_drop(i, axis)), name=f"{name}_norm",
                      tag="softmax_output", attrs={"axis": axis})


def fast_softmax(x, axis=-1):
    """Softmax (irlab computes it with the exact exp)."""
    return softmax(x, axis, name="T_fast_softmax")


def log_softmax(x, axis=-1, name="T_log_softmax"):
    """``x - max - log(sum(exp(x - max)))`` along ``axis``."""
    shape = dims(x)
    axis = axis % len(shape)
    mx = _max_stage(x, axis, name)
    k = te.reduce_axis((0, shape[axis]), name="k")
    sm = te.compute(_reduce_shape(shape, axis),
                    lambda *i: te.sum(O.exp(x(*_with_axis(i, axis, k)) - mx(*i)), axis=k),
                    name=f"{name}_expsum", tag=f"{name}_expsum")
    return te.compute(shape, lambda *i: x(*i) - mx(*_drop(i, axis)) - O.log(sm(*_drop(i, axis))),
                      name=f"{name}_out", tag="log_softmax_output", attrs={"axis": axis})


__all__ = ["softmax", "fast_softmax", "log_softmax"]
