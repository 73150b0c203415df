"""``tir.UnrollLoop``: unrolled loops are replaced by copies of their body.

Loops of kind ``unroll`` are always unrolled; with the ``tir.UnrollLoop`` config
``{"auto_max_step": n}`` serial loops whose total body work (statements x iterations) stays
within ``n`` are too (TVM's LoopUnroller). ``explicit_unroll=False`` marks them
``T.unroll`` instead of copying.

Before::

    for i in T.unroll(2):
        B[i] = A[i]

After::

    B[0] = A[0]
    B[1] = A[1]
"""

from __future__ import annotations

from dataclasses import dataclass

from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.functor import StmtExprMutator, StmtMutator, post_order_visit
from irlab.tir.transform.common import const_int, fold_select, no_op


@dataclass
class UnrollLoopConfig:
    """TVM's defaults: explicit unrolling only of ``unroll`` loops."""

    auto_max_step: int = 0
    auto_max_depth: int = 8
    auto_max_extent: int = 0
    explicit_unroll: bool = True
    unroll_local_access: bool = False

    @staticmethod
    def from_context(ctx):
        raw = (ctx.config.get("tir.UnrollLoop") if ctx is not None else None) or {}
        if isinstance(raw, UnrollLoopConfig):
            return raw
        return UnrollLoopConfig(**dict(raw))


class _Unroller(StmtMutator):
    """``step_count`` counts the statements executed by the subtree just visited;
    ``unroll_depth`` how many unrolled loops it nests; ``normal_depth`` non-unrolled loops."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.step_count = 0
        self.unroll_depth = 0
        self.normal_depth = 0

    def visit_for(self, s):
        s = self._mutate_stmt_children(s)  # counts the body's work
        cfg = self.config
        extent = const_int(s.extent)
        value = -1 if extent is None or const_int(s.min) is None else extent
        auto = (s.kind == S.ForKind.SERIAL and value >= 0 and self.normal_depth == 0
                and self.unroll_depth <= cfg.auto_max_depth)
        auto = auto and (value * self.step_count <= cfg.auto_max_step
                         or value <= cfg.auto_max_extent)
        if s.kind == S.ForKind.UNROLLED:
            if value < 0:
                raise ValueError(f"UnrollLoop: cannot unroll loop {s.loop_var.name_hint} of "
                                 f"non-constant extent {s.extent}")
            auto = True
        if auto:
            self.step_count *= value
            self.unroll_depth += 1
        else:
            self.normal_depth += 1
        if (auto and cfg.explicit_unroll) or (0 <= value <= cfg.auto_max_extent == 1):
            return unroll(s)
        if auto and s.kind != S.ForKind.UNROLLED:
            return s.with_fields(kind=S.ForKind.UNROLLED)
        return s

    def visit_seq_stmt(self, s):
        steps, unroll_depth, normal_depth, seq = 0, 0, 0, []
        for x in s.seq:
            self.step_count = self.unroll_depth = self.normal_depth = 0
            seq.append(self.visit_stmt(x))
            steps += self.step_count
            unroll_depth = max(unroll_depth, self.unroll_depth)
            normal_depth = max(normal_depth, self.normal_depth)
        self.step_count, self.unroll_depth, self.normal_depth = steps, unroll_depth, normal_depth
        if all(a is b for a, b in zip(seq, s.seq)):
            return s
        return S.SeqStmt(seq)

    def _count(self, s):
        self.step_count += 1
        return self._mutate_stmt_children(s)

    visit_buffer_store = visit_evaluate = _count


def unroll(loop: S.For) -> S.Stmt:
    """The loop's body once per iteration, with the loop variable replaced by its value."""
    lo, extent = const_int(loop.min), const_int(loop.extent)
    if extent == 0:
        return no_op()
    # Variables the body binds (inner loops, lets) get fresh copies in every copy after the
    # first, so the result binds each variable once (TVM's ConvertSSA does this later).
    bound = _bound_vars(loop.body)
    copies = []
    for i in range(extent):
        mapping = {loop.loop_var: E.IntImm(loop.loop_var.dtype, lo + i)}
        if i:
            mapping.update({v: type(v)(v.name_hint, v.dtype, v.type_annotation)
                            for v in bound})
        copies.append(_Renamer(mapping).visit(loop.body))
    return S.SeqStmt.flatten(*copies)


class _Renamer(StmtExprMutator):
    """Substitution that also renames binding sites (loop, let and allocation variables);
    buffers over a renamed allocation become new buffers over the new variable."""

    def __init__(self, mapping):
        super().__init__()
        self.mapping = mapping
        self.buffers: dict = {}

    def _buffer(self, buffer):
        new = self.buffers.get(buffer)
        if new is None:
            data = self.mapping.get(buffer.data)
            new = buffer if data is None else buffer.with_fields(data=data)
            self.buffers[buffer] = new
        return new

    def visit_buffer_load(self, e):
        new = super().visit_buffer_load(e)
        buffer = self._buffer(e.buffer)
        return new if buffer is e.buffer else new.with_fields(buffer=buffer)

    def visit_buffer_store(self, s):
        new = self._mutate_stmt_children(s)
        buffer = self._buffer(s.buffer)
        return new if buffer is s.buffer else new.with_fields(buffer=buffer)

    def visit_decl_buffer(self, s):
        new = self._mutate_stmt_children(s)
        buffer = self._buffer(s.buffer)
        return new if buffer is s.buffer else new.with_fields(buffer=buffer)

    def visit_allocate(self, op):
        return self._rebind(op, "buffer_var")

    def visit_var(self, v):
        new = self.mapping.get(v)
        return v if new is None else new

    visit_size_var = visit_var

    def visit_select(self, e):
        # a select on the loop variable (``i == 2``) keeps one branch in each copy, and only
        # that branch is copied: a Winograd transform picks its coefficients by unrolled tile
        # positions through Select chains, which would otherwise be copied whole into every
        # statement and simplified away later (4x the TIR lowering time of such a kernel)
        return fold_select(e, self.visit_expr)

    def _rebind(self, node, field):
        new = self._mutate_stmt_children(node) if isinstance(node, S.Stmt) else node
        var = self.mapping.get(getattr(node, field))
        return new.with_fields(**{field: var}) if isinstance(var, E.Var) else new

    def visit_for(self, op):
        return self._rebind(op, "loop_var")

    def visit_let_stmt(self, op):
        return self._rebind(op, "var")

    def visit_let(self, e):
        new = super().visit_let(e)
        var = self.mapping.get(e.var)
        return new.with_fields(var=var) if isinstance(var, E.Var) else new


def _bound_vars(body) -> list:
    found = []

    def visit(node):
        if isinstance(node, S.For):
            found.append(node.loop_var)
        elif isinstance(node, (S.LetStmt, E.Let)):
            found.append(node.var)
        elif isinstance(node, S.Allocate):
            found.append(node.buffer_var)

    post_order_visit(body, visit)
    return list(dict.fromkeys(found))


def unroll_loop(func, mod=None, ctx=None):
    """The function with its unrolled loops expanded."""
    config = UnrollLoopConfig.from_context(ctx)
    return func.with_body(_Unroller(config).visit_stmt(func.body))


__all__ = ["UnrollLoopConfig", "unroll", "unroll_loop"]
