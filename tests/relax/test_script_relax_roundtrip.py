"""TVMScript for Relax: each construct parses, prints in TVM's layout, and
``from_source(mod.script())`` is structurally equal to the module (and prints the same)."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax, tir
from irlab.errors import ParseError
from irlab.ir import assert_structural_equal
from irlab.script import from_source
from irlab.script import ir as I
from irlab.script import relax as R
from irlab.script import tir as T


def round_trip(mod):
    """Print, parse back, compare; returns the text."""
    text = mod.script()
    again = from_source(text)
    assert_structural_equal(mod, again)
    assert again.script() == text
    return text


@I.ir_module
class Exp:
    @T.prim_func
    def exp(x: T.handle, y: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n,), "float32")
        Y = T.match_buffer(y, (n,), "float32")
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.spatial(n, i)
                Y[vi] = T.exp(X[vi])

    @R.function
    def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        cls = Exp
        with R.dataflow():
            lv = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor(("n",), "float32"))
            gv = R.call_tir(cls.exp, (lv,), out_sinfo=R.Tensor(("n",), "float32"))
            R.output(gv)
        return gv


def test_module_mixing_prim_func_and_relax_function_prints_tvm_layout():
    text = round_trip(Exp)
    assert text.startswith("# from tvm.script import ir as I\n"
                           "# from tvm.script import tir as T\n"
                           "# from tvm.script import relax as R\n\n@I.ir_module\nclass Module:")
    expected = '''
    @R.function
    def main(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((n,), dtype="float32"))
            gv = R.call_tir(cls.exp, (lv,), out_sinfo=R.Tensor((n,), dtype="float32"))
            R.output(gv)
        return gv
'''
    assert text.endswith(expected)
    assert str(Exp) == text  # print(mod) shows TVMScript for a Relax module


def test_structure_of_parsed_module():
    main = Exp["main"]
    (block,) = main.body.blocks
    assert isinstance(block, relax.DataflowBlock)
    lv, gv = [b.var for b in block.bindings]
    assert isinstance(lv, relax.DataflowVar) and not isinstance(gv, relax.DataflowVar)
    call = block.bindings[0].value
    assert call.op.name == "relax.call_tir"
    assert call.args[0] is Exp.get_global_var("exp")
    # one symbolic n for the parameter, the output and the return annotation
    n = main.params[0].struct_info.dims[0]
    assert isinstance(n, tir.Var) and n.name_hint == "n" and n.dtype == "int64"
    assert gv.struct_info.dims[0] is n and main.ret_struct_info.dims[0] is n
    assert main.attrs["global_symbol"] == "main"


def test_symbolic_vars_shared_across_parameters():
    @R.function
    def f(x: R.Tensor(("n", "k"), "float32"), w: R.Tensor(("k", "m"), "float32")):
        return w

    n, k = f.params[0].struct_info.dims
    k2, m = f.params[1].struct_info.dims
    assert k is k2 and m is not n
    text = f.script()
    assert 'def f(x: R.Tensor(("n", "k"), dtype="float32"), ' \
           'w: R.Tensor(("k", "m"), dtype="float32")) -> ' \
           'R.Tensor(("k", "m"), dtype="float32"):' in text
    # declared in the order TVM prints them: the return annotation first, then the params
    assert "    k = T.int64()\n    m = T.int64()\n    n = T.int64()\n" in text
    assert_structural_equal(from_source(text), f)


SINFO = [
    'R.Tensor((2, 3), dtype="float32")',
    'R.Tensor(("n", 4), dtype="float16")',
    'R.Tensor(("n * 4",), dtype="int32")',
    'R.Tensor(dtype="float32", ndim=2)',
    'R.Tensor(dtype="float32")',
    "R.Tensor(ndim=3)",
    "R.Tensor",
    "R.Tensor((), dtype=\"bool\")",
    "R.Shape([2, 3])",
    'R.Shape(["n", 4])',
    "R.Shape(ndim=2)",
    "R.Shape(ndim=-1)",
    'R.Tuple(R.Tensor((2,), dtype="float32"), R.Shape(ndim=1))',
    "R.Tuple",
    "R.Object",
    'R.Prim("int64")',
    'R.Prim(value="n")',
    'R.Callable((R.Tensor((2,), dtype="float32"),), R.Object, True)',
    "R.Callable",
]


@pytest.mark.parametrize("sinfo", SINFO)
def test_struct_info_annotations(sinfo):
    text = f'''
@R.function
def f(x: {sinfo}, y: R.Tensor(("n",), dtype="float32")) -> {sinfo}:
    return x
'''
    f = from_source(text)
    printed = f.script()
    assert f"def f(x: {sinfo}" in printed
    assert_structural_equal(from_source(printed), f)


def test_dataflow_and_plain_blocks_match_cast_and_shapes():
    @I.ir_module
    class Mod:
        @T.prim_func
        def copy(a: T.handle, b: T.handle):
            n = T.int64()
            A = T.match_buffer(a, (n,), "float32")
            B = T.match_buffer(b, (n,), "float32")
            for i in range(n):
                with T.block("B"):
                    vi = T.axis.spatial(n, i)
                    B[vi] = A[vi]

        @R.function
        def main(x: R.Tensor(dtype="float32", ndim=1), s: R.Shape(["m"])):
            m = T.int64()
            cls = Mod
            y = R.match_cast(x, R.Tensor(("k",), "float32"))  # defines k
            k = T.int64()
            with R.dataflow():
                lv = R.call_tir(cls.copy, (y,), out_sinfo=R.Tensor((k,), "float32"))
                shape: R.Shape([k, m]) = R.shape([k, m])
                t = (lv, shape)
                first = t[0]
                R.output(first, shape)
            size = R.prim_value(k * 2)
            return (first, shape, size)

    text = round_trip(Mod)
    assert 'y: R.Tensor((k,), dtype="float32") = R.match_cast(x, ' \
           'R.Tensor((k,), dtype="float32"))' in text
    assert "R.output(shape, first)" in text  # in binding order, as TVM
    assert "t: R.Tuple(" in text and "first: R.Tensor((k,), dtype=\"float32\") = t[0]" in text
    assert "size: R.Prim(value=k * 2) = R.prim_value(k * 2)" in text
    main = Mod["main"]
    assert [type(b) for b in main.body.blocks] == [relax.BindingBlock, relax.DataflowBlock,
                                                   relax.BindingBlock]
    assert isinstance(main.body.blocks[0].bindings[0], relax.MatchCast)


def test_call_packed_call_dps_packed_and_impure_function():
    @R.function(pure=False)
    def f(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        y = R.call_dps_packed("my_dps", (x,), out_sinfo=R.Tensor((4,), "float32"))
        R.call_packed("custom_inplace_update", y, sinfo_args=R.Tuple())
        z: R.Object = R.call_packed("my_object")
        return y

    assert not f.is_pure
    calls = [b.value for b in f.body.blocks[0].bindings]
    assert calls[0].op.name == "relax.call_dps_packed"
    assert calls[0].args[0].global_symbol == "my_dps"
    assert isinstance(calls[1].op, relax.ExternFunc)
    assert calls[1].op.global_symbol == "custom_inplace_update"
    text = f.script()
    assert "@R.function(pure=False)\ndef f(" in text
    assert 'y = R.call_dps_packed("my_dps", (x,), out_sinfo=R.Tensor((4,), dtype="float32"))' \
        in text
    assert '    R.call_packed("custom_inplace_update", y, sinfo_args=(R.Tuple,))\n' in text
    assert_structural_equal(from_source(text), f)


def test_constants_strings_and_call_tir_options():
    @I.ir_module
    class Mod:
        @T.prim_func
        def two(a: T.Buffer((2,), "float32"), b: T.Buffer((2,), "float32"),
                c: T.Buffer((2,), "float32")):
            for i in range(2):
                with T.block("c"):
                    vi = T.axis.spatial(2, i)
                    b[vi] = a[vi]
                    c[vi] = a[vi]

        @R.function(private=True)
        def helper(x: R.Tensor((2,), "float32")):
            R.func_attr({"some_attr": 1, "note": "hi"})
            cls = Mod
            pair = R.call_tir(cls.two, (x,), out_sinfo=[R.Tensor((2,), "float32"),
                                                       R.Tensor((2,), "float32")])
            c = R.const([1.5, -2.0], "float32")
            one = R.const(1, "int32")
            s = R.str("text")
            return (pair, c, one, s)

    text = round_trip(Mod)
    assert "@R.function(private=True)\n    def helper(" in text
    assert 'R.func_attr({"note": "hi", "some_attr": 1})' in text or \
        'R.func_attr({"some_attr": 1, "note": "hi"})' in text
    assert ("out_sinfo=[R.Tensor((2,), dtype=\"float32\"), "
            "R.Tensor((2,), dtype=\"float32\")])") in text
    assert 'R.const([1.5, -2.0], "float32")' in text and 'R.const(1, "int32")' in text
    assert "global_symbol" not in str(Mod["helper"].attrs or "")


def test_calls_between_relax_functions():
    @I.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
            cls = Mod
            y = cls.twice(x)
            return y

        @R.function
        def twice(a: R.Tensor(("m",), "float32")) -> R.Tensor(("m",), "float32"):
            return a

    call = Mod["main"].body.blocks[0].bindings[0].value
    assert call.op is Mod.get_global_var("twice")
    assert Mod["main"].body.blocks[0].bindings[0].var.struct_info.dims[0] is \
        Mod["main"].params[0].struct_info.dims[0]
    text = round_trip(Mod)
    assert 'y: R.Tensor((n,), dtype="float32") = cls.twice(x)' in text


def test_standalone_function_script_and_tvm_script_names():
    @R.function
    def f(x: R.Tensor((2,), "float32")):
        return x

    assert f.script() == ('# from tvm.script import relax as R\n\n@R.function\n'
                          'def f(x: R.Tensor((2,), dtype="float32")) -> '
                          'R.Tensor((2,), dtype="float32"):\n    return x\n')
    assert tvm.script.relax.Tensor is R.Tensor
    assert "call_tir" in dir(R)


def test_block_builder_module_with_emit_te_round_trips():
    from irlab import te

    def matmul(a, b):
        k = te.reduce_axis((0, 4), "k")
        return te.compute((a.shape[0], b.shape[1]),
                          lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="mm")

    bb = relax.BlockBuilder()
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n, 4], "float32"))
    w = relax.Var("w", relax.TensorStructInfo([4, 3], "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            lv = bb.emit_te(matmul, x, w)
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)
    text = round_trip(bb.get())
    assert "lv = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((n, 3), dtype=\"float32\"))" \
        in text
    assert "    @T.prim_func\n    def matmul(" in text


def test_if_else_binds_the_value_of_both_branches():
    @R.function
    def f(c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        if c:
            a = (x, x)
            y: R.Tensor((2,), "float32") = a[0]
        else:
            y: R.Tensor((2,), "float32") = x
        return y

    binding = f.body.blocks[0].bindings[0]
    assert isinstance(binding.value, relax.If)
    assert [len(b.bindings) for b in binding.value.true_branch.blocks] == [2]
    assert binding.value.false_branch.blocks == ()
    text = f.script()
    assert '''    if c:
        a: R.Tuple(R.Tensor((2,), dtype="float32"), R.Tensor((2,), dtype="float32")) = (x, x)
        gv: R.Tensor((2,), dtype="float32") = a[0]
        y: R.Tensor((2,), dtype="float32") = gv
    else:
        y: R.Tensor((2,), dtype="float32") = x
    return y''' in text
    assert_structural_equal(from_source(text), f)


def test_call_tir_tir_vars_pure_packed_and_dtype_values():
    @I.ir_module
    class Mod:
        @T.prim_func
        def fill(a: T.handle, m: T.int64):
            n = T.int64()
            A = T.match_buffer(a, (n,), "float32")
            for i in range(n):
                with T.block("A"):
                    vi = T.axis.spatial(n, i)
                    A[vi] = T.Cast("float32", m)

        @R.function
        def main(x: R.Tensor(("n",), "float32")):
            n = T.int64()
            cls = Mod
            y = R.call_tir(cls.fill, (), out_sinfo=R.Tensor((n,), "float32"),
                           tir_vars=R.shape([n * 2]))
            z = R.call_pure_packed("my_pure", y, x, sinfo_args=R.Tensor((n,), "float32"))
            d = R.dtype("float16")
            return (z, d)

    text = round_trip(Mod)
    assert "tir_vars=R.shape([n * 2])" in text
    assert 'R.call_pure_packed("my_pure", y, x, sinfo_args=(R.Tensor((n,), ' \
           'dtype="float32"),))' in text
    assert 'd: R.Object = R.dtype("float16")' in text


def test_call_packed_without_sinfo_args():
    @R.function(pure=False)
    def f(x: R.Tensor((2,), "float32")):
        _ = R.call_packed("log_it", x)
        return x

    call = f.body.blocks[0].bindings[0].value
    assert call.sinfo_args == ()
    text = f.script()
    assert '_: R.Object = R.call_packed("log_it", x)' in text
    assert_structural_equal(from_source(text), f)


def test_extern_func_entries_of_a_module():
    @I.ir_module
    class Mod:
        my_ext = R.ExternFunc("my_ext")

        @R.function
        def main(x: R.Tensor((2,), "float32")):
            return x

    assert isinstance(Mod["my_ext"], relax.ExternFunc)
    text = round_trip(Mod)
    assert '    my_ext = R.ExternFunc("my_ext")\n' in text


def test_signature_dims_are_usable_in_the_body_without_declaration():
    """As TVM's parser: ``"n"`` in a parameter's struct info defines ``n`` for the body."""
    @R.function
    def f(x: R.Tensor(("n", 2), "float32")):
        y = R.match_cast(x, R.Tensor((n, 2), "float32"))  # noqa: F821
        return y

    n = f.params[0].struct_info.dims[0]
    assert f.body.blocks[0].bindings[0].struct_info.dims[0] is n


def test_recursive_function():
    @I.ir_module
    class Mod:
        @R.function
        def count(n: R.Tensor((), "int64"), c: R.Tensor((), "bool")) -> R.Tensor((), "int64"):
            cls = Mod
            if c:
                r: R.Tensor((), "int64") = cls.count(n, c)
            else:
                r: R.Tensor((), "int64") = n
            return r

    branch = Mod["count"].body.blocks[0].bindings[0].value.true_branch
    assert branch.blocks[0].bindings[0].value.op is Mod.get_global_var("count")
    assert round_trip(Mod).count("cls.count(n, c)") == 1


def test_big_constants_are_metadata_unless_show_meta():
    @R.function
    def f(x: R.Tensor((20,), "float32")):
        y = R.add(x, R.const(np.arange(20, dtype="float32")))
        z = R.add(y, R.const([1.5], "float32"))
        return z

    text = f.script()
    assert 'R.add(x, metadata["relax.expr.Constant"][0])' in text
    assert 'R.const([1.5], "float32")' in text  # small ones stay inline
    assert text.endswith("# Metadata omitted. Use show_meta=True in script() method to show "
                         "it.\n")
    with pytest.raises(ParseError, match="show_meta=True"):
        from_source(text)
    big = f.body.blocks[0].bindings[0].value.args[1]
    assert_structural_equal(
        from_source(text, extra_vars={"metadata": {"relax.expr.Constant": [big]}}), f)
    full = f.script(show_meta=True)
    assert "R.const([0.0, 1.0, 2.0," in full and "metadata" not in full
    assert_structural_equal(from_source(full), f)
    mod = tvm.IRModule({"f": f})
    assert "metadata" in mod.script() and "metadata" not in mod.script(show_meta=True)


def test_variables_named_like_the_script_names_are_renamed():
    x = relax.Var("R", relax.TensorStructInfo([2], "float32"))
    y = relax.Var("cls", relax.TensorStructInfo([2], "float32"))
    func = relax.Function([x, y], relax.SeqExpr([], y), attrs={"global_symbol": "main"})
    mod = tvm.IRModule({"main": relax.BlockBuilder().normalize(func)})
    text = round_trip(mod)
    assert 'def main(R_1: R.Tensor((2,), dtype="float32"), cls_1: R.Tensor(' in text


def test_unpacking_negation_and_void_values():
    @R.function
    def f(x: R.Tensor(dtype="float32", ndim=2)) -> R.Tensor(dtype="float32", ndim=2):
        n, m = T.int64(), T.int64()
        y = R.match_cast(x, R.Tensor((n, m), "float32"))
        a, b = y, -y
        t = (a, b)
        c, d = t
        e: R.Tuple() = R.tuple()
        return R.add(c, d)

    names = [b.var.name_hint for b in f.body.blocks[0].bindings]
    assert names[:4] == ["y", "a", "b", "t"] and names[4:6] == ["c", "d"]
    assert f.body.blocks[0].bindings[2].value.op.name == "relax.negative"
    assert isinstance(f.body.blocks[0].bindings[4].value, relax.TupleGetItem)
    # n, m are defined inside: the return type cannot name them (erased to ndim=2, as TVM)
    assert f.ret_struct_info.dims is None and f.ret_struct_info.ndim == 2
    text = f.script()
    assert "    c: R.Tensor((n, m), dtype=\"float32\") = t[0]\n" in text
    assert "    R.tuple()\n" in text  # a void value nobody reads is a statement
    assert_structural_equal(from_source(text), f)

    @R.function
    def g(x: R.Tuple()):
        y: R.Tuple() = R.tuple()
        return y

    text = g.script()
    assert "y: R.Tuple = R.tuple()" in text  # read by `return y`: stays a binding
    assert_structural_equal(from_source(text), g)


def test_none_return_annotation_means_nothing_returned():
    @R.function(pure=False)
    def f(x: R.Tensor((2,), "float32")) -> None:
        y = R.call_packed("log_it", x, sinfo_args=R.Tuple())
        return y

    assert f.ret_struct_info == relax.TupleStructInfo([]) or \
        isinstance(f.ret_struct_info, relax.TupleStructInfo)


def test_body_more_precise_than_the_return_annotation_gives_the_type():
    @R.function
    def f(x: R.Tensor((2, 3), "float32")) -> R.Tensor(dtype="float32", ndim=2):
        return x

    assert [d.value for d in f.ret_struct_info.dims] == [2, 3]  # as TVM's Function


def test_python_operators_on_values_and_dims():
    @R.function
    def f(x: R.Tensor(("n",), "float32"), y: R.Tensor(("n",), "float32"),
          c: R.Tensor((), "bool")):
        n = T.int64()
        a = x // y
        b = x % y
        d = x < y
        e = R.shape([n // 2, n % 3])
        if c:
            z = R.match_cast(x, R.Tensor((n,), "float32"))
        else:
            z = y
        return (a, b, d, e, z)

    ops = [b.value.op.name for b in f.body.blocks[0].bindings[:3]]
    assert ops == ["relax.floor_divide", "relax.floor_mod", "relax.less"]
    dims = f.body.blocks[0].bindings[3].value.values
    assert isinstance(dims[0], tir.FloorDiv) and isinstance(dims[1], tir.FloorMod)
    branch = f.body.blocks[0].bindings[4].value.true_branch
    assert isinstance(branch.blocks[0].bindings[0], relax.MatchCast)
    assert_structural_equal(from_source(f.script()), f)



def test_relax_nodes_print_alone_as_tvm_does():
    x = tir.Var("x", "int64")
    a = relax.Var("a", relax.TensorStructInfo([1, x, 3], "float32"))
    b = relax.Var("b", relax.TensorStructInfo([1, 5, 3], "float32"))
    assert relax.ShapeStructInfo([1, x, 3]).script() == "x = T.int64()\nR.Shape([1, x, 3])\n"
    assert relax.ObjectStructInfo().script() == "R.Object\n"
    assert relax.TupleGetItem(relax.Tuple([a, b]), 1).script() == (
        'x = T.int64()\na: R.Tensor((1, x, 3), dtype="float32")\n'
        'b: R.Tensor((1, 5, 3), dtype="float32")\n(a, b)[1]\n')
    assert relax.MatchCast(b, a, b.struct_info).script().endswith(
        'b: R.Tensor((1, 5, 3), dtype="float32") = R.match_cast(a, '
        'R.Tensor((1, 5, 3), dtype="float32"))\n')
    c = relax.DataflowVar("c", a.struct_info)
    block = relax.DataflowBlock([relax.VarBinding(c, relax.op.sin(a)),
                                 relax.VarBinding(b, relax.op.sin(c))])
    assert block.script().endswith('with R.dataflow():\n'
                                   '    c: R.Tensor((1, x, 3), dtype="float32") = R.sin(a)\n'
                                   '    b: R.Tensor((1, 5, 3), dtype="float32") = R.sin(c)\n'
                                   '    R.output(b)\n')
    assert relax.PrimValue(1).script() == "R.prim_value(1)\n"


def test_module_order_prim_funcs_extern_funcs_relax_functions_main_last():
    @I.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            return x

        @R.function(private=True)
        def a_helper(x: R.Tensor((2,), "float32")):
            return x

        zz_ext = R.ExternFunc("zz_ext")

        @T.prim_func
        def z_prim(A: T.Buffer((2,), "float32")):
            T.evaluate(0)

    text = round_trip(Mod)
    order = [text.index(s) for s in ("def z_prim", "zz_ext = R.ExternFunc", "def a_helper",
                                     "def main")]
    assert order == sorted(order)
    assert '    zz_ext = R.ExternFunc("zz_ext")\n    @R.function(private=True)\n' in text


def test_local_function():
    @I.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((), "int32")) -> R.Tensor((), "int32"):
            @R.function
            def nested(y: R.Tensor((), "int32")) -> R.Tensor((), "int32"):
                return R.add(y, x)

            z = nested(x)
            return z

    binding = Mod["main"].body.blocks[0].bindings[0]
    assert isinstance(binding.value, relax.Function)
    assert "global_symbol" not in (binding.value.attrs.as_dict() if binding.value.attrs else {})
    text = round_trip(Mod)
    assert '''        # from tvm.script import relax as R

        @R.function
        def nested(y: R.Tensor((), dtype="int32")) -> R.Tensor((), dtype="int32"):
            gv: R.Tensor((), dtype="int32") = R.add(y, x)
            return gv

        z: R.Tensor((), dtype="int32") = nested(x)''' in text


def test_prim_value_parameter_defines_its_dim_and_extern_func_binding():
    @R.function(pure=False)
    def f(s: R.Prim(value="m"), x: R.Tensor(("m * 2",), "float32")):
        ext = R.ExternFunc("ext")
        y = R.call_dps_packed(ext, (x,), out_sinfo=R.Tensor(("m * 2",), "float32"))
        return y

    m = f.params[0].struct_info.value
    assert f.params[1].struct_info.dims[0].a is m
    text = f.script()
    assert "ext: R.Callable = R.ExternFunc(\"ext\")" in text
    assert_structural_equal(from_source(text), f)
