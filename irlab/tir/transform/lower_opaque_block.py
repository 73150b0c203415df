"""``tir.LowerOpaqueBlock``: opaque blocks disappear, leaving plain statements.

A block's ``alloc_buffers`` become ``Allocate`` + ``DeclBuffer`` around its body, a non-true
predicate becomes an ``IfThenElse``. Needs opaque blocks (``ConvertBlocksToOpaque``).

Before::

    with T.block("root"):
        C = T.alloc_buffer((4,))
        for i in range(4):
            with T.block("C"):
                T.where(i < 3)
                C[i] = A[i]

After::

    C = T.allocate([4], "float32", "global")
    C_1 = T.decl_buffer((4,), data=C)
    for i in range(4):
        if i < 3:
            C_1[i] = A[i]
"""

from __future__ import annotations

from irlab.errors import TIRError
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.tir import stmt as S
from irlab.tir.functor import StmtMutator


def allocation_shape(buffer):
    """Extents to allocate for ``buffer``: its shape, or the span its strides cover."""
    if not buffer.strides:
        return buffer.shape
    # strided: the last element sits at sum((n_i - 1) * s_i); allocate one past it
    span = E.IntImm(buffer.shape[0].dtype, 1) if buffer.shape else 1
    for n, s in zip(buffer.shape, buffer.strides):
        span = O.add(span, O.multiply(O.subtract(n, 1), s))
    return (span,)


class _OpaqueBlockLowerer(StmtMutator):
    def visit_block_realize(self, realize):
        block = realize.block
        if block.iter_vars or realize.iter_values:
            raise TIRError(f"LowerOpaqueBlock: block {block.name_hint} is not opaque; run "
                           f"ConvertBlocksToOpaque first")
        if block.init is not None:
            raise TIRError(f"LowerOpaqueBlock: block {block.name_hint} still has an init")
        if block.match_buffers:
            raise TIRError(f"LowerOpaqueBlock: block {block.name_hint} has match_buffers; "
                           f"they are not supported")
        body = self.visit_stmt(block.body)
        predicate = self.visit_expr(realize.predicate)
        if not (isinstance(predicate, E.IntImm) and predicate.value):
            body = S.IfThenElse(predicate, body)
        # innermost first, so the first allocated buffer ends up outermost
        for buffer in reversed(block.alloc_buffers):
            body = S.DeclBuffer(buffer, body)
            body = S.Allocate(buffer.data, buffer.dtype, allocation_shape(buffer), True, body)
        return body

    def visit_block(self, block):
        raise TIRError(f"LowerOpaqueBlock: block {block.name_hint} is not under a BlockRealize")


def lower_opaque_block(func, mod=None, ctx=None):
    """The function with no Block or BlockRealize left."""
    return func.with_body(_OpaqueBlockLowerer().visit_stmt(func.body))
