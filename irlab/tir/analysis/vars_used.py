"""`vars_used`: the variables a TIR statement reads (what an outlined loop must receive)."""

from __future__ import annotations

from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.functor import post_order_visit


def vars_used(node) -> list:
    """Every Var ``node`` reads -- buffers' data, shape, stride and offset vars included --
    in first-use order (what an outlined parallel loop must receive from outside)."""
    found: dict = {}

    def add_buffer(buffer):
        found.setdefault(buffer.data, None)
        for e in (*buffer.shape, *buffer.strides, buffer.elem_offset):
            post_order_visit(e, visit)

    def visit(n):
        if isinstance(n, E.Var):
            found.setdefault(n, None)
        elif isinstance(n, (E.BufferLoad, S.BufferStore, S.DeclBuffer)):
            add_buffer(n.buffer)

    post_order_visit(node, visit)
    return list(found)


__all__ = ["vars_used"]
