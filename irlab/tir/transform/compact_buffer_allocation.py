"""``tir.CompactBufferAllocation``: a block-local buffer shrinks to the region its block uses.

For each ``alloc_buffer`` of a block, the accesses in the block's subtree are bounded per
dimension with the loops inside the block relaxed to their whole range (loops outside stay
symbolic: they are fixed for one allocation). A dimension whose used extent is a constant
smaller than the declared one is shrunk and its indices shifted by the region's start.
Needs opaque blocks (``ConvertBlocksToOpaque``); anything not understood keeps the dimension.

Before::

    for i in range(4):
        with T.block("outer"):
            C = T.alloc_buffer((4, 8))
            for j in range(8):
                C[i, j] = A[i, j]
            ...

After::

    for i in range(4):
        with T.block("outer"):
            C = T.alloc_buffer((1, 8))
            for j in range(8):
                C[0, j] = A[i, j]
            ...
"""

from __future__ import annotations

from irlab.arith import Analyzer
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.tir import stmt as S
from irlab.tir.buffer import Buffer, BufferRegion, Range
from irlab.tir.functor import StmtExprMutator, StmtExprVisitor, StmtMutator, post_order_visit


class _Unknown(Exception):
    """An index whose bounds we cannot express."""


def _uses(e, vars_):
    found = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, E.Var) and n in vars_
                     else None)
    return bool(found)


def _bounds(e, relax, opaque):
    """Symbolic ``(lo, hi)`` of ``e`` with the vars of ``relax`` over their ``(lo, hi)``;
    vars in ``opaque`` (defined inside, range unknown) make it fail."""
    if isinstance(e, E.IntImm):
        return e, e
    if isinstance(e, E.Var):
        if e in relax:
            return relax[e]
        if e in opaque:
            raise _Unknown
        return e, e
    if not _uses(e, set(relax) | set(opaque)):
        return e, e  # fixed for one allocation, whatever it is
    if isinstance(e, (E.Add, E.Sub, E.Min, E.Max)):
        (al, ah), (bl, bh) = _bounds(e.a, relax, opaque), _bounds(e.b, relax, opaque)
        if isinstance(e, E.Add):
            return O.add(al, bl), O.add(ah, bh)
        if isinstance(e, E.Sub):
            return O.subtract(al, bh), O.subtract(ah, bl)
        pick = O.min if isinstance(e, E.Min) else O.max
        return pick(al, bl), pick(ah, bh)
    if isinstance(e, (E.Mul, E.FloorDiv, E.FloorMod)) and isinstance(e.b, E.IntImm):
        c = e.b.value
        lo, hi = _bounds(e.a, relax, opaque)
        if isinstance(e, E.Mul):
            return (O.multiply(lo, e.b), O.multiply(hi, e.b)) if c >= 0 else \
                (O.multiply(hi, e.b), O.multiply(lo, e.b))
        if c > 0 and isinstance(e, E.FloorDiv):
            return O.floordiv(lo, e.b), O.floordiv(hi, e.b)
        if c > 0:
            return E.IntImm(e.dtype, 0), E.IntImm(e.dtype, c - 1)
    if isinstance(e, E.Mul) and isinstance(e.a, E.IntImm):
        return _bounds(E.Mul(e.b, e.a), relax, opaque)
    raise _Unknown


class _AccessCollector(StmtExprVisitor):
    """Per-dimension ``(lo, hi)`` of every access to ``buffer`` in a block's body."""

    def __init__(self, buffer):
        super().__init__()
        self.buffer = buffer
        self.relax, self.opaque = {}, set()
        self.regions = []  # list of per-dimension (lo, hi)
        self.failed = False

    def _add(self, indices):
        try:
            self.regions.append([_bounds(i, self.relax, self.opaque) for i in indices])
        except _Unknown:
            self.failed = True

    def visit_buffer_load(self, e):
        if e.buffer is self.buffer:
            self._add(e.indices)
        self._visit_children(e)

    def visit_buffer_store(self, s):
        if s.buffer is self.buffer:
            self._add(s.indices)
        self._visit_stmt_children(s)

    def visit_for(self, s):
        try:
            min_lo, min_hi = _bounds(s.min, self.relax, self.opaque)
            _, ext_hi = _bounds(s.extent, self.relax, self.opaque)
            self.relax[s.loop_var] = (min_lo, O.subtract(O.add(min_hi, ext_hi), 1))
        except _Unknown:
            self.opaque.add(s.loop_var)
        self.memo_map = {}
        self._visit_stmt_children(s)

    def _opaque_scope(self, s):
        self.opaque.add(s.var)
        self._visit_stmt_children(s)

    visit_let_stmt = _opaque_scope

    def visit_block(self, s):
        for iv in s.iter_vars:  # not opaque: values of unknown range
            self.opaque.add(iv.var)
        self._visit_stmt_children(s)


