"""`written_buffer_data`: the buffer data pointers a PrimFunc may write through."""

from __future__ import annotations

from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.functor import post_order_visit


def written_buffer_data(func) -> set:
    """The data Vars ``func`` may write through: stored to, in a block's writes or
    match_buffers, or used as a value (passed to a call, bound by a let), which may write. A
    parameter buffer whose data is only ever loaded from is safe to pass read-only; the rest
    is a conservative superset."""
    found: set = set()

    def visit(node):
        if isinstance(node, E.Var):
            found.add(node)
        elif isinstance(node, S.BufferStore):
            found.add(node.buffer.data)
        elif isinstance(node, S.Block):
            found.update(region.buffer.data for region in node.writes)
            found.update(match.source.buffer.data for match in node.match_buffers)

    post_order_visit(func.body, visit)
    return found
