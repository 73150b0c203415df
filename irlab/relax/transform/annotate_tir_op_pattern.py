"""AnnotateTIROpPattern: each PrimFunc gets the fusion pattern of what it computes
(``op_pattern`` attr, an ``OpPattern`` int) for ``FuseOps``.

Per block: a reduction whose update is ``out += a * b`` is ``OUT_ELEMWISE_FUSABLE`` (a
matmul / conv anchor), another reduction ``COMM_REDUCE``; a block whose loads all use the
store's indices is ``ELEMWISE``, whose loads use sub-sequences of them ``BROADCAST``, any other
``INJECTIVE``. The function's pattern is the largest of its blocks'::

    @T.prim_func def add(A, B, C): C[i, j] = A[i, j] + B[j]     # attrs {"op_pattern": 1}
"""

from __future__ import annotations

from irlab.ir.op import OpPattern
from irlab.ir.structural import structural_equal
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.function import PrimFunc
from irlab.tir.functor import post_order_visit
from irlab.transform import module_pass

__all__ = ["AnnotateTIROpPattern", "analyze_op_pattern"]


def _blocks(func) -> list:
    found = []

    def visit(node):
        if isinstance(node, S.Block) and node.name_hint != "root":
            found.append(node)

    post_order_visit(func.body, visit)
    return found


def _stores_and_loads(block):
    stores, loads = [], []

    def visit(node):
        if isinstance(node, S.BufferStore):
            stores.append(node)
        elif isinstance(node, E.BufferLoad):
            loads.append(node)

    post_order_visit(block.body, visit)
    return stores, loads


def _same_indices(a, b) -> bool:
    return len(a) == len(b) and all(structural_equal(x, y) for x, y in zip(a, b))


def _is_subsequence(load, store) -> bool:
    """``load``'s indices are store indices (bare variables), in the same order."""
    pos = 0
    for index in load:
        if isinstance(index, E.IntImm):
            continue
        while pos < len(store) and not structural_equal(store[pos], index):
            pos += 1
        if pos == len(store):
            return False
        pos += 1
    return True


def _is_fma(store, loads) -> bool:
    """``out[i] = out[i] + x * y`` (possibly with casts)."""
    value = store.value
    if not isinstance(value, E.Add):
        return False
    terms = [value.a, value.b]
    own = [t for t in terms if isinstance(t, E.BufferLoad) and t.buffer is store.buffer]
    other = [t for t in terms if t not in own]
    while other and isinstance(other[0], E.Cast):
        other = [other[0].value]
    return len(own) == 1 and len(other) == 1 and isinstance(other[0], E.Mul)


def _block_pattern(block) -> OpPattern:
    stores, loads = _stores_and_loads(block)
    if len(stores) != 1:
        return OpPattern.OPAQUE if not stores else OpPattern.INJECTIVE
    store = stores[0]
    if block.init is not None:
        return OpPattern.OUT_ELEMWISE_FUSABLE if _is_fma(store, loads) \
            else OpPattern.COMM_REDUCE
    reads = [ld for ld in loads if ld.buffer is not store.buffer]
    if all(_same_indices(ld.indices, store.indices) for ld in reads):
        return OpPattern.ELEMWISE
    if all(_is_subsequence(ld.indices, store.indices) for ld in reads):
        return OpPattern.BROADCAST
    return OpPattern.INJECTIVE


def analyze_op_pattern(func: PrimFunc) -> OpPattern:
    """The fusion pattern of a block-form PrimFunc (OPAQUE when it has no blocks)."""
    blocks = _blocks(func)
    if not blocks:
        return OpPattern.OPAQUE
    return max(_block_pattern(b) for b in blocks)


def AnnotateTIROpPattern():  # noqa: N802 (TVM's name)
    """Annotate every PrimFunc with its ``op_pattern``."""

    def transform(mod, ctx):
        new = mod.copy()
        for gv, func in mod.items():
            if isinstance(func, PrimFunc):
                new[gv] = func.with_attr("op_pattern", int(analyze_op_pattern(func)))
        return new

    return module_pass(transform, opt_level=0, name="AnnotateTIROpPattern")
