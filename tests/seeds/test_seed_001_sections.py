"""Seed 001's remaining code examples (sections 0x1.1, 0x1.4 D1/D1a/D2a/D2b and 0x3), each run
with only the imports changed (``import irlab as tvm``, ``from irlab.script import relax as R``)
and checked against numpy. Section 0x1.4's ``MyIRModule`` is tests/relax/test_script_relax_seed.py.

Section 0x1.4 quotes the 2022 Relax wiki, whose syntax TVM itself no longer accepts; those
examples are rewritten in today's TVMScript, each change said where it is made:
``R.Tensor[(n, 4), "f32"]`` -> ``R.Tensor((n, 4), "float32")`` (symbolic dims declared with
``T.int64()``), ``R.match_shape`` -> ``R.match_cast``, ``R.outputs`` -> ``R.output``,
``R.call_tir(shape, "packed_name", [args])`` -> ``R.call_dps_packed("packed_name", (args,),
out_sinfo=...)``, and a packed call returning a shape inside a dataflow block ->
``R.call_pure_packed`` (dataflow blocks are pure).
"""

import os
import sys

import numpy as np
import pytest

import irlab as tvm
from irlab import relax, te
from irlab.ir import IRModule
from irlab.relax.testing import evaluate
from irlab.script import relax as R
from irlab.script import tir as T

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "script"))
import seed_modules as seed  # noqa: E402  (the seed's mm_relu and vector add, as written)


# -- 0x1.1 Tensor IR: mm_relu against the seed's own numpy loops --------------------------------
def test_seed_001_0x1_1_mm_relu_matches_lnumpy_mm_relu():
    # The seed's MyModule, built, against its lnumpy_mm_relu (smaller inputs would change the
    # seed's code; 128^3 Python iterations take a few seconds).
    a_np = np.random.rand(128, 128).astype("float32")
    b_np = np.random.rand(128, 128).astype("float32")
    c_np = np.empty((128, 128), dtype="float32")
    seed.lnumpy_mm_relu(a_np, b_np, c_np)
    c_nd = tvm.nd.empty((128, 128), dtype="float32")
    tvm.build(seed.MyModule, target="llvm")["mm_relu"](tvm.nd.array(a_np), tvm.nd.array(b_np),
                                                       c_nd)
    np.testing.assert_allclose(c_nd.numpy(), c_np, rtol=1e-5)


# -- 0x1.4 D1: shape deduction as first-class computation ---------------------------------------
@pytest.fixture
def d1_packed_funcs():
    """The seed's ``myshape_func`` (an opaque shape function) and ``custom_func`` (a packed
    function in destination-passing style) are not given; these are the minimal ones: the
    shape unchanged, and ``out = 2 * x``."""
    calls = []

    def myshape_func(shape):
        calls.append(tuple(shape))
        return shape

    def custom_func(x, out):
        out.copyfrom(x.numpy() * 2)

    tvm.register_func("myshape_func", myshape_func, override=True)
    tvm.register_func("custom_func", custom_func, override=True)
    yield calls
    for name in ("myshape_func", "custom_func"):
        tvm.runtime.registry.remove_global_func(name)


def _d1_shape_example():
    # Rewritten in today's syntax (see the module docstring); the seed's comments kept.
    @R.function
    def shape_example(x: R.Tensor(("n", 2, 2), "float32")):
        n = T.int64()
        m = T.int64()
        with R.dataflow():
            # symbolic and static shape deduction
            lv0: R.Tensor((n, 4), "float32") = R.reshape(x, (n, 4))
            lv1: R.Tensor((n * 4,), "float32") = R.flatten(lv0)
            lv2: R.Shape([n * 4]) = R.shape([n * 4])
            # external opaque shape function
            lv3: R.Shape(ndim=1) = R.call_pure_packed("myshape_func", lv2,
                                                      sinfo_args=R.Shape(ndim=1))
            lv4: R.Tensor(lv3, "float32") = R.call_dps_packed(
                "custom_func", (lv1,), out_sinfo=R.Tensor(lv3, "float32"))
            # data dependent case
            lv5: R.Tensor(dtype="float32", ndim=1) = R.unique(lv4)
            # re-match shape
            lv6: R.Tensor((m,), "float32") = R.match_cast(lv5, R.Tensor((m,), "float32"))
            gv0: R.Tensor((m,), "float32") = R.exp(lv6)
            R.output(gv0)
        return gv0

    return shape_example


