"""cache_read and cache_write: stage a buffer through a new buffer in another scope.

The copy stage goes where TVM puts it: in the innermost statement sequence that holds the
buffer's producer and its first (cache_read) or first remaining (cache_write) consumer, right
before that consumer; it copies the region the producer writes as the loops between it and that
place run (the whole buffer when the stage sits at the top of the scope).
"""

from __future__ import annotations

from irlab.arith import Analyzer
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.buffer import BufferRegion, Range, decl_buffer
from irlab.tir.functor import StmtExprMutator, post_order_visit, substitute
from irlab.tir.schedule.errors import ScheduleError
from irlab.tir.schedule.primitives_compute_at import bound_over_loops
from irlab.tir.schedule.primitives_layout import IndexMap
from irlab.tir.schedule.primitives_getters import (find_block, find_path, replace, scope_of,
                                                   scope_realizes, stmt_children, walk)


SKIP, WALK, SWAP = "skip", "walk", "swap"


class _CacheRewriter(StmtExprMutator):
    """Redirects ``old`` to ``new`` block by block: ``mode_of(block)`` says whether a block is
    left as is (SKIP, with all it holds), only walked into (WALK) or has its accesses of
    ``old`` moved to ``new`` (SWAP: loads, and stores when ``stores``; its signature too)."""

    def __init__(self, old, new, mode_of, stores, indices=None):
        super().__init__()
        self.old, self.new, self.mode_of, self.stores = old, new, mode_of, stores
        self.indices = indices  # reindexing: every moved access uses these (block vars)
        self.mode = WALK

    def visit_var(self, v):
        return self.new.data if v is self.old.data else v

    def _moved(self, access):
        if self.indices is None:
            return access.with_fields(buffer=self.new)
        return access.with_fields(buffer=self.new, indices=tuple(self.indices))

    def visit_buffer_load(self, e):
        e = self._mutate_children(e)
        return self._moved(e) if self.mode == SWAP and e.buffer is self.old else e

    def visit_buffer_store(self, s):
        s = self._mutate_stmt_children(s)
        return self._moved(s) if self.mode == SWAP and self.stores and s.buffer is self.old \
            else s

    def visit_block(self, block):
        mode = self.mode_of(block)
        if mode == SKIP:
            return block
        saved, self.mode = self.mode, mode
        self.memo_map = {}  # a load's rewrite depends on the block it is in
        try:
            new = self._mutate_stmt_children(block)
        finally:
            self.mode, self.memo_map = saved, {}
        if mode != SWAP:
            return new
        return new.with_fields(reads=self._regions(new.reads),
                               writes=self._regions(new.writes) if self.stores else new.writes,
                               match_buffers=self._matches(new.match_buffers))

    def _regions(self, regions):
        return tuple(self._moved_region(r) if r.buffer is self.old else r for r in regions)

    def _moved_region(self, r):
        if self.indices is None:
            return r.with_fields(buffer=self.new)
        return BufferRegion(self.new, _points(self.indices))

    def _matches(self, matches):
        return tuple(m.with_fields(source=m.source.with_fields(buffer=self.new))
                     if m.source.buffer is self.old else m for m in matches)


def _points(indices):
    return tuple(Range.from_min_extent(i, E.IntImm(i.dtype, 1)) for i in indices)


def _unique_name(func, name):
    taken = {n.block.name_hint for n, _ in walk(func.body) if isinstance(n, S.BlockRealize)}
    out, k = name, 0
    while out in taken:
        k += 1
        out = f"{name}_{k}"
    return out


def _copy_nest(name, region, src, dst):
    """Loops ax0.. over ``region`` (a tuple of Ranges of ``src``'s shape) and a block copying
    ``src`` into ``dst`` point by point; block iters span the whole buffer, as TVM's do."""
    loops, values = [], []
    for d, r in enumerate(region):
        ax = E.Var(f"ax{d}", r.extent.dtype)
        loops.append((ax, r.extent))
        values.append(ax if isinstance(r.min, E.IntImm) and r.min.value == 0 else r.min + ax)
    ivars = [E.Var(f"v{d}", s.dtype) for d, s in enumerate(src.shape)]
    point = tuple(Range.from_min_extent(v, E.IntImm(v.dtype, 1)) for v in ivars)
    block = S.Block([S.IterVar(Range.from_min_extent(E.IntImm(s.dtype, 0), s), v,
                               S.IterVar.DataPar) for v, s in zip(ivars, src.shape)],
                    [BufferRegion(src, point)], [BufferRegion(dst, point)], name,
                    S.BufferStore(dst, E.BufferLoad(src, ivars), ivars))
    stmt = S.BlockRealize(values, E.IntImm("bool", 1), block)
    for ax, extent in reversed(loops):
        stmt = S.For(ax, E.IntImm(extent.dtype, 0), extent, S.ForKind.SERIAL, stmt)
    return stmt, block


