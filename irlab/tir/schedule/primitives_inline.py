"""compute_inline and reverse_compute_inline."""

from __future__ import annotations

from irlab.ir.structural import structural_equal
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.buffer import BufferRegion, Range
from irlab.tir.functor import (StmtExprMutator, child_fields, expr_children, post_order_visit,
                               substitute)
from irlab.tir.schedule.errors import ScheduleError
from irlab.tir.schedule.primitives_getters import (check_sole_writer, consumers, producers,
                                                   replace, walk)


def _is_param_buffer(func, buffer):
    return any(b is buffer for b in func.buffer_map.values())


def _simple_store(block, role):
    """The single BufferStore of a spatial, init-free block."""
    name = block.name_hint
    if block.init is not None or any(iv.iter_type != S.IterVar.DataPar
                                     for iv in block.iter_vars):
        raise ScheduleError(f"block {name} is a reduction block: it cannot be {role}")
    if not isinstance(block.body, S.BufferStore) or len(block.writes) != 1:
        raise ScheduleError(f"block {name} is not a single buffer store: it cannot be {role}")
    return block.body


def loads_of(node, buffer=None):
    """BufferLoads under ``node`` (of ``buffer`` when given), in visit order."""
    out = []

    def visit(n):
        if isinstance(n, E.BufferLoad) and (buffer is None or n.buffer is buffer):
            out.append(n)

    post_order_visit(node, visit)
    return out


def add_point_regions(regions, node, skip, writes=()):
    """``regions`` plus a point region for each load in ``node`` not already listed (loads of
    ``skip`` and of the written buffers are left out, as te's blocks do)."""
    out = list(regions)
    by_buffer = {}  # id(buffer) -> its regions in ``out`` (a consumer may read hundreds)
    simple = set()  # (id(buffer), _region_key) of the regions that have one
    for r in out:
        by_buffer.setdefault(id(r.buffer), []).append(r.region)
        key = _region_key(r.region)
        if key is not None:
            simple.add((id(r.buffer), key))
    written = {id(w.buffer) for w in writes}
    for load in loads_of(node):
        if load.buffer is skip or id(load.buffer) in written:
            continue
        key = _point_key(load.indices)
        if key is not None and (id(load.buffer), key) in simple:
            continue  # the common case, decided without structural_equal
        region = tuple(Range.from_min_extent(i, 1) for i in load.indices)
        known = by_buffer.setdefault(id(load.buffer), [])
        if not any(structural_equal(r, region) for r in known):
            out.append(BufferRegion(load.buffer, region))
            known.append(region)
            if key is not None:
                simple.add((id(load.buffer), key))
    return tuple(out)


def _atom_key(e):
    """A key equal for structurally equal variables and int constants (else None)."""
    if isinstance(e, E.Var):
        return e
    if isinstance(e, E.IntImm):
        return (e.dtype, e.value)
    return None


def _point_key(indices):
    keys = tuple(_atom_key(i) for i in indices)
    return None if any(k is None for k in keys) else tuple((k, ("int32", 1)) for k in keys)


def _region_key(region):
    keys = tuple((_atom_key(r.min), _atom_key(r.extent)) for r in region)
    return None if any(a is None or b is None for a, b in keys) else keys


class _ReplaceLoads(StmtExprMutator):
    def __init__(self, buffer, fn):
        super().__init__()
        self.buffer, self.fn = buffer, fn

    def visit_buffer_load(self, e):
        e = self._mutate_children(e)
        return self.fn(e) if e.buffer is self.buffer else e


def _drop_alloc(func, buffer):
    """Remove ``buffer`` from the block that allocates it once nothing uses it."""
    for node, _ in walk(func.body):
        if isinstance(node, S.Block) and any(b is buffer for b in node.alloc_buffers):
            allocs = tuple(b for b in node.alloc_buffers if b is not buffer)
            return replace(func, node, node.with_fields(alloc_buffers=allocs))
    return func


def compute_inline(func, realize):
    """Inline the spatial block of ``realize`` into every load of the buffer it writes."""
    block = realize.block
    store = _simple_store(block, "inlined")
    buffer = store.buffer
    if _is_param_buffer(func, buffer):
        raise ScheduleError(f"block {block.name_hint} writes the output buffer {buffer.name}: "
                            "it cannot be inlined")
    ivars = [iv.var for iv in block.iter_vars]
    if not all(isinstance(i, E.Var) for i in store.indices) or \
            len({id(i) for i in store.indices}) != len(store.indices) or \
            {id(i) for i in store.indices} != {id(v) for v in ivars}:
        raise ScheduleError(f"block {block.name_hint} stores to {buffer.name} at "
                            f"{list(store.indices)}: the indices must be its distinct iter vars")
    if loads_of(store.value, buffer):
        raise ScheduleError(f"block {block.name_hint} reads the buffer it writes")
    check_sole_writer(func, realize, "inlined")

    def inline(load):
        return substitute(store.value, dict(zip(store.indices, load.indices)))

    users = consumers(func, realize)
    func = replace(func, realize, None)
    mutator = _ReplaceLoads(buffer, inline)
    rewritten = set()  # ids of the new consumer blocks: they load the buffer no more
    for user in users:
        ublock = user.block
        new = mutator.visit_stmt(ublock)
        reads = tuple(r for r in ublock.reads if r.buffer is not buffer)
        reads = add_point_regions(reads, new.body, buffer, ublock.writes)
        new = new.with_fields(reads=reads)
        rewritten.add(id(new))
        func = replace(func, ublock, new)
    reader = _block_loading(func.body, buffer, rewritten)
    if reader is not None:
        raise ScheduleError(f"buffer {buffer.name} is read by block {reader.name_hint} "
                            "outside the scope of the inlined block")
    return _drop_alloc(func, buffer)


