"""cache_read and cache_write: stage a buffer through a new buffer in another scope."""

from __future__ import annotations

from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.buffer import BufferRegion, Range, decl_buffer
from irlab.tir.functor import StmtExprMutator
from irlab.tir.schedule.errors import ScheduleError
from irlab.tir.schedule.primitives_getters import (find_block, replace, scope_of, scope_realizes,
                                                   walk)


class _ReplaceBuffer(StmtExprMutator):
    """Loads/stores/regions of ``old`` redirected to ``new`` (reads/writes per flags)."""

    def __init__(self, old, new, loads=True, stores=True):
        super().__init__()
        self.old, self.new, self.loads, self.stores = old, new, loads, stores

    def visit_buffer_load(self, e):
        e = self._mutate_children(e)
        return e.with_fields(buffer=self.new) if self.loads and e.buffer is self.old else e

    def visit_buffer_store(self, s):
        s = self._mutate_stmt_children(s)
        return s.with_fields(buffer=self.new) if self.stores and s.buffer is self.old else s

    def block(self, block):
        def regions(rs, flag):
            return tuple(r.with_fields(buffer=self.new) if flag and r.buffer is self.old else r
                         for r in rs)

        body = self.visit_stmt(block.body)
        init = None if block.init is None else self.visit_stmt(block.init)
        return block.with_fields(body=body, init=init, reads=regions(block.reads, self.loads),
                                 writes=regions(block.writes, self.stores))


def _unique_name(func, name):
    taken = {n.block.name_hint for n, _ in walk(func.body) if isinstance(n, S.BlockRealize)}
    out, k = name, 0
    while out in taken:
        k += 1
        out = f"{name}_{k}"
    return out


def _copy_nest(name, src, dst):
    """Loops ax0.. over the whole buffer and a block copying ``src`` into ``dst``."""
    axes = [E.Var(f"ax{d}", s.dtype) for d, s in enumerate(src.shape)]
    ivars = [E.Var(f"v{d}", s.dtype) for d, s in enumerate(src.shape)]
    point = tuple(Range.from_min_extent(v, 1) for v in ivars)
    block = S.Block([S.IterVar(Range.from_min_extent(0, s), v, S.IterVar.DataPar)
                     for v, s in zip(ivars, src.shape)],
                    [BufferRegion(src, point)], [BufferRegion(dst, point)], name,
                    S.BufferStore(dst, E.BufferLoad(src, ivars), ivars))
    stmt = S.BlockRealize(axes, E.IntImm("bool", 1), block)
    for ax, s in reversed(list(zip(axes, src.shape))):
        stmt = S.For(ax, 0, s, S.ForKind.SERIAL, stmt)
    return stmt


def _top_index(children, names):
    """Indices of the scope's top-level statements holding a block named in ``names``."""
    return [i for i, c in enumerate(children)
            if any(isinstance(n, S.BlockRealize) and n.block.name_hint in names
                   for n, _ in walk(c))]


def _insert(func, scope_name, position_fn, nest, cache):
    scope = find_block(func, scope_name).block
    children = list(scope.body.seq) if isinstance(scope.body, S.SeqStmt) else [scope.body]
    pos = position_fn(children)
    body = S.SeqStmt.flatten(*(children[:pos] + [nest] + children[pos:]))
    new = scope.with_fields(body=body, alloc_buffers=scope.alloc_buffers + (cache,))
    return replace(func, scope, new)


def _scope(func, realize):
    scope = scope_of(func, realize)
    if scope is None:
        raise ScheduleError(f"block {realize.block.name_hint} has no scope block to hold a "
                            "cache buffer")
    return scope


# Storage scope ranks a cache buffer may live in (a rank may carry a ``.tag``).
_SCOPE_RANKS = ("global", "shared", "warp", "local", "wmma", "metal", "amx", "texture")


def _check_storage_scope(storage_scope):
    rank = str(storage_scope).split(".", 1)[0]
    if rank not in _SCOPE_RANKS:
        raise ScheduleError(f"unknown storage scope {storage_scope!r}: expected one of "
                            f"{', '.join(_SCOPE_RANKS)} (optionally with a '.tag')")


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
    readers = [r for r in in_scope if any(x.buffer is buf for x in r.block.reads)]
    if consumer_names is not None:
        readers = [r for r in readers if r.block.name_hint in consumer_names]
        if {r.block.name_hint for r in readers} != set(consumer_names):
            raise ScheduleError(f"the consumer blocks {sorted(consumer_names)} do not all "
                                f"read {buf.name}")
    writers = {r.block.name_hint for r in in_scope
               if any(w.buffer is buf for w in r.block.writes)}
    reader_names = {r.block.name_hint for r in readers}
    if writers & reader_names:
        raise ScheduleError(f"buffer {buf.name} is also written by "
                            f"{sorted(writers & reader_names)}: cannot cache its reads")
    if len(writers) > 1:
        raise ScheduleError(f"buffer {buf.name} has several producers {sorted(writers)}: "
                            "a read cache needs a single one to follow")
    name = _unique_name(func, f"{buf.name}_{storage_scope}")
    cache = decl_buffer(buf.shape, buf.dtype, f"{buf.name}_{storage_scope}",
                        scope=storage_scope)
    mutator = _ReplaceBuffer(buf, cache, loads=True, stores=False)
    for r in readers:
        func = replace(func, r.block, mutator.block(r.block))

    def position(children):
        after = _top_index(children, writers)
        first_use = _top_index(children, reader_names)
        pos = after[-1] + 1 if after else 0
        if first_use and first_use[0] < pos:
            raise ScheduleError(f"a reader of {buf.name} shares a loop nest with its producer: "
                                "the cache cannot be placed between them")
        return pos

    return _insert(func, scope.name_hint, position, _copy_nest(name, buf, cache), cache), name


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
    others = [r for r in in_scope if r is not realize
              and any(w.buffer is buf for w in r.block.writes)]
    if others:
        raise ScheduleError(f"buffer {buf.name} is also written by block "
                            f"{others[0].block.name_hint}")
    readers = [r for r in in_scope if r is not realize
               and any(x.buffer is buf for x in r.block.reads)]
    redirect = [r for r in readers if consumer_names and r.block.name_hint in consumer_names]
    if consumer_names and len(redirect) != len(set(consumer_names)):
        raise ScheduleError(f"the consumer blocks {sorted(consumer_names)} do not all "
                            f"read {buf.name}")
    name = _unique_name(func, f"{buf.name}_{storage_scope}")
    cache = decl_buffer(buf.shape, buf.dtype, f"{buf.name}_{storage_scope}",
                        scope=storage_scope)
    func = replace(func, block, _ReplaceBuffer(buf, cache).block(block))
    reader_mutator = _ReplaceBuffer(buf, cache, loads=True, stores=False)
    for r in redirect:
        func = replace(func, r.block, reader_mutator.block(r.block))
    plain = {r.block.name_hint for r in readers} - {r.block.name_hint for r in redirect}

    def position(children):
        pos = _top_index(children, {block.name_hint})[-1] + 1
        if set(_top_index(children, plain)) & set(range(pos)):
            raise ScheduleError(f"a reader of {buf.name} shares a loop nest with block "
                                f"{block.name_hint}: the copy back cannot be placed between")
        return pos

    return _insert(func, scope.name_hint, position, _copy_nest(name, cache, buf), cache), name