class _Placement:
    """Where the copy stage goes: (node whose body receives it, position in that body).

    Walks the scope in program order. A statement sequence holding the producer (``writer``)
    and, after it, a ``related`` block gets the stage right before the child that holds the
    first such block; with no producer seen, the stage opens the scope."""

    def __init__(self, scope, writer, related):
        self.scope, self.writer, self.related = scope, writer, related
        self.seen_writer = self.seen_related = False
        self.node, self.pos = None, -1

    def find(self):
        self._visit(self.scope)
        return self.node, self.pos

    def _visit(self, node):
        if isinstance(node, S.SeqStmt):
            self._visit_seq(node)
        elif isinstance(node, S.Block):
            self._visit_block(node)
        else:
            for _, _, child in stmt_children(node):
                self._visit(child)
            if isinstance(node, S.For) and self.seen_writer and self.seen_related \
                    and self.node is None and self.pos != -1:
                self.node = node

    def _visit_seq(self, seq):
        outer_seen = self.seen_writer
        self.seen_writer = False
        for i, child in enumerate(seq.seq):
            if self.pos != -1:
                break
            self._visit(child)
            if self.seen_writer and self.seen_related and self.pos == -1:
                self.pos = i
                break
            if self.seen_related:
                break
        self.seen_writer = self.seen_writer or outer_seen

    def _visit_block(self, block):
        if block is self.scope:
            for _, _, child in stmt_children(block):
                self._visit(child)
            if self.seen_related and self.node is None:
                self.node = block
                if not self.seen_writer and self.pos == -1:
                    self.pos = 0
        elif block is self.writer:
            self.seen_writer = True
        elif block in self.related:
            self.seen_related = True


def _placement(scope, writer, related):
    """(node, position) of the copy stage (see ``_Placement``); with no related block, the
    end of the scope."""
    if related:
        node, pos = _Placement(scope, writer, related).find()
        if node is not None and pos != -1:
            return node, pos
    body = _unwrap(scope.body)
    return scope, len(body.seq) if isinstance(body, S.SeqStmt) else 1


def _relaxed_region(func, realize, buffer, regions, place):
    """The region of ``buffer`` in ``regions`` (of block ``realize``) as the loops between
    ``realize`` and ``place`` run; a dimension that cannot be bounded covers the buffer."""
    region = next(r for r in regions if r.buffer is buffer)
    path = find_path(func, realize)
    start = next((i for i, n in enumerate(path) if n is place), None)
    if start is None:  # the stage is not above the block: every loop of its scope runs
        start = max(i for i, n in enumerate(path) if isinstance(n, S.Block))
    inner = [n for n in path[start + 1:] if isinstance(n, S.For)]
    bind = dict(zip([iv.var for iv in realize.block.iter_vars], realize.iter_values))
    analyzer = Analyzer()
    out = []
    for r, dim in zip(region.region, buffer.shape):
        try:
            lo = bound_over_loops(substitute(r.min, bind), inner, analyzer)[0]
            hi = bound_over_loops(substitute(r.min + r.extent - 1, bind), inner, analyzer)[1]
        except ScheduleError:
            out.append(Range.from_min_extent(E.IntImm(dim.dtype, 0), dim))
            continue
        lo, hi = _clip(lo, hi, dim)
        out.append(Range.from_min_extent(lo, analyzer.simplify(hi - lo + 1)))
    return tuple(out)


def _clip(lo, hi, dim):
    """[lo, hi] within a dimension of extent ``dim`` where both are constants: accesses
    stay in bounds, so a guard (a block predicate) never lets the region leave them."""
    if isinstance(lo, E.IntImm) and lo.value < 0:
        lo = E.IntImm(lo.dtype, 0)
    if isinstance(hi, E.IntImm) and isinstance(dim, E.IntImm) and hi.value >= dim.value:
        hi = E.IntImm(hi.dtype, dim.value - 1)
    return lo, hi


_WRAPPERS = (S.AllocateConst, S.DeclBuffer)  # scopes a stage goes under, not next to


def _unwrap(body):
    """The statement under a chain of constant allocations and buffer declarations."""
    while isinstance(body, _WRAPPERS):
        body = body.body
    return body