class _Rewriter(StmtExprMutator):
    """Accesses to ``old`` become accesses to ``new`` shifted by ``offsets``."""

    def __init__(self, old, new, offsets, analyzer):
        super().__init__()
        self.old, self.new, self.offsets, self.analyzer = old, new, offsets, analyzer

    def _shift(self, indices):
        return tuple(self.analyzer.simplify(O.subtract(i, o)) for i, o in
                     zip(indices, self.offsets))

    def visit_buffer_load(self, e):
        e = self._mutate_children(e)
        return E.BufferLoad(self.new, self._shift(e.indices)) if e.buffer is self.old else e

    def visit_buffer_store(self, s):
        s = self._mutate_stmt_children(s)
        if s.buffer is not self.old:
            return s
        return S.BufferStore(self.new, s.value, self._shift(s.indices))

    def _mutate_value(self, value):
        if isinstance(value, BufferRegion) and value.buffer is self.old:
            mins = self._shift([r.min for r in value.region])
            return BufferRegion(self.new, [Range.from_min_extent(m, r.extent)
                                           for m, r in zip(mins, value.region)])
        return super()._mutate_value(value)


def _compact(buffer, body, analyzer):
    """``(new_buffer, offsets)`` or None when nothing shrinks."""
    if buffer.strides or buffer.axis_separators:
        return None
    collector = _AccessCollector(buffer)
    collector.visit_stmt(body)
    if collector.failed or not collector.regions:
        return None
    shape, offsets, changed = [], [], False
    for dim, extent in enumerate(buffer.shape):
        los = [r[dim][0] for r in collector.regions]
        his = [r[dim][1] for r in collector.regions]
        lo, hi = los[0], his[0]
        for x in los[1:]:
            lo = O.min(lo, x)
        for x in his[1:]:
            hi = O.max(hi, x)
        lo = analyzer.simplify(lo)
        used = analyzer.simplify(O.add(O.subtract(hi, lo), 1))
        if (isinstance(used, E.IntImm) and isinstance(extent, E.IntImm)
                and 0 < used.value < extent.value):
            shape.append(used)
            offsets.append(lo)
            changed = True
        else:  # keep the declared extent: a region we cannot bound, or no smaller
            shape.append(extent)
            offsets.append(E.IntImm(extent.dtype, 0))
    if not changed:
        return None
    new = Buffer(buffer.data, buffer.dtype, shape, (), buffer.elem_offset, buffer.name, (),
                 buffer.scope, buffer.span)
    return new, offsets


class _Compactor(StmtMutator):
    def __init__(self):
        super().__init__()
        self.analyzer = Analyzer(memoize=True)

    def visit_for(self, s):
        # outer loop ranges help simplify the region bounds (min(i, i + 1) and the like)
        self.analyzer.bind(s.loop_var, Range.from_min_extent(s.min, s.extent))
        return self._mutate_stmt_children(s)

    def visit_block(self, block):
        block = self._mutate_stmt_children(block)
        allocs = list(block.alloc_buffers)
        body = block.body
        for n, buffer in enumerate(allocs):
            result = _compact(buffer, body, self.analyzer)
            if result is None:
                continue
            new, offsets = result
            rewriter = _Rewriter(buffer, new, offsets, self.analyzer)
            body = rewriter.visit_stmt(body)
            allocs[n] = new
        if all(a is b for a, b in zip(allocs, block.alloc_buffers)):
            return block
        return block.with_fields(body=body, alloc_buffers=tuple(allocs))


def compact_buffer_allocation(func, mod=None, ctx=None):
    """The function with block-local buffers shrunk to the regions used."""
    return func.with_body(_Compactor().visit_stmt(func.body))
