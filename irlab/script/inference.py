"""Reads/writes of a block whose script omits ``T.reads``/``T.writes`` (as TVM's parser).

Each access index is split into ``outer + [lo, hi]`` where ``outer`` has no loop var of the
block body and ``[lo, hi]`` is the constant range the inner loops sweep; accesses of one
buffer are unioned per dimension (falling back to the whole dimension when they disagree).
Following TVM's GetBlockReadWriteRegion, a block with ``T.init()`` does not list the buffers
it writes among its reads.
"""

from __future__ import annotations

from irlab.ir import structural_equal
from irlab.tir import expr as E
from irlab.tir import op as _op
from irlab.tir import stmt as S
from irlab.tir.buffer import BufferRegion, Range
from irlab.tir.functor import post_order_visit, substitute

_FULL = "full"


def contains_block(stmt) -> bool:
    found = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, S.BlockRealize) else None)
    return bool(found)


def infer_regions(body, init, local_ids):
    """(reads, writes) BufferRegions of a block body (``local_ids``: its own buffers)."""
    reads, writes = {}, {}
    order_r, order_w = [], []

    def add(table, order, buffer, dims):
        if id(buffer) in local_ids:
            return
        if id(buffer) not in table:
            table[id(buffer)] = (buffer, [])
            order.append(id(buffer))
        table[id(buffer)][1].append(dims)

    def exprs(e, loops):
        def visit(n):
            if isinstance(n, E.BufferLoad):
                add(reads, order_r, n.buffer, [_split(i, loops) for i in n.indices])
        post_order_visit(e, visit)

    def walk(s, loops):
        if s is None:
            return
        if isinstance(s, S.SeqStmt):
            for x in s.seq:
                walk(x, loops)
        elif isinstance(s, S.For):
            exprs(s.min, loops)
            exprs(s.extent, loops)
            inner = dict(loops)
            inner[id(s.loop_var)] = (s.min, s.extent)
            walk(s.body, inner)
        elif isinstance(s, S.BufferStore):
            exprs(s.value, loops)
            for i in s.indices:
                exprs(i, loops)
            add(writes, order_w, s.buffer, [_split(i, loops) for i in s.indices])
        elif isinstance(s, S.BlockRealize):
            b = s.block
            vmap = {iv.var: v for iv, v in zip(b.iter_vars, s.iter_values)}
            for r in b.reads:
                add(reads, order_r, r.buffer, _region_dims(r, vmap, loops))
            for r in b.writes:
                add(writes, order_w, r.buffer, _region_dims(r, vmap, loops))
        elif isinstance(s, (S.IfThenElse, S.While)):
            exprs(s.condition, loops)
            for child in (getattr(s, "then_case", None), getattr(s, "else_case", None),
                          getattr(s, "body", None)):
                walk(child, loops)
        elif isinstance(s, (S.LetStmt, S.AttrStmt, S.AssertStmt)):
            exprs(s.value if not isinstance(s, S.AssertStmt) else s.condition, loops)
            walk(s.body, loops)
        elif isinstance(s, (S.Allocate, S.DeclBuffer)):
            walk(s.body, loops)
        elif isinstance(s, S.Evaluate):
            exprs(s.value, loops)

    walk(init, {})
    walk(body, {})
    written = set(order_w) if init is not None else set()
    out_r = [_union(*reads[k]) for k in order_r if k not in written]
    out_w = [_union(*writes[k]) for k in order_w]
    return out_r, out_w


def _region_dims(region, vmap, loops):
    dims = []
    for r in region.region:
        lo = substitute(r.min, vmap) if vmap else r.min
        if isinstance(r.extent, E.IntImm):
            part = _split(lo, loops)
            if part is _FULL:
                dims.append(_FULL)
            else:
                dims.append((part[0], part[1], part[2] + r.extent.value - 1))
        else:
            dims.append(_FULL)
    return dims


def _has_inner(e, loops) -> bool:
    hit = []
    post_order_visit(e, lambda n: hit.append(n) if id(n) in loops else None)
    return bool(hit)


def _split(e, loops):
    """``(outer, lo, hi)``: e ranges over ``outer + [lo, hi]``; ``_FULL`` when unknown."""
    if not _has_inner(e, loops):
        if isinstance(e, E.IntImm):
            return (None, e.value, e.value)
        return (e, 0, 0)
    if isinstance(e, E.Var):
        lo, ext = loops[id(e)]
        if isinstance(lo, E.IntImm) and isinstance(ext, E.IntImm):
            return (None, lo.value, lo.value + ext.value - 1)
        return _FULL
    if isinstance(e, (E.Add, E.Sub)):
        a, b = _split(e.a, loops), _split(e.b, loops)
        if a is _FULL or b is _FULL:
            return _FULL
        if isinstance(e, E.Add):
            return (_join(a[0], b[0], _op.add), a[1] + b[1], a[2] + b[2])
        if b[0] is not None:
            return _FULL
        return (a[0], a[1] - b[2], a[2] - b[1])
    if isinstance(e, E.Mul) and isinstance(e.b, E.IntImm) and e.b.value >= 0:
        a = _split(e.a, loops)
        if a is _FULL:
            return _FULL
        c = e.b.value
        return (None if a[0] is None else _op.multiply(a[0], c), a[1] * c, a[2] * c)
    return _FULL


def _join(x, y, fn):
    if x is None:
        return y
    if y is None:
        return x
    return fn(x, y)


def _union(buffer, accesses):
    ranges = []
    for d, extent in enumerate(buffer.shape):
        parts = [acc[d] for acc in accesses]
        first = parts[0]
        ok = first is not _FULL and all(
            p is not _FULL and (p[0] is first[0] or (p[0] is not None and first[0] is not None
                                                     and structural_equal(p[0], first[0])))
            for p in parts)
        if not ok:
            ranges.append(Range.from_min_extent(E.convert(0, extent.dtype), extent))
            continue
        lo = min(p[1] for p in parts)
        hi = max(p[2] for p in parts)
        outer = first[0]
        dtype = outer.dtype if outer is not None else extent.dtype
        if outer is None:
            start = E.IntImm(dtype, lo)
        elif lo == 0:
            start = outer
        else:
            start = _op.add(outer, lo)
        ranges.append(Range.from_min_extent(start, E.IntImm(dtype, hi - lo + 1)))
    return BufferRegion(buffer, ranges)