def _insert_at(node, pos, stage):
    """``node`` (a For or Block) with ``stage`` inserted at ``pos`` of its body (inside the
    constant allocations and buffer declarations that open it)."""

    def insert(body):
        if isinstance(body, _WRAPPERS):
            return body.with_fields(body=insert(body.body))
        seq = list(body.seq) if isinstance(body, S.SeqStmt) else [body]
        seq.insert(pos, stage)
        return S.SeqStmt(seq)

    return node.with_fields(body=insert(node.body))


def _with_children(node, fn):
    """``node`` with each statement child replaced by ``fn(child)`` (copy-on-write)."""
    fields = {}
    for name, index, child in stmt_children(node):
        got = fn(child)
        if got is child:
            continue
        if index is None:
            fields[name] = got
        else:
            value = list(fields.get(name, getattr(node, name)))
            value[index] = got
            fields[name] = tuple(value)
    return node.with_fields(**fields) if fields else node


def _stage_scope(scope, place, pos, stage, stage_block, cache, rewriter):
    """The scope block with the stage inserted at (``place``, ``pos``), every block under it
    rewritten by ``rewriter`` (the stage excepted) and the cache allocated.

    ``place`` is the scope or a loop above the producer: no block lies between it and the
    scope, so the blocks ``rewriter`` tells apart by identity are still the original ones."""

    def insert(node):
        if node is place:
            return _insert_at(node, pos, stage)
        return _with_children(node, insert)

    new = insert(scope)
    mode_of = rewriter.mode_of
    rewriter.mode_of = lambda b: SKIP if b is stage_block else mode_of(b)
    new = rewriter._mutate_stmt_children(new)
    return new.with_fields(alloc_buffers=new.alloc_buffers + (cache,))


# Storage scope ranks a cache buffer may live in (a rank may carry a ``.tag``).
_SCOPE_RANKS = ("global", "shared", "warp", "local", "wmma", "metal", "amx", "texture")


def _check_storage_scope(storage_scope):
    rank = str(storage_scope).split(".", 1)[0]
    if rank not in _SCOPE_RANKS:
        raise ScheduleError(f"unknown storage scope {storage_scope!r}: expected one of "
                            f"{', '.join(_SCOPE_RANKS)} (optionally with a '.tag')")


def _scope(func, realize):
    scope = scope_of(func, realize)
    if scope is None:
        raise ScheduleError(f"block {realize.block.name_hint} has no scope block to hold a "
                            "cache buffer")
    return scope


def _with_nested(func, names, buf):
    """The blocks named in ``names`` (each must read ``buf``) and every block under them."""
    out = set()
    for name in names:
        realize = find_block(func, name)
        if not _reads(realize.block, buf):
            raise ScheduleError(f"the consumer blocks {sorted(names)} do not all read "
                                f"{buf.name}: {name} does not")
        for node, _ in walk(realize):
            if isinstance(node, S.Block):
                out.add(node)
    return out


def _writes(block, buf):
    return any(w.buffer is buf for w in block.writes)


def _reads(block, buf):
    return any(r.buffer is buf for r in block.reads)


def _cache_buffer(func, buf, storage_scope):
    name = f"{buf.name}_{storage_scope}"
    return decl_buffer(buf.shape, buf.dtype, name, scope=storage_scope), \
        _unique_name(func, name)


def _finish(func, scope, place, pos, region, src, dst, cache, name, rewriter):
    stage, stage_block = _copy_nest(name, region, src, dst)
    new = _stage_scope(scope, place, pos, stage, stage_block, cache, rewriter)
    return replace(func, scope, new), name


def cache_read(func, realize, index, storage_scope, consumer_names=None):
    """Read ``realize``'s ``index``-th read buffer through a cache; returns (func, name)."""
    _check_storage_scope(storage_scope)
    block = realize.block
    if not 0 <= index < len(block.reads):
        raise ScheduleError(f"block {block.name_hint} has {len(block.reads)} read buffers, "
                            f"index {index} is out of range")
    buf = block.reads[index].buffer
    scope = _scope(func, realize)
    in_scope = scope_realizes(func, realize)
    consumers = _with_nested(func, consumer_names, buf) if consumer_names else set()
    writers = [r for r in in_scope if _writes(r.block, buf)]
    if len(writers) > 1:
        raise ScheduleError(f"buffer {buf.name} has several producers "
                            f"{sorted(r.block.name_hint for r in writers)}: a read cache "
                            "needs a single one to follow")
    cache, name = _cache_buffer(func, buf, storage_scope)
    if writers:
        writer = writers[0]
        after = in_scope[in_scope.index(writer) + 1:]
        related = {b for b in consumers if b is not scope} if consumers else \
            {r.block for r in after if _reads(r.block, buf)}
        place, pos = _placement(scope, writer.block, related)
        region = _relaxed_region(func, writer, buf, writer.block.writes, place)
    else:
        place, pos = scope, 0
        region = next((r.region for r in scope.reads if r.buffer is buf), None) or tuple(
            Range.from_min_extent(E.IntImm(d.dtype, 0), d) for d in buf.shape)

    def mode_of(b):
        if _writes(b, buf):
            return SKIP
        return SWAP if not consumers or b in consumers else WALK

    rewriter = _CacheRewriter(buf, cache, mode_of, stores=False)
    return _finish(func, scope, place, pos, region, buf, cache, cache, name, rewriter)


