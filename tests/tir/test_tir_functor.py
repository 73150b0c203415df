"""TIR functors: dispatch, memo, copy-on-write, deep expressions."""

from irlab import tir
from irlab.tir import ExprMutator, ExprVisitor, StmtExprMutator, StmtExprVisitor


def test_dispatch_and_memo():
    i, j = tir.Var("i"), tir.Var("j")
    shared = i * j
    e = shared + shared

    class Count(ExprVisitor):
        def __init__(self):
            super().__init__()
            self.muls = 0
            self.vars = []

        def visit_mul(self, op):
            self.muls += 1
            super().visit_mul(op)

        def visit_var(self, op):
            self.vars.append(op.name_hint)

    c = Count()
    c.visit(e)
    assert c.muls == 1 and c.vars == ["i", "j"]


def test_mutator_copy_on_write():
    i, j = tir.Var("i"), tir.Var("j")
    A = tir.decl_buffer((8,), "int32", "A")
    body = tir.For(i, 0, 8, 0, tir.BufferStore(A, i + 1, (i,)))
    assert StmtExprMutator().visit(body) is body

    class SwapOne(StmtExprMutator):
        def visit_int_imm(self, op):
            return tir.const(2) if op.value == 1 else op

    new = SwapOne().visit(body)
    assert new is not body and new.body.value.b.value == 2
    assert new.loop_var is i and new.body.indices == body.body.indices
    assert new.body.indices[0] is i and body.body.value.b.value == 1
    assert tir.substitute(i + j, {j: tir.const(3)}).b.value == 3


def test_deep_sum_does_not_overflow():
    xs = [tir.Var(f"x{k}") for k in range(10_000)]
    total = xs[0]
    for x in xs[1:]:
        total = tir.Add(total, x)

    class CountVars(ExprVisitor):
        n = 0

        def visit_var(self, op):
            CountVars.n += 1

    CountVars().visit(total)
    assert CountVars.n == 10_000
    renamed = tir.substitute(total, {xs[0]: tir.const(1)})
    assert renamed is not total
    assert ExprMutator().visit(total) is total
    repr(total)


def test_stmt_visitor_sees_blocks():
    from tests.tir.test_tir_interpreter import mm_relu

    names, loads = [], []

    class V(StmtExprVisitor):
        def visit_block(self, op):
            names.append(op.name_hint)
            super().visit_block(op)

        def visit_buffer_load(self, op):
            loads.append(op.buffer.name)
            super().visit_buffer_load(op)

    V().visit(mm_relu(4).body)
    assert names == ["root", "Y", "C"]
    assert sorted(set(loads)) == ["A", "B", "Y"]
    visited = []
    tir.post_order_visit(mm_relu(2).body, lambda n: visited.append(type(n).__name__))
    assert visited[-1] == "BlockRealize" and "BufferStore" in visited


def test_method_table_built_once_per_class():
    from irlab.tir.functor import method_table

    class Base:
        def visit_add(self, e):
            return "base add"

    class Derived(Base):
        def visit_add(self, e):
            return "derived add"

    i = tir.Var("i")
    base, derived = method_table(Base), method_table(Derived)
    assert method_table(Base) is base and base is not derived
    assert base[type(i + 1)](None, i + 1) == "base add"
    assert derived[type(i + 1)](None, i + 1) == "derived add"
    assert base[type(i)] is None  # no visit_var: the caller raises its own error
    assert "Add" in repr(base)


def test_walkers_report_unknown_nodes():
    import pytest

    from irlab.errors import CodegenError, TIRError
    from irlab.target.codegen_c import _FunctionWriter
    from irlab.target.codegen_llvm import _FunctionBuilder
    from irlab.tir import stmt as S
    from irlab.tir.interpreter import TIRInterpreter

    class OddImm(tir.IntImm):  # node kinds no walker knows
        pass

    class OddStmt(S.Evaluate):
        pass

    odd = OddStmt(tir.IntImm("int32", 0))
    with pytest.raises(TIRError, match="cannot evaluate OddImm"):
        TIRInterpreter.__new__(TIRInterpreter)._expr(OddImm("int32", 1))
    with pytest.raises(TIRError, match="cannot run OddStmt"):
        TIRInterpreter.__new__(TIRInterpreter)._stmt(odd)
    with pytest.raises(CodegenError, match="C codegen cannot translate OddStmt"):
        _FunctionWriter.__new__(_FunctionWriter).emit_stmt(odd)
    with pytest.raises(CodegenError, match="LLVM codegen cannot translate OddStmt"):
        _FunctionBuilder.__new__(_FunctionBuilder).stmt(odd)


def test_substitute_keeps_blocks_that_do_not_use_the_var():
    """A loop var reaches a block only through its realize's bindings: substituting it
    rebuilds the bindings and keeps the block itself (the same object)."""
    from tests.tir.test_tir_interpreter import mm_relu

    func = mm_relu(4)
    realizes = []
    tir.post_order_visit(func.body, lambda n: realizes.append(n)
                         if isinstance(n, tir.stmt.BlockRealize) else None)
    inner = next(r for r in realizes if r.block.name_hint == "Y")
    found = []
    tir.post_order_visit(inner.iter_values[0], lambda n: found.append(n)
                         if isinstance(n, tir.Var) else None)
    loop_var = found[0]
    new = tir.substitute(inner, {loop_var: loop_var + 1})
    assert new is not inner and new.block is inner.block
    iter_var = inner.block.iter_vars[0].var
    renamed = tir.substitute(inner, {iter_var: iter_var + 1})
    assert renamed.block is not inner.block  # a var the block uses is replaced inside it


def test_stmt_mutator_rewrites_statements_and_leaves_expressions():
    from irlab.tir.functor import StmtMutator

    i, j = tir.Var("i"), tir.Var("j")
    A = tir.decl_buffer((8, 8), "int32", "A")
    store = tir.BufferStore(A, i * 8 + j, (i, j))
    body = tir.SeqStmt([tir.For(i, 0, 8, 0, tir.For(j, 0, 8, 0, store)), tir.Evaluate(0)])
    assert StmtMutator().visit(body) is body

    class SerialToUnrolled(StmtMutator):
        def __init__(self):
            super().__init__()
            self.exprs = 0

        def visit_expr(self, e):
            self.exprs += 1
            return super().visit_expr(e)

        def visit_for(self, s):
            return self._mutate_stmt_children(s).with_fields(kind=tir.ForKind.UNROLLED)

    mutator = SerialToUnrolled()
    new = mutator.visit(body)
    assert mutator.exprs == 0  # no expression walked
    outer = new.seq[0]
    assert outer.kind == outer.body.kind == tir.ForKind.UNROLLED
    assert outer.body.body is store and new.seq[1] is body.seq[1]
