"""Activations in TE: ``relu``, ``leaky_relu``, and inference ``dropout`` (the identity plus an
all-ones mask)."""

from __future__ import annotations

from irlab import te
from irlab.tir import op as O


def relu(x):
    zero = O.const(0, x.dtype)
    return te.compute(x.shape, lambda *i: O.max(x(*i), zero), name="T_relu", tag="elemwise")


def leaky_relu(x, alpha):
    zero = O.const(0, x.dtype)
    a = O.const(alpha, x.dtype)

    def body(*i):
        v = x(*i)
        return te.if_then_else(v > zero, v, v * a)

    return te.compute(x.shape, body, name="T_leaky_relu", tag="elemwise")


def dropout(x):
    """(output, mask) at inference."""
    out = te.compute(x.shape, lambda *i: x(*i), name="T_dropout", tag="elemwise")
    one = O.const(1, x.dtype)
    mask = te.compute(x.shape, lambda *i: one, name="T_dropout_mask", tag="elemwise")
    return [out, mask]


__all__ = ["relu", "leaky_relu", "dropout"]