def cache_write(func, realize, index, storage_scope, consumer_names=None):
    """Write ``realize``'s ``index``-th write buffer through a cache copied back after it;
    returns (func, name of the copy block)."""
    _check_storage_scope(storage_scope)
    block = realize.block
    if not 0 <= index < len(block.writes):
        raise ScheduleError(f"block {block.name_hint} has {len(block.writes)} write buffers, "
                            f"index {index} is out of range")
    buf = block.writes[index].buffer
    scope = _scope(func, realize)
    in_scope = scope_realizes(func, realize)
    others = [r for r in in_scope if r is not realize and _writes(r.block, buf)]
    if others:
        raise ScheduleError(f"buffer {buf.name} is also written by block "
                            f"{others[0].block.name_hint}")
    consumers = _with_nested(func, consumer_names, buf) if consumer_names else set()
    after = in_scope[in_scope.index(realize) + 1:]
    related = {r.block for r in after if _reads(r.block, buf) and r.block not in consumers}
    place, pos = _placement(scope, block, related)
    region = _relaxed_region(func, realize, buf, block.writes, place)
    cache, name = _cache_buffer(func, buf, storage_scope)
    under_writer = {n for n, _ in walk(block) if isinstance(n, S.Block)}

    def mode_of(b):
        return SWAP if b in under_writer or b in consumers else SKIP

    rewriter = _CacheRewriter(buf, cache, mode_of, stores=True)
    return _finish(func, scope, place, pos, region, cache, buf, cache, name, rewriter)


def _free_var_ids(exprs):
    found = set()
    for e in exprs:
        post_order_visit(e, lambda n: found.add(id(n)) if isinstance(n, E.Var) else None)
    return found


def _reindex_nest(func, realize, region, place, index_map, names, is_read):
    """(stage, stage block, cache buffer, the block's new indices): a copy between the
    block's point access ``region`` and a new buffer indexed by ``index_map`` of the block's
    iter vars, run over the block's iters the access uses and the loops binding them."""
    block = realize.block
    buf = region.buffer
    if not all(isinstance(r.extent, E.IntImm) and r.extent.value == 1 for r in region.region):
        raise ScheduleError(f"block {block.name_hint} accesses a region of {buf.name}, not a "
                            "single point: reindexing needs point accesses")
    imap = IndexMap(index_map)
    if len(imap.names) != len(block.iter_vars):
        raise ScheduleError(f"index_map takes {len(imap.names)} indices but block "
                            f"{block.name_hint} has {len(block.iter_vars)} iter vars")
    ivars = [iv.var for iv in block.iter_vars]
    new_indices = imap.apply(ivars)
    analyzer = Analyzer()
    for iv in block.iter_vars:
        analyzer.bind(iv.var, iv.dom)
    shape = [E.IntImm(ivars[0].dtype if ivars else "int32",
                      int(analyzer.const_int_bound(e).max_value) + 1) for e in new_indices]
    old_indices = [r.min for r in region.region]
    used_old, used_new = _free_var_ids(old_indices), _free_var_ids(new_indices)
    for v in ivars:
        if (id(v) in used_old) != (id(v) in used_new):
            where = "old" if id(v) in used_old else "new"
            raise ScheduleError(f"iter var {v.name_hint} of block {block.name_hint} appears "
                                f"only in the {where} indices of {buf.name} "
                                f"({[str(i) for i in old_indices]} vs "
                                f"{[str(i) for i in new_indices]}): the maps do not match")
    kept = [(iv, value) for iv, value in zip(block.iter_vars, realize.iter_values)
            if id(iv.var) in used_new]
    path = find_path(func, realize)
    start = next((i for i, n in enumerate(path) if n is place), None)
    if start is None:
        start = max(i for i, n in enumerate(path) if isinstance(n, S.Block))
    value_vars = _free_var_ids([v for _, v in kept])
    loops = [n for n in path[start + 1:] if isinstance(n, S.For)
             and id(n.loop_var) in value_vars]
    mapping = {lp.loop_var: E.Var(lp.loop_var.name_hint, lp.loop_var.dtype) for lp in loops}
    new_ivs = [S.IterVar(iv.dom, E.Var(iv.var.name_hint, iv.var.dtype), S.IterVar.DataPar)
               for iv, _ in kept]
    values = [substitute(v, mapping) for _, v in kept]
    to_new = {iv.var: n.var for (iv, _), n in zip(kept, new_ivs)}
    old_at = [substitute(i, to_new) for i in old_indices]
    new_at = [substitute(i, to_new) for i in new_indices]
    cache = decl_buffer(shape, buf.dtype, f"{buf.name}_{names[1]}", scope=names[1])
    src, src_at, dst, dst_at = (buf, old_at, cache, new_at) if is_read else \
        (cache, new_at, buf, old_at)
    stage_block = S.Block(new_ivs, [BufferRegion(src, _points(src_at))],
                          [BufferRegion(dst, _points(dst_at))], names[0],
                          S.BufferStore(dst, E.BufferLoad(src, src_at), dst_at))
    stage = S.BlockRealize(values, E.IntImm("bool", 1), stage_block)
    for lp in reversed(loops):
        stage = S.For(mapping[lp.loop_var], lp.min, lp.extent, S.ForKind.SERIAL, stage)
    return stage, stage_block, cache, new_indices, imap