def test_seed_001_0x1_4_d1_shape_example_structure():
    func = _d1_shape_example()
    bindings = func.body.blocks[0].bindings
    n = func.params[0].struct_info.dims[0]
    # symbolic deduction: lv1's length is n * 4
    assert tvm.ir.structural_equal(bindings[1].var.struct_info.dims[0], n * 4)
    # D2b: the string names an ExternFunc; lv4's shape is the value lv3
    call = bindings[4].value
    assert call.op.name == "relax.call_dps_packed"
    assert isinstance(call.args[0], relax.ExternFunc)
    assert call.args[0].global_symbol == "custom_func"
    assert bindings[4].var.struct_info.shape is bindings[3].var
    # data dependent: unique's length is unknown until match_cast names it m
    assert bindings[5].var.struct_info.dims is None
    assert isinstance(bindings[6], relax.MatchCast)
    assert func.body.body.struct_info.ndim == 1


@pytest.mark.parametrize("n", [1, 3, 6])
def test_seed_001_0x1_4_d1_shape_example_runs(d1_packed_funcs, n):
    func = _d1_shape_example()
    x = np.random.default_rng(n).integers(0, 4, (n, 2, 2)).astype("float32")
    expected = np.exp(np.unique(x.reshape(n, 4).reshape(-1) * 2))
    # optimized as TVM's tutorials do (legalize, fuse: reshape + flatten become one kernel)
    optimized = relax.get_pipeline()(IRModule({"main": func}))
    assert any(gv.name_hint.startswith("fused_") for gv in optimized.get_global_vars())
    executable = relax.build(optimized, "llvm")
    vm = relax.VirtualMachine(executable, tvm.cpu())
    np.testing.assert_allclose(vm["shape_example"](tvm.nd.array(x)).numpy(), expected,
                               rtol=1e-5)
    assert d1_packed_funcs == [(n * 4,)]
    np.testing.assert_allclose(evaluate(IRModule({"main": func}), [x], "main"), expected,
                               rtol=1e-5)


# -- 0x1.4 D1a: match_shape ---------------------------------------------------------------------
def _d1a_shape_example():
    # Rewritten in today's syntax; the seed's fragment ends without a result: completed with
    # ``R.output(lv0, lv1, lv2)`` and ``return (lv0, lv1, lv2)``. ``R.Tensor[_, "f32"]`` (any
    # rank) is ``R.Tensor(dtype="float32")``.
    @R.function
    def shape_example(x: R.Tensor(dtype="float32"), y: R.Tensor(dtype="float32")):
        n = T.int64()
        m = T.int64()
        with R.dataflow():
            # the match shape defines n, m because it appears for the first time
            lv0: R.Tensor((n, m)) = R.match_cast(x, R.Tensor((n, m), "float32"))
            # the second occurance of n, m will translate into an assertion
            # that y's shape equals (n, m)
            lv1: R.Tensor((n, m)) = R.match_cast(y, R.Tensor((n, m), "float32"))
            # we can also call match_shape on shape expressions
            lv2: R.Shape = R.match_cast(R.shape_of(y), R.Shape((n, m)))
            R.output(lv0, lv1, lv2)
        return (lv0, lv1, lv2)

    return shape_example


def test_seed_001_0x1_4_d1a_match_shape():
    func = _d1a_shape_example()
    bindings = func.body.blocks[0].bindings
    n, m = bindings[0].struct_info.dims
    assert bindings[1].struct_info.dims == (n, m)  # the second occurrence is the same n, m
    assert bindings[-1].var.struct_info.values == [n, m] or \
        tuple(bindings[-1].var.struct_info.values) == (n, m)  # lv2: a shape matched to (n, m)
    mod = IRModule({"main": func})
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    x = np.random.rand(2, 3).astype("float32")
    y = np.random.rand(2, 3).astype("float32")
    for got in (vm["shape_example"](tvm.nd.array(x), tvm.nd.array(y)),
                evaluate(mod, [x, y], "main")):
        lv0, lv1, lv2 = got
        np.testing.assert_array_equal(np.asarray(getattr(lv0, "numpy", lambda: lv0)()), x)
        np.testing.assert_array_equal(np.asarray(getattr(lv1, "numpy", lambda: lv1)()), y)
        assert tuple(lv2) == (2, 3)
    # "the second occurance of n, m will translate into an assertion"
    with pytest.raises(tvm.IrlabError, match=r"match_cast lv1.*\(n\) is 3, but n = 2"):
        vm["shape_example"](tvm.nd.array(x), tvm.nd.array(np.zeros((3, 2), "float32")))