def _block_loading(body, buffer, skip):
    """A block (the outermost first) that itself loads ``buffer`` -- not counting what its
    nested blocks load -- other than the blocks whose ids are in ``skip`` and what is inside
    them; None if there is none. Inlining a chain stage by stage calls this once per stage:
    the consumer that grows with each stage is skipped, and the statements left unchanged
    by the stage (most of them) have their summaries remembered."""
    stack = [body] if isinstance(body, S.Block) else list(_summary(body)[1][::-1])
    while stack:
        block = stack.pop()
        if id(block) in skip:
            continue
        loaded, nested = _summary(block)
        if id(buffer) in loaded:
            return block
        stack.extend(reversed(nested))
    return None


# id(statement) -> (statement, its summary). Statements are immutable; the entry keeps its
# statement alive so that the id is not reused. A plain dict (get/set are atomic), emptied
# when full.
_SUMMARIES: dict = {}
_SUMMARIES_CAPACITY = 1 << 15


def _summary(stmt):
    """``(ids of the buffers loaded, blocks nested)`` of a statement -- of a block: of its
    own statements and expressions -- not looking into the nested blocks."""
    hit = _SUMMARIES.get(id(stmt))
    if hit is not None and hit[0] is stmt:
        return hit[1]
    loaded, nested = set(), []
    for name in child_fields(type(stmt)):
        value = getattr(stmt, name)
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, S.Block):
                nested.append(v)
            elif isinstance(v, S.Stmt):
                inner_loaded, inner_nested = _summary(v)
                loaded |= inner_loaded
                nested.extend(inner_nested)
            elif isinstance(v, E.PrimExpr):
                loaded.update(id(load.buffer) for load in _loads_in(v))
    summary = (frozenset(loaded), tuple(nested))
    if len(_SUMMARIES) >= _SUMMARIES_CAPACITY:
        _SUMMARIES.clear()
    _SUMMARIES[id(stmt)] = (stmt, summary)
    return summary


def _loads_in(expr):
    """The BufferLoads in an expression (each shared sub-expression looked at once)."""
    out, stack, seen = [], [expr], set()
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, E.BufferLoad):
            out.append(e)
        stack.extend(expr_children(e))
    return out


def reverse_compute_inline(func, realize):
    """Inline the spatial block of ``realize`` into its single producer."""
    block = realize.block
    store = _simple_store(block, "reverse-inlined")
    check_sole_writer(func, realize, "reverse-inlined")
    prods = producers(func, realize)
    if len(prods) != 1:
        raise ScheduleError(f"block {block.name_hint} has {len(prods)} producers; reverse "
                            "inlining needs exactly one")
    producer = prods[0]
    pstore = _simple_store(producer.block, "the producer of a reverse-inlined block")
    buffer = pstore.buffer
    if _is_param_buffer(func, buffer):
        raise ScheduleError(f"the producer {producer.block.name_hint} writes the function "
                            f"buffer {buffer.name}: it cannot be removed")
    if [c.block.name_hint for c in consumers(func, producer)] != [block.name_hint]:
        raise ScheduleError(f"buffer {buffer.name} has other consumers than "
                            f"{block.name_hint}")
    loads = loads_of(store.value, buffer)
    ivars = [iv.var for iv in block.iter_vars]
    first = loads[0].indices if loads else ()
    ok = loads and all(isinstance(i, E.Var) for i in first) and \
        len({id(i) for i in first}) == len(first) and \
        {id(i) for i in first} == {id(v) for v in ivars} and \
        all(all(a is b for a, b in zip(ld.indices, first)) for ld in loads)
    if not ok:
        raise ScheduleError(f"block {block.name_hint} must load {buffer.name} at exactly its "
                            f"iter vars (each once, everywhere the same) to be reverse-inlined")
    vmap = dict(zip(first, pstore.indices))
    value = _ReplaceLoads(buffer, lambda ld: pstore.value).visit_expr(store.value)
    value = substitute(value, vmap)
    new_store = S.BufferStore(store.buffer, value,
                              [substitute(i, vmap) for i in store.indices])
    pblock = producer.block
    writes = tuple(subst_region(w, vmap) for w in block.writes)
    reads = tuple(pblock.reads) + tuple(subst_region(r, vmap) for r in block.reads
                                        if r.buffer is not buffer)
    new_block = pblock.with_fields(body=new_store, writes=writes,
                                   reads=add_point_regions(_dedupe(reads), new_store.value,
                                                           buffer, writes))
    func = replace(func, pblock, new_block)
    func = replace(func, realize, None)
    return _drop_alloc(func, buffer)


def subst_region(region, vmap):
    """A BufferRegion with variables replaced."""
    return region.with_fields(region=tuple(
        Range.from_min_extent(substitute(r.min, vmap), substitute(r.extent, vmap))
        for r in region.region))


def _dedupe(regions):
    out = []
    for r in regions:
        if not any(o.buffer is r.buffer and structural_equal(o.region, r.region) for o in out):
            out.append(r)
    return tuple(out)
