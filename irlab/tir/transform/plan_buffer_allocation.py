"""``tir.PlanAndUpdateBufferAllocationLocation``: a block's buffer moves down to where it is used.

``cache_write`` and friends allocate their buffer in the root block; its uses all sit under
some loop nest. The allocation moves to the lowest common ancestor of its uses (as TVM's pass),
so ``CompactBufferAllocation`` can shrink it to the region one iteration needs -- e.g. a
``(4, 64)`` register tile instead of the whole ``(M, N)`` matrix. When that ancestor is a loop,
the loop body is wrapped in a new opaque block holding the allocation.

One rule keeps values alive: the allocation never moves inside a loop bound to a *reduction*
iter var of a block using the buffer (the value is carried from one iteration to the next).

Before::

    with T.block("root"):
        C_local = T.alloc_buffer((128, 128))
        for i in range(32):
            for k, ii in T.grid(128, 4):
                with T.block("C"): ...C_local[i * 4 + ii, ...]...     # k: reduction
            for ax0 in range(4):
                with T.block("C_local"): C[...] = C_local[i * 4 + ax0, ...]

After::

    with T.block("root"):
        for i in range(32):
            with T.block(""):
                C_local = T.alloc_buffer((128, 128))   # CompactBufferAllocation: (4, 128)
                for k, ii in T.grid(128, 4): ...
"""

from __future__ import annotations

from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.functor import StmtExprVisitor, StmtMutator, post_order_visit


class _Collector(StmtExprVisitor):
    """Ancestor paths (For / BlockRealize nodes) of every access, and reduction loops."""

    def __init__(self):
        super().__init__()
        self.path: list = []
        self.alloc_site: dict = {}    # buffer -> the BlockRealize allocating it
        self.accesses: dict = {}      # buffer -> list of paths
        self.carried: dict = {}       # buffer -> loop vars driving a reduction over it
        self.block_reduce_vars: list = []  # per enclosing block: loop vars in reduce bindings

    def _access(self, buffer):
        if buffer in self.alloc_site:
            self.accesses.setdefault(buffer, []).append(list(self.path))
            if self.block_reduce_vars:
                self.carried.setdefault(buffer, set()).update(self.block_reduce_vars[-1])

    def visit_buffer_load(self, e):
        self._access(e.buffer)
        super().visit_buffer_load(e)

    def visit_buffer_store(self, s):
        self._access(s.buffer)
        self._visit_stmt_children(s)

    def visit_for(self, s):
        self.path.append(s)
        self._visit_stmt_children(s)
        self.path.pop()

    def visit_block_realize(self, realize):
        block = realize.block
        for buffer in block.alloc_buffers:
            self.alloc_site[buffer] = realize
        reduce_vars = set()
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.iter_type == S.IterVar.CommReduce:
                post_order_visit(value, lambda n: reduce_vars.add(n)
                                 if isinstance(n, E.Var) else None)
        for m in block.match_buffers:
            self._access(m.source.buffer)
        self.path.append(realize)
        self.block_reduce_vars.append(reduce_vars)
        for value in realize.iter_values:
            self.visit_expr(value)
        self.visit_expr(realize.predicate)
        self._visit_value(block.body)
        if block.init is not None:
            self._visit_value(block.init)
        self.block_reduce_vars.pop()
        self.path.pop()


def _plan(collector):
    """buffer -> the node (For or BlockRealize) its allocation moves to."""
    moves = {}
    for buffer, site in collector.alloc_site.items():
        paths = collector.accesses.get(buffer)
        if not paths:
            continue
        common = paths[0]
        for p in paths[1:]:
            n = 0
            while n < len(common) and n < len(p) and common[n] is p[n]:
                n += 1
            common = common[:n]
        if not any(node is site for node in common):
            continue
        start = next(i for i, node in enumerate(common) if node is site)
        carried = collector.carried.get(buffer, set())
        target = site
        for node in common[start + 1:]:
            if isinstance(node, S.For) and node.loop_var in carried:
                break
            target = node
        if target is not site:
            moves[buffer] = target
    return moves


class _Mover(StmtMutator):
    def __init__(self, moves):
        super().__init__()
        self.moved = set(moves)
        self.into: dict = {}
        for buffer, node in moves.items():
            self.into.setdefault(id(node), []).append(buffer)
        self.placed: set = set()  # moved buffers whose new scope we are inside

    def _enter(self, node):
        buffers = self.into.get(id(node), [])
        self.placed.update(buffers)
        return buffers

    def visit_for(self, s):
        buffers = self._enter(s)
        new = self._mutate_stmt_children(s)
        self.placed.difference_update(buffers)
        if buffers:
            block = S.Block([], [], [], "", new.body, alloc_buffers=buffers)
            new = new.with_fields(body=S.BlockRealize([], E.IntImm("bool", 1), block))
        return new

    def visit_block_realize(self, realize):
        buffers = self._enter(realize)
        new = self._mutate_stmt_children(realize)
        self.placed.difference_update(buffers)
        block = new.block
        keep = tuple(b for b in block.alloc_buffers if b not in self.moved) + tuple(buffers)
        # above its new scope a moved buffer does not exist: drop its regions there
        gone = self.moved - self.placed - set(buffers)
        reads = tuple(r for r in block.reads if r.buffer not in gone)
        writes = tuple(r for r in block.writes if r.buffer not in gone)
        if keep != block.alloc_buffers or reads != block.reads or writes != block.writes:
            block = block.with_fields(alloc_buffers=keep, reads=reads, writes=writes)
            new = new.with_fields(block=block)
        return new


def plan_and_update_buffer_allocation_location(func, mod=None, ctx=None):
    collector = _Collector()
    collector.visit_stmt(func.body)
    moves = _plan(collector)
    if not moves:
        return func
    return func.with_body(_Mover(moves).visit_stmt(func.body))
