"""``tir.LowerInitBlock``: a reduction block's ``init`` becomes a guarded statement in its body.

Before::

    with T.block("C"):
        vi, vk = T.axis.remap("SR", [i, k])
        with T.init():
            C[vi] = 0.0
        C[vi] = C[vi] + A[vi, vk]

After::

    with T.block("C"):
        vi, vk = T.axis.remap("SR", [i, k])
        if vk == 0:
            C[vi] = 0.0
        C[vi] = C[vi] + A[vi, vk]
"""

from __future__ import annotations

from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.functor import StmtMutator
from irlab.tir.transform.common import and_all


class _InitLowerer(StmtMutator):
    def visit_block(self, block):
        block = self._mutate_stmt_children(block)
        if block.init is None:
            return block
        # init runs on the first step of the reduction: every reduce iter var at its minimum
        conds = [E.EQ(iv.var, iv.dom.min) for iv in block.iter_vars
                 if iv.iter_type == S.IterVar.CommReduce]
        cond = and_all(conds)
        init = block.init if cond is None else S.IfThenElse(cond, block.init)
        return block.with_fields(body=S.SeqStmt.flatten(init, block.body), init=None)


def lower_init_block(func, mod=None, ctx=None):
    """The function with every block's ``init`` lowered into its body."""
    return func.with_body(_InitLowerer().visit_stmt(func.body))
