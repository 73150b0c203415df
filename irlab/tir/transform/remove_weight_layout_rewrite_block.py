"""RemoveWeightLayoutRewriteBlock: drop the copy blocks that lay a weight out anew, so the
function takes the weight in the new layout (TVM's pass of the same name).

MetaSchedule's ``RewriteLayout`` reads a layout-free parameter ``W`` through a copy
``W_global[f(v)] = W[v]`` in a block annotated ``meta_schedule.layout_rewrite_preproc``.
When ``W`` is a constant, that copy can run once at build time instead of on every call:

    before: main(A, W[64, 32], C):  W_global = alloc((4, 8, 2, 4, 8))
                                    for v0, v1: W_global[f(v0, v1)] = W[v0, v1]
                                    ... reads W_global ...
    after:  main(A, W_global[4, 8, 2, 4, 8], C): ... reads W_global ...

``remove_weight_layout_rewrite_block(func)`` returns the new function and, per parameter
index, the ``IndexMap`` ``f`` (its ``map_ndarray`` transforms the constant).
"""

from __future__ import annotations

from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.function import PrimFunc
from irlab.tir.schedule.primitives_layout import IndexMap
from irlab.tir.text import expr_to_text

PREPROC_ATTR = "meta_schedule.layout_rewrite_preproc"


def _preproc_block(stmt):
    """The block of a loop nest holding only a layout-rewrite copy, else None."""
    while isinstance(stmt, S.For):
        stmt = stmt.body
    if not isinstance(stmt, S.BlockRealize):
        return None
    block = stmt.block
    if PREPROC_ATTR not in dict(block.annotations) or len(block.reads) != 1 \
            or len(block.writes) != 1 or not isinstance(block.body, S.BufferStore):
        return None
    return block


def _index_map(block):
    """``f`` of ``dst[f(v)] = src[v]``, None when the copy reads other than ``src[v]``."""
    store = block.body
    load = store.value
    vs = [iv.var for iv in block.iter_vars]
    if not isinstance(load, E.BufferLoad) or len(load.indices) != len(vs) \
            or any(i is not v for i, v in zip(load.indices, vs)):
        return None
    body = ", ".join(expr_to_text(e) for e in store.indices)
    return IndexMap(f"lambda {', '.join(v.name for v in vs)}: ({body},)")


def remove_weight_layout_rewrite_block(func: PrimFunc):
    """``(func without its layout-rewrite copies, {param index: IndexMap})``; ``func`` as it
    is and ``{}`` when it has none."""
    root = func.body
    if not isinstance(root, S.BlockRealize) or not isinstance(root.block.body, S.SeqStmt):
        return func, {}
    params = {id(b): i for i, (_, b) in enumerate(func.buffer_map.items())}
    keep, maps, swap = [], {}, {}
    for stmt in root.block.body.seq:
        block = _preproc_block(stmt)
        imap = None if block is None else _index_map(block)
        src = None if block is None else block.reads[0].buffer
        dst = None if block is None else block.writes[0].buffer
        if imap is None or id(src) not in params \
                or dst not in root.block.alloc_buffers:
            keep.append(stmt)
            continue
        maps[params[id(src)]] = imap
        swap[id(src)] = dst
    if not maps:
        return func, {}
    allocs = tuple(b for b in root.block.alloc_buffers if b not in swap.values())
    body = keep[0] if len(keep) == 1 else S.SeqStmt(keep)
    new_root = root.with_fields(block=root.block.with_fields(body=body, alloc_buffers=allocs))
    buffer_map = [(p, swap.get(id(b), b)) for p, b in func.buffer_map.items()]
    func = func.with_fields(body=new_root, buffer_map=type(func.buffer_map)(buffer_map))
    return func, maps


__all__ = ["remove_weight_layout_rewrite_block", "PREPROC_ATTR"]