# -- 0x1.4 D2a: call_tir's semantics --------------------------------------------------------------
def test_seed_001_0x1_4_d2a_call_tir_is_alloc_then_call():
    """The seed's pseudo-code: ``out_tensor = alloc_tensor(output_shape, dtype);
    lowlevel_func(*inputs, out_tensor); return out_tensor``. A ``call_tir`` of a TE-made
    PrimFunc, lowered by CallTIRRewrite, is exactly that; and it computes the PrimFunc."""
    bb = relax.BlockBuilder()
    n = tvm.tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n], "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(bb.emit_te(lambda a: te.compute(a.shape, lambda i: a[i] * 3.0),
                                           x, primfunc_name_hint="triple"))
        bb.emit_func_output(gv)
    mod = bb.get()
    assert mod["main"].body.blocks[0].bindings[0].value.op.name == "relax.call_tir"
    lowered = relax.transform.CallTIRRewrite()(relax.transform.ToNonDataflow()(mod))
    alloc, call, result = lowered["main"].body.blocks[0].bindings[:3]
    assert alloc.value.op.name == "relax.builtin.alloc_tensor"  # out_tensor = alloc_tensor(..)
    assert tvm.ir.structural_equal(list(alloc.value.args[0].values), [n])  # output_shape
    assert call.value.op is mod.get_global_var("triple")  # lowlevel_func(*inputs, out_tensor)
    assert [a for a in call.value.args] == [x, alloc.var]
    assert result.value is alloc.var  # return out_tensor
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    data = np.random.rand(5).astype("float32")
    np.testing.assert_allclose(vm["main"](tvm.nd.array(data)).numpy(), data * 3, rtol=1e-6)


# -- 0x1.4 D2b: packed function calls -------------------------------------------------------------
def test_seed_001_0x1_4_d2b_call_packed_is_a_call_of_an_extern_func():
    # ``Call(op=ExternFunc("my_packed_func"), *args)``: R.call_packed is sugar for it.
    x = relax.Var("x", relax.TensorStructInfo([4], "float32"))
    call = relax.op.call_packed("my_packed_func", x, sinfo_args=relax.ObjectStructInfo())
    assert isinstance(call.op, relax.ExternFunc) and call.op.global_symbol == "my_packed_func"
    assert list(call.args) == [x]
    # ``Call(op=Op::Get("relax.call_tir"), shape, ExternFunc("my_packed_func"), [lv1])`` is
    # today's relax.call_dps_packed
    dps = relax.op.call_dps_packed("my_packed_func", relax.Tuple([x]),
                                   relax.TensorStructInfo([4], "float32"))
    assert dps.op.name == "relax.call_dps_packed"
    assert isinstance(dps.args[0], relax.ExternFunc)
    assert dps.args[0].global_symbol == "my_packed_func"


# -- 0x3 Tensor Expression: the same vector add from TVMScript and from TE ------------------------
def test_seed_001_0x3_te_vector_add_equals_the_tvmscript_one(capsys):
    ir_module = seed.VecAddModule
    print(type(ir_module))
    print(ir_module.script())

    from irlab import te  # (the seed's ``from tvm import te``)

    A = te.placeholder((8,), dtype="float32", name="A")
    B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
    func = te.create_prim_func([A, B])
    ir_module_from_te = IRModule({"main": func})
    print(ir_module_from_te.script())

    out = capsys.readouterr().out
    assert "<class 'irlab.ir.module.IRModule'>" in out
    assert out.count('def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):') \
        == 2
    # "both outputs show that the IRModule created last is in fact exactly the same"
    tvm.ir.assert_structural_equal(ir_module, ir_module_from_te)
    a = np.random.rand(8).astype("float32")
    for mod in (ir_module, ir_module_from_te):
        b = tvm.nd.empty((8,), "float32")
        tvm.build(mod, target="llvm")["main"](tvm.nd.array(a), b)
        np.testing.assert_allclose(b.numpy(), a + 1)
