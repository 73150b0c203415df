"""relax.analysis.well_formed: each error is reported with the function and binding."""

import pytest

from irlab import relax, tir
from irlab.errors import DiagnosticError
from irlab.ir import IRModule
from irlab.relax.analysis import verify_well_formed, well_formed


def _t(shape):
    return relax.TensorStructInfo(shape, "float32")


def _packed(name, arg):
    return relax.call_pure_packed(name, arg, sinfo_args=_t([2]))


def _good():
    x = relax.Var("x", _t([2]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(_packed("f", x))
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)
    return bb.get()


def test_good_module_is_well_formed():
    assert well_formed(_good())
    verify_well_formed(_good())


def _module(func):
    return IRModule({"main": relax.BlockBuilder().normalize(func)})


def test_dataflow_var_used_outside_its_block():
    x = relax.Var("x", _t([2]))
    lv = relax.DataflowVar("lv", _t([2]))
    call = relax.BlockBuilder().normalize(_packed("f", x))
    block = relax.DataflowBlock([relax.VarBinding(lv, call)])
    func = relax.Function([x], relax.SeqExpr([block], lv), _t([2]))
    assert not well_formed(_module(func))
    with pytest.raises(DiagnosticError, match="DataflowVar 'lv' is used outside"):
        verify_well_formed(_module(func))


def test_undefined_symbolic_var():
    n = tir.Var("n", "int64")
    x = relax.Var("x", _t([2]))
    y = relax.Var("y", _t([n]))
    call = relax.BlockBuilder().normalize(
        relax.call_pure_packed("f", x, sinfo_args=_t([n])))
    block = relax.BindingBlock([relax.VarBinding(y, call)])
    func = relax.Function([x], relax.SeqExpr([block], y), _t([n]))
    with pytest.raises(DiagnosticError, match="symbolic variable n is used but not defined"):
        verify_well_formed(_module(func))


def test_impure_call_in_dataflow_block():
    x = relax.Var("x", _t([2]))
    lv = relax.DataflowVar("lv", _t([2]))
    gv = relax.Var("gv", _t([2]))
    call = relax.BlockBuilder().normalize(relax.op.call_packed("p", x, sinfo_args=_t([2])))
    block = relax.DataflowBlock([relax.VarBinding(lv, call), relax.VarBinding(gv, lv)])
    func = relax.Function([x], relax.SeqExpr([block], gv), _t([2]), is_pure=False)
    with pytest.raises(DiagnosticError, match="impure call of packed function 'p' inside a "
                                              "dataflow block"):
        verify_well_formed(_module(func))


def test_impure_call_in_pure_function():
    x = relax.Var("x", _t([2]))
    y = relax.Var("y", _t([2]))
    call = relax.BlockBuilder().normalize(relax.op.call_packed("p", x, sinfo_args=_t([2])))
    block = relax.BindingBlock([relax.VarBinding(y, call)])
    func = relax.Function([x], relax.SeqExpr([block], y), _t([2]))
    with pytest.raises(DiagnosticError, match="pure function"):
        verify_well_formed(_module(func))
    assert well_formed(_module(func.with_fields(is_pure=False)))


def test_undefined_variable_and_missing_global():
    x = relax.Var("x", _t([2]))
    z = relax.Var("z", _t([2]))
    func = relax.Function([x], relax.SeqExpr([], z), _t([2]))
    with pytest.raises(DiagnosticError, match="'z' is used before"):
        verify_well_formed(_module(func))
    y = relax.Var("y", _t([2]))
    call = relax.Call(relax.GlobalVar("missing"), [x])
    call._set_struct_info(_t([2]))
    block = relax.BindingBlock([relax.VarBinding(y, call)])
    func = relax.Function([x], relax.SeqExpr([block], y), _t([2]))
    with pytest.raises(DiagnosticError, match="@missing is not a function of the module"):
        verify_well_formed(IRModule({"main": func}))


def test_nested_call_is_not_normal_form():
    x = relax.Var("x", _t([2]))
    y = relax.Var("y", _t([2]))
    bb = relax.BlockBuilder()
    inner = bb.normalize(_packed("f", x))
    outer = relax.Call(inner.op, [inner.args[0], inner], sinfo_args=[_t([2])])
    outer._set_struct_info(_t([2]))
    block = relax.BindingBlock([relax.VarBinding(y, outer)])
    seq = relax.SeqExpr([block], y)
    seq._set_struct_info(_t([2]))
    func = relax.Function([x], seq, _t([2]))
    with pytest.raises(DiagnosticError, match="argument 1 of relax.call_pure_packed is a Call"):
        verify_well_formed(IRModule({"main": func}))


def test_call_tir_arity_is_checked_against_the_prim_func():
    from irlab import te

    x = relax.Var("x", _t([2]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        lv = bb.emit_te(lambda a: te.compute((2,), lambda i: a[i] * 2.0, name="dbl"), x)
        bb.emit_func_output(lv)
    mod = bb.get()
    assert well_formed(mod)
    (gv,) = [g for g in mod.get_global_vars() if g.name_hint != "main"]
    bad = relax.call_tir(gv, [x, x], _t([2]))
    y = relax.Var("y", _t([2]))
    func = relax.Function([x], relax.SeqExpr([relax.BindingBlock([
        relax.VarBinding(y, relax.BlockBuilder(mod).normalize(bad))])], y), _t([2]))
    mod["main"] = relax.BlockBuilder(mod).normalize(func)
    with pytest.raises(DiagnosticError, match="passes 2 inputs, 1 outputs and 0 tir_vars, "
                                              "but the PrimFunc takes 2 parameters"):
        verify_well_formed(mod)
