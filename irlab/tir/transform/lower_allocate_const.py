"""``tir.LowerAllocateConst``: a constant allocation becomes a plain allocation filled with
its constants on entry (irlab's codegens have no constant pools).

Before::

    p = T.allocate_const([1, 2], "float32", [2])
    A = T.decl_buffer((2,), data=p)
    ...

After::

    p = T.allocate([2], "float32", "global")
    p_buffer = T.decl_buffer((2,), data=p)
    p_buffer[0] = T.float32(1)
    p_buffer[1] = T.float32(2)
    A = T.decl_buffer((2,), data=p)
    ...
"""

from __future__ import annotations

from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.buffer import Buffer
from irlab.tir.functor import StmtMutator


class _ConstLowerer(StmtMutator):
    def visit_allocate_const(self, s):
        body = self.visit_stmt(s.body)
        size = len(s.data)
        flat = Buffer(s.buffer_var, s.dtype, (E.IntImm("int32", size),),
                      name=f"{s.buffer_var.name_hint}_buffer")
        const = E.FloatImm if s.dtype.startswith(("float", "bfloat")) else E.IntImm
        fills = [S.BufferStore(flat, const(s.dtype, v), [E.IntImm("int32", k)])
                 for k, v in enumerate(s.data)]
        fill = S.DeclBuffer(flat, S.SeqStmt.flatten(*fills, body))
        return S.Allocate(s.buffer_var, s.dtype, s.extents, True, fill, s.annotations)


def lower_allocate_const(func, mod=None, ctx=None):
    """The function with each AllocateConst turned into an Allocate filled on entry."""
    return func.with_body(_ConstLowerer().visit_stmt(func.body))