def reindex_cache_read(func, realize, index, storage_scope, index_map):
    """Read ``realize``'s ``index``-th read buffer through a cache laid out by
    ``index_map`` of the block's iter vars; only this block reads it. Returns
    (func, stage name, the IndexMap)."""
    _check_storage_scope(storage_scope)
    block = realize.block
    if not 0 <= index < len(block.reads):
        raise ScheduleError(f"block {block.name_hint} has {len(block.reads)} read buffers, "
                            f"index {index} is out of range")
    region = block.reads[index]
    buf = region.buffer
    scope = _scope(func, realize)
    in_scope = scope_realizes(func, realize)
    writers = [r for r in in_scope if _writes(r.block, buf)]
    if len(writers) > 1:
        raise ScheduleError(f"buffer {buf.name} has several producers "
                            f"{sorted(r.block.name_hint for r in writers)}")
    place, pos = _placement(scope, writers[0].block, {block}) if writers else (scope, 0)
    name = _unique_name(func, f"{buf.name}_{storage_scope}")
    stage, stage_block, cache, indices, imap = _reindex_nest(
        func, realize, region, place, index_map, (name, storage_scope), is_read=True)

    def mode_of(b):
        return SWAP if b is block else (SKIP if _writes(b, buf) else WALK)

    rewriter = _CacheRewriter(buf, cache, mode_of, stores=False, indices=indices)
    new = _stage_scope(scope, place, pos, stage, stage_block, cache, rewriter)
    return replace(func, scope, new), name, imap


def reindex_cache_write(func, realize, index, storage_scope, index_map):
    """Write ``realize``'s ``index``-th write buffer through a cache laid out by
    ``index_map`` of the block's iter vars, copied back before its first consumer.
    Returns (func, stage name, the IndexMap)."""
    _check_storage_scope(storage_scope)
    block = realize.block
    if not 0 <= index < len(block.writes):
        raise ScheduleError(f"block {block.name_hint} has {len(block.writes)} write buffers, "
                            f"index {index} is out of range")
    region = block.writes[index]
    buf = region.buffer
    scope = _scope(func, realize)
    in_scope = scope_realizes(func, realize)
    others = [r for r in in_scope if r is not realize and _writes(r.block, buf)]
    if others:
        raise ScheduleError(f"buffer {buf.name} is also written by block "
                            f"{others[0].block.name_hint}")
    after = in_scope[in_scope.index(realize) + 1:]
    related = {r.block for r in after if _reads(r.block, buf)}
    place, pos = _placement(scope, block, related)
    name = _unique_name(func, f"{buf.name}_{storage_scope}")
    stage, stage_block, cache, indices, imap = _reindex_nest(
        func, realize, region, place, index_map, (name, storage_scope), is_read=False)
    under_writer = {n for n, _ in walk(block) if isinstance(n, S.Block)}

    def mode_of(b):
        return SWAP if b is block else (WALK if b in under_writer else SKIP)

    rewriter = _CacheRewriter(buf, cache, mode_of, stores=True, indices=indices)
    new = _stage_scope(scope, place, pos, stage, stage_block, cache, rewriter)
    return replace(func, scope, new), name, imap
