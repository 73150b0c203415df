"""How big a PrimFunc is, for the pass instruments' before/after counts (``module_counts``)."""

from __future__ import annotations

from collections import Counter

from irlab.instrument import register_node_counter
from irlab.tir.function import PrimFunc
from irlab.tir.functor import post_order_visit

_COUNTED = {"For": "loops", "Block": "blocks", "BufferStore": "stores", "Allocate": "allocates"}


def count_nodes(func: PrimFunc, ops: Counter) -> int:
    """Statements and expressions of ``func``; adds its loops, blocks, stores and allocates
    to ``ops``."""
    count = 0

    def visit(node):
        nonlocal count
        count += 1
        kind = _COUNTED.get(type(node).__name__)
        if kind is not None:
            ops[kind] += 1
    post_order_visit(func.body, visit)
    return count


register_node_counter(PrimFunc, count_nodes)
