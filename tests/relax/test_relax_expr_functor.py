"""Relax ExprVisitor / ExprMutator."""

import irlab as tvm
from irlab import relax, tir
from irlab.relax.analysis import free_vars, bound_vars, get_var2val


def _t(shape, dtype="float32"):
    return relax.TensorStructInfo(shape, dtype)


def _module():
    n = tir.Var("n", "int64")
    x = relax.Var("x", _t([n]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(relax.call_pure_packed("f", x, sinfo_args=_t([n])))
            lv1 = bb.emit(relax.call_pure_packed("g", lv, sinfo_args=_t([n])))
            gv = bb.emit_output(lv1)
        bb.emit_func_output(gv)
    return bb.get()


def test_identity_mutator_returns_same_function():
    mod = _module()
    func = mod["main"]
    assert relax.PyExprMutator(mod).visit_expr(func) is func


def test_mutator_rewrites_and_remaps_struct_info():
    mod = _module()

    @relax.expr_functor.mutator
    class ToInt(relax.PyExprMutator):
        def visit_call_(self, call):
            call = super().visit_call_(call)
            name = call.args[0].global_symbol
            shape = call.sinfo_args[0].dims
            return relax.call_pure_packed(name + "_i", *call.args[1:],
                                          sinfo_args=_t(shape, "int32"))

    new = ToInt(mod).visit_expr(mod["main"])
    assert new.ret_struct_info.dtype == "float32"  # declared return kept
    bindings = new.body.blocks[0].bindings
    assert [b.value.args[0].global_symbol for b in bindings[:2]] == ["f_i", "g_i"]
    assert bindings[1].value.args[1] is bindings[0].var
    assert bindings[0].var.struct_info.dtype == "int32"


def test_visitor_and_variable_analyses():
    func = _module()["main"]
    counted = []

    class Count(relax.PyExprVisitor):
        def visit_call_(self, call):
            counted.append(call)
            super().visit_call_(call)

    Count().visit_expr(func)
    assert len(counted) == 2
    assert free_vars(func) == []
    assert [v.name_hint for v in bound_vars(func)] == ["x", "lv", "lv", "gv"]
    body = func.body
    assert free_vars(body) == [func.params[0]]
    assert len(get_var2val(func)) == 3
    tvm.ir.assert_structural_equal(func, func)


def test_dispatch_is_one_cached_table_per_visitor_class():
    """Relax walkers dispatch as Relay's and TIR's: ir.functor.MethodTable, per class."""
    import pytest

    from irlab.errors import DiagnosticError
    from irlab.ir.functor import MethodTable
    from irlab.relax.expr_dispatch import visit_method

    class CountCalls(relax.PyExprVisitor):
        def __init__(self):
            self.calls = 0

        def visit_call_(self, call):
            self.calls += 1
            super().visit_call_(call)

    class MyVar(relax.Var):  # a node subclass is visited as its base
        pass

    visitor = CountCalls()
    visitor.visit_expr(_module()["main"])
    assert visitor.calls == 2
    assert isinstance(CountCalls.__dict__["_dispatch_table"], MethodTable)
    assert visit_method(CountCalls, relax.Call) is CountCalls.visit_call_
    assert visit_method(CountCalls, MyVar) is relax.PyExprVisitor.visit_var_
    with pytest.raises(DiagnosticError, match="not a Relax expression"):
        visitor.visit_expr(tir.IntImm("int32", 1))
