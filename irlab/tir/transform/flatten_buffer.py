"""``tir.FlattenBuffer``: multi-dimensional buffer accesses become 1-D accesses with row-major
(or stride-given) index arithmetic, simplified with the loop bounds known.

Buffers in the ``buffer_map`` stay multi-dimensional (they describe the arguments); the body
uses flat buffers aliasing the same data. Needs block-free TIR (``LowerOpaqueBlock``).

Before::

    for i, j in T.grid(4, 8):
        B[i, j] = A[i, j]

After::

    for i, j in T.grid(4, 8):
        B_1 = T.Buffer((32,), data=B.data)
        B_1[i * 8 + j] = A_1[i * 8 + j]
"""

from __future__ import annotations

from irlab.arith import Analyzer
from irlab.errors import TIRError
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.tir import stmt as S
from irlab.tir.buffer import Buffer, Range
from irlab.tir.functor import StmtExprMutator
from irlab.tir.transform.lower_opaque_block import allocation_shape


def _product(values):
    out = None
    for v in values:
        out = v if out is None else O.multiply(out, v)
    return out if out is not None else E.IntImm("int32", 1)


def flattened_buffer(buffer: Buffer, analyzer=None) -> Buffer:
    """The 1-D buffer over the same data as ``buffer`` (same dtype, elem_offset, scope)."""
    analyzer = analyzer or Analyzer(memoize=True)
    size = analyzer.simplify(_product(allocation_shape(buffer)))
    return Buffer(buffer.data, buffer.dtype, (size,), (), buffer.elem_offset, buffer.name,
                  (), buffer.scope, buffer.span)


def flat_index(buffer: Buffer, indices):
    """``sum(index_k * stride_k)``: strides given, or row-major from the shape."""
    if buffer.strides:
        strides = list(buffer.strides)
    else:
        strides, acc = [], None
        for extent in reversed(buffer.shape):
            strides.append(E.IntImm(extent.dtype, 1) if acc is None else acc)
            acc = extent if acc is None else O.multiply(acc, extent)
        strides.reverse()
    out = None
    for index, stride in zip(indices, strides):
        term = index if _is_one(stride) else O.multiply(index, _match_lanes(stride, index))
        out = term if out is None else O.add(out, term)
    return out if out is not None else E.IntImm("int32", 0)


def _is_one(e):
    return isinstance(e, E.IntImm) and e.value == 1


def _match_lanes(stride, index):
    """A vector index (Ramp) needs a broadcast stride."""
    lanes = getattr(index, "lanes", None)
    if isinstance(index, (E.Ramp, E.Broadcast)) and lanes:
        return E.Broadcast(stride, lanes)
    return stride


class _Flattener(StmtExprMutator):
    def __init__(self):
        super().__init__()
        self.analyzer = Analyzer(memoize=True)
        self.flat = {}  # Buffer (by identity) -> its flattened buffer

    def _flat(self, buffer):
        out = self.flat.get(buffer)
        if out is None:
            out = buffer if _is_flat(buffer) else flattened_buffer(buffer, self.analyzer)
            self.flat[buffer] = out
        return out

    def _index(self, buffer, indices):
        if _is_flat(buffer):
            return indices
        return (self.analyzer.simplify(flat_index(buffer, indices)),)

    def visit_buffer_load(self, e):
        indices = tuple(self.visit_expr(i) for i in e.indices)
        return E.BufferLoad(self._flat(e.buffer), self._index(e.buffer, indices))

    def visit_buffer_store(self, s):
        indices = tuple(self.visit_expr(i) for i in s.indices)
        value = self.visit_expr(s.value)
        return S.BufferStore(self._flat(s.buffer), value, self._index(s.buffer, indices))

    def visit_for(self, s):
        # index simplification may use the loop's range (floordiv/floormod of split loops)
        self.analyzer.bind(s.loop_var, Range.from_min_extent(s.min, s.extent))
        self.memo_map = {}
        return self._mutate_stmt_children(s)

    def visit_allocate(self, s):
        body = self.visit_stmt(s.body)
        if len(s.extents) == 1:
            return s.with_fields(body=body)
        size = self.analyzer.simplify(_product(s.extents))
        return s.with_fields(extents=(size,), body=body)

    def visit_decl_buffer(self, s):
        return S.DeclBuffer(self._flat(s.buffer), self.visit_stmt(s.body))

    def visit_block(self, s):
        raise TIRError(f"FlattenBuffer: block {s.name_hint} is still there; run "
                       f"LowerOpaqueBlock first")

    def visit_block_realize(self, s):
        self.visit_block(s.block)


def _is_flat(buffer):
    return len(buffer.shape) == 1 and not buffer.strides


def flatten_buffer(func, mod=None, ctx=None):
    """The function with every buffer access in its body one-dimensional."""
    return func.with_body(_Flattener().visit_stmt(func.body))
