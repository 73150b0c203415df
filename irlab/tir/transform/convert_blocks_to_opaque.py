"""``tir.ConvertBlocksToOpaque``: block iter vars are replaced by the values bound to them, so
blocks keep no iteration space of their own (opaque blocks).

Before::

    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i * 2)
            B[vi] = A[vi]

After::

    for i in range(4):
        with T.block("B"):
            T.reads(A[i * 2])
            T.writes(B[i * 2])
            B[i * 2] = A[i * 2]
"""

from __future__ import annotations

from irlab.errors import TIRError

from irlab.tir.functor import StmtExprMutator


class _OpaqueConverter(StmtExprMutator):
    def __init__(self):
        super().__init__()
        self.bound = {}  # block iter var -> the value its BlockRealize gives it

    def visit_var(self, v):
        return self.bound.get(v, v)

    visit_size_var = visit_var

    def visit_block_realize(self, realize):
        block = realize.block
        if block.init is not None:
            raise TIRError(f"ConvertBlocksToOpaque: block {block.name_hint} still has an init; "
                           f"run LowerInitBlock first")
        values = [self.visit_expr(v) for v in realize.iter_values]
        for iv, value in zip(block.iter_vars, values):
            self.bound[iv.var] = value
        predicate = self.visit_expr(realize.predicate)
        new_block = self._mutate_stmt_children(block.with_fields(iter_vars=()))
        return realize.with_fields(iter_values=(), predicate=predicate, block=new_block)


def convert_blocks_to_opaque(func, mod=None, ctx=None):
    """The function with every block made opaque (no iter vars)."""
    return func.with_body(_OpaqueConverter().visit_stmt(func.body))
