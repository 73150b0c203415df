"""Small helpers shared by the TOPI computes."""

from __future__ import annotations

from irlab.tir import expr as E


def const_shape(tensor) -> tuple:
    """The shape of a TE tensor as Python ints (TOPI's computes need static shapes)."""
    out = []
    for dim in tensor.shape:
        if not isinstance(dim, E.IntImm):
            raise ValueError(f"tensor {tensor.op.name}: dimension {dim} is not a constant")
        out.append(int(dim.value))
    return tuple(out)


def get_const_tuple(values) -> tuple:
    return tuple(int(v.value) if isinstance(v, E.IntImm) else int(v) for v in values)
