"""Relax IR nodes and struct info: construction, struct-info deduction, structural equality."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax, tir
from irlab.errors import IrlabError
from irlab.ir import IRModule


def _tensor(shape, dtype="float32"):
    return relax.TensorStructInfo(shape, dtype)


def test_struct_info_fields():
    n = tir.Var("n", "int64")
    sinfo = _tensor([n, 4])
    assert sinfo.ndim == 2 and sinfo.dtype == "float32"
    assert sinfo.dims[0] is n and sinfo.dims[1].value == 4 and sinfo.dims[1].dtype == "int64"
    unknown = relax.TensorStructInfo(dtype="int32", ndim=3)
    assert unknown.shape is None and unknown.ndim == 3
    assert relax.ShapeStructInfo([n, 2]).ndim == 2
    assert relax.ShapeStructInfo(ndim=-1).values is None
    assert str(sinfo) == 'R.Tensor((n, 4), dtype="float32")'


def test_struct_info_is_base_of():
    n = tir.Var("n", "int64")
    assert relax.ObjectStructInfo().is_base_of(_tensor([1, 2]))
    assert relax.TensorStructInfo(dtype="float32", ndim=2).is_base_of(_tensor([n, 2]))
    assert not _tensor([n, 2]).is_base_of(relax.TensorStructInfo(dtype="float32", ndim=2))
    assert _tensor([n * 2]).is_base_of(_tensor([n + n]))
    assert not _tensor([3]).is_base_of(_tensor([4]))


def test_nodes_are_immutable():
    x = relax.Var("x", _tensor([2]))
    with pytest.raises(AttributeError):
        x.name_hint = "y"


def test_constant_struct_info():
    c = relax.const(np.ones((2, 3), "float32"))
    assert c.struct_info.dtype == "float32"
    assert [d.value for d in c.struct_info.dims] == [2, 3]
    assert relax.const(1.5).struct_info.ndim == 0


def test_leaves_struct_info():
    n = tir.Var("n", "int64")
    assert isinstance(relax.ShapeExpr([n, 3]).struct_info, relax.ShapeStructInfo)
    prim = relax.PrimValue(3)
    assert prim.struct_info.dtype == "int64" and prim.value.value == 3
    assert isinstance(relax.StringImm("a").struct_info, relax.ObjectStructInfo)
    assert isinstance(relax.ExternFunc("f").struct_info, relax.FuncStructInfo)


def test_normalize_tuple_and_get_item():
    bb = relax.BlockBuilder()
    x = relax.Var("x", _tensor([2]))
    y = relax.Var("y", _tensor([3], "int32"))
    tup = bb.normalize(relax.Tuple([x, y]))
    assert isinstance(tup.struct_info, relax.TupleStructInfo)
    item = bb.normalize(relax.TupleGetItem(tup, 1))
    assert item.struct_info.dtype == "int32"
    with pytest.raises(IrlabError, match="out of range"):
        bb.normalize(relax.TupleGetItem(tup, 2))


def test_var_without_struct_info_is_an_error():
    with pytest.raises(IrlabError, match="no struct info"):
        relax.BlockBuilder().normalize(relax.Var("x"))


def _func(param_name, sym_name):
    n = tir.Var(sym_name, "int64")
    x = relax.Var(param_name, _tensor([n, 4]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(relax.Tuple([x, x]))
            gv = bb.emit_output(relax.TupleGetItem(lv, 0))
        bb.emit_func_output(gv)
    return bb.get()


def test_structural_equal_maps_vars_and_symbolic_dims():
    a, b = _func("x", "n"), _func("y", "m")
    tvm.ir.assert_structural_equal(a, b)
    assert tvm.ir.structural_hash(a) == tvm.ir.structural_hash(b)


def test_structural_equal_sees_struct_info():
    x = relax.Var("x", _tensor([2, 4]))
    y = relax.Var("x", _tensor([2, 5]))
    f1 = relax.Function([x], relax.SeqExpr([], x))
    f2 = relax.Function([y], relax.SeqExpr([], y))
    assert not tvm.ir.structural_equal(f1, f2)


def test_match_cast_defines_symbolic_vars():
    def build(name):
        m = tir.Var(name, "int64")
        x = relax.Var("x", relax.TensorStructInfo(dtype="float32", ndim=1))
        bb = relax.BlockBuilder()
        with bb.function("main", [x]):
            y = bb.match_cast(x, _tensor([m]))
            bb.emit_func_output(y)
        return bb.get()

    a, b = build("m"), build("k")
    tvm.ir.assert_structural_equal(a, b)
    ret = a["main"].ret_struct_info
    assert ret.ndim == 1


def test_function_in_module_next_to_prim_func():
    mod = _func("x", "n")
    assert isinstance(mod["main"], relax.Function)
    assert mod["main"].attrs["global_symbol"] == "main"
    assert "R.function" in str(mod)


def test_call_packed_struct_info():
    x = relax.Var("x", _tensor([2]))
    bb = relax.BlockBuilder()
    call = bb.normalize(relax.op.call_packed("my.func", x, sinfo_args=_tensor([2])))
    assert isinstance(call.op, relax.ExternFunc)
    assert call.struct_info.dims[0].value == 2
    pure = bb.normalize(relax.call_pure_packed("f", x, sinfo_args=relax.ObjectStructInfo()))
    assert pure.op.name == "relax.call_pure_packed"
    assert isinstance(pure.struct_info, relax.ObjectStructInfo)
    dps = bb.normalize(relax.call_dps_packed("g", [x], _tensor([2], "int32")))
    assert dps.struct_info.dtype == "int32"


def test_call_of_function_with_symbolic_params():
    n = tir.Var("n", "int64")
    x = relax.Var("x", _tensor([n, 4]))
    bb = relax.BlockBuilder()
    with bb.function("inner", [x], private=True):
        bb.emit_func_output(relax.Tuple([x, x]))
    y = relax.Var("y", _tensor([7, 4]))
    with bb.function("main", [y]):
        out = bb.emit(relax.Call(bb.get().get_global_var("inner"), [y]))
        bb.emit_func_output(out)
    mod = bb.get()
    ret = mod["main"].ret_struct_info
    assert [d.value for d in ret.fields[0].dims] == [7, 4]
    assert "global_symbol" not in (mod["inner"].attrs.keys() if mod["inner"].attrs else [])


def test_return_struct_info_erases_symbols_defined_inside():
    m = tir.Var("m", "int64")
    x = relax.Var("x", relax.TensorStructInfo(dtype="float32", ndim=2))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        y = bb.match_cast(x, relax.TensorStructInfo([m, 3], "float32"))
        bb.emit_func_output(relax.Tuple([y, relax.ShapeExpr([m])]))
    ret = bb.get()["main"].ret_struct_info
    assert ret.fields[0].dims is None and ret.fields[0].ndim == 2
    assert ret.fields[1].values is None and ret.fields[1].ndim == 1
    assert relax.analysis.well_formed(bb.get())


def test_return_struct_info_with_undefined_symbol_is_not_well_formed():
    from irlab.errors import DiagnosticError

    m = tir.Var("m", "int64")
    x = relax.Var("x", relax.TensorStructInfo(dtype="float32", ndim=1))
    y = relax.Var("y", relax.TensorStructInfo([m], "float32"))
    body = relax.SeqExpr([relax.BindingBlock([relax.MatchCast(y, x, y.struct_info)])], y)
    func = relax.BlockBuilder().normalize(relax.Function([x], body, y.struct_info))
    with pytest.raises(DiagnosticError, match="return struct info uses symbolic variables "
                                              "not defined by the parameters: m"):
        relax.analysis.verify_well_formed(IRModule({"main": func}))


def test_const_default_dtypes_follow_tvm():
    assert relax.const(1).struct_info.dtype == "int32"
    assert relax.const(1.5).struct_info.dtype == "float32"
    assert relax.const(True).struct_info.dtype == "bool"
    assert relax.const(np.arange(3)).struct_info.dtype == "int32"
    assert relax.const(3, "int64").struct_info.dtype == "int64"


def test_iterating_an_expression():
    x = relax.Var("x", relax.TupleStructInfo([_tensor([2]), _tensor([3])]))
    first, second = x
    assert isinstance(first, relax.TupleGetItem) and second.index == 1
    with pytest.raises(IndexError):
        x[2]
    with pytest.raises(TypeError, match="not iterable"):
        list(relax.Var("y", _tensor([2])))
    a = relax.Var("a", _tensor([2]))
    assert list(relax.Tuple([a, a])) == [a, a]
    assert [d.value for d in relax.ShapeExpr([1, 2])] == [1, 2]
