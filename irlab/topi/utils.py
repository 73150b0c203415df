"""Small helpers shared by the TOPI computes."""

from __future__ import annotations

import weakref

from irlab.tir import expr as E

# schedule -> {te Operation: block name}, filled by LowerTE (block names are made unique,
# so two ``T_add`` stages become blocks ``T_add`` and ``T_add_1``)
_te_blocks: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def block_of(sch, tensor):
    """The block computing ``tensor`` in ``sch`` (LowerTE's names, else the op's name)."""
    names = _te_blocks.get(sch)
    name = names.get(tensor.op) if names else None
    return sch.get_block(name or tensor.op.name)


def loop_extent(sch, loop):
    """The extent of ``loop`` in ``sch`` as an int, or None when it is not a constant."""
    value = sch.get(loop).extent
    return int(value.value) if hasattr(value, "value") else None


def const_shape(tensor) -> tuple:
    """The shape of a TE tensor as Python ints (TOPI's computes need static shapes)."""
    out = []
    for dim in tensor.shape:
        if not isinstance(dim, E.IntImm):
            raise ValueError(f"tensor {tensor.op.name}: dimension {dim} is not a constant")
        out.append(int(dim.value))
    return tuple(out)


def dims(tensor) -> tuple:
    """The shape of a TE tensor: Python ints where constant, PrimExprs where symbolic (the
    generic computes that accept symbolic shapes use this instead of ``const_shape``)."""
    return tuple(int(d.value) if isinstance(d, E.IntImm) else d for d in tensor.shape)


def is_const(dim) -> bool:
    """True when a dim (int or PrimExpr) is a known constant."""
    return isinstance(dim, int) or isinstance(dim, E.IntImm)


def dims_equal(a, b) -> bool:
    """True when two dims are provably equal (same constant, same expression)."""
    if is_const(a) and is_const(b):
        return int(getattr(a, "value", a)) == int(getattr(b, "value", b))
    if is_const(a) or is_const(b):
        return False
    if a is b:
        return True
    from irlab.arith import Analyzer

    return Analyzer().can_prove_equal(a, b)


def prod(values):
    """The product of dims (an int when all are constant, else a PrimExpr)."""
    out = 1
    for v in values:
        out = out * v if not (isinstance(out, int) and out == 1) else v
    return out


def get_const_tuple(values) -> tuple:
    return tuple(int(v.value) if isinstance(v, E.IntImm) else int(v) for v in values)
