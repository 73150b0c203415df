"""BlockBuilder: functions, dataflow blocks, emit_te / call_te into PrimFuncs of the module."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax, te, tir
from irlab.errors import IrlabError


def _matmul(a, b):
    k = te.reduce_axis((0, a.shape[1]), "k")
    return te.compute((a.shape[0], b.shape[1]),
                      lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="matmul")


def _bias_relu(a, b):
    return te.compute(a.shape, lambda i, j: tir.max(a[i, j] + b[j], tir.const(0, a.dtype)),
                      name="bias_relu")


def _mlp(n):
    x = relax.Var("x", relax.TensorStructInfo([n, 8], "float32"))
    w = relax.Var("w", relax.TensorStructInfo([8, 5], "float32"))
    b = relax.Var("b", relax.TensorStructInfo([5], "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w, b]):
        with bb.dataflow():
            lv = bb.emit_te(_matmul, x, w)
            lv1 = bb.emit_te(_bias_relu, lv, b)
            gv = bb.emit_output(lv1)
        bb.emit_func_output(gv)
    return bb.get()


def _run_call_tir(mod, call, env):
    """Evaluate one call_tir binding by building its PrimFunc (the VM is not needed)."""
    gv, args = call.args[0], call.args[1].fields
    func = mod[gv].with_attr("global_symbol", gv.name_hint)
    lib = tvm.build(func, target="llvm")
    inputs = [env[a] for a in args]
    out_sinfo = call.struct_info
    dims = [_eval_dim(d, env["shape"]) for d in out_sinfo.dims]
    out = np.zeros(dims, out_sinfo.dtype)
    arrays = [tvm.nd.array(a) for a in inputs] + [tvm.nd.array(out)]
    lib[gv.name_hint](*arrays)
    return arrays[-1].numpy()


def _eval_dim(dim, symbols):
    if isinstance(dim, tir.IntImm):
        return dim.value
    return symbols[dim]


def _evaluate(mod, inputs, symbols):
    """A tiny evaluator for functions made of call_tir bindings."""
    func = mod["main"]
    env = dict(zip(func.params, inputs))
    env["shape"] = symbols
    for block in func.body.blocks:
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, relax.Var):
                env[binding.var] = env[value]
            else:
                env[binding.var] = _run_call_tir(mod, value, env)
    return env[func.body.body]


@pytest.mark.parametrize("batch", [1, 7])
def test_mlp_symbolic_batch(batch):
    n = tir.Var("n", "int64")
    mod = _mlp(n)
    main = mod["main"]
    assert main.ret_struct_info.dims[0] is n
    assert sorted(gv.name_hint for gv in mod.get_global_vars()) == ["bias_relu", "main",
                                                                      "matmul"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 8)).astype("float32")
    w = rng.standard_normal((8, 5)).astype("float32")
    b = rng.standard_normal(5).astype("float32")
    got = _evaluate(mod, [x, w, b], {n: batch})
    np.testing.assert_allclose(got, np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-5)


def test_emit_te_primfunc_name_and_attrs():
    x = relax.Var("x", relax.TensorStructInfo([4, 4], "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        lv = bb.emit_te(_matmul, x, x, primfunc_name_hint="mm",
                        primfunc_attrs={"my_attr": 3})
        bb.emit_func_output(lv)
    mod = bb.get()
    assert mod["mm"].attrs["my_attr"] == 3
    assert "global_symbol" not in mod["mm"].attrs.keys()


def test_emit_te_dedups_identical_prim_funcs():
    x = relax.Var("x", relax.TensorStructInfo([4, 4], "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit_te(_matmul, x, x)
            lv1 = bb.emit_te(_matmul, lv, lv)
            gv = bb.emit_output(lv1)
        bb.emit_func_output(gv)
    mod = bb.get()
    assert len(mod) == 2
    main = mod["main"]
    calls = [b.value for b in main.body.blocks[0].bindings[:2]]
    assert calls[0].args[0] is calls[1].args[0]


def test_emit_te_output_only_symbolic_var_becomes_tir_var():
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n], "float32"))
    s = relax.Var("s", relax.ShapeStructInfo([n]))

    def _fill(shape):
        return te.compute((shape[0] * 2,), lambda i: tir.const(1.0, "float32"), name="fill")

    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        lv = bb.emit_te(_fill, relax.ShapeExpr([n]))
        bb.emit_func_output(lv)
    mod = bb.get()
    call = mod["main"].body.blocks[0].bindings[0].value
    # (gv, (), tir_vars): n (a shape argument) and the compound extent n * 2 are passed
    assert len(call.args) == 3
    tir_vars = call.args[2].values
    assert tir_vars[0] is n and tvm.arith.Analyzer().can_prove_equal(tir_vars[1], n * 2)
    assert tvm.arith.Analyzer().can_prove_equal(call.struct_info.dims[0], n * 2)
    from irlab.relax.testing import evaluate

    np.testing.assert_array_equal(evaluate(mod, [np.zeros(3, "float32")]), np.ones(6))
    del s


def test_nested_calls_are_normalized_into_bindings():
    x = relax.Var("x", relax.TensorStructInfo([2], "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            inner = relax.call_pure_packed("f", x,
                                           sinfo_args=relax.TensorStructInfo([2], "float32"))
            outer = relax.call_pure_packed("g", inner,
                                           sinfo_args=relax.TensorStructInfo([2], "float32"))
            gv = bb.emit_output(outer)
        bb.emit_func_output(gv)
    bindings = bb.get()["main"].body.blocks[0].bindings
    assert len(bindings) == 2
    assert isinstance(bindings[0].var, relax.DataflowVar)
    assert bindings[1].value.args[1] is bindings[0].var


def test_builder_errors():
    x = relax.Var("x", relax.TensorStructInfo([2], "float32"))
    bb = relax.BlockBuilder()
    with pytest.raises(IrlabError, match="inside"):
        bb.emit(x)
    with pytest.raises(IrlabError, match="emit_func_output"):
        with bb.function("f", [x]):
            pass
    with pytest.raises(IrlabError, match="dataflow"):
        with bb.function("g", [x]):
            bb.emit_output(x)


@pytest.mark.parametrize("batch", [1, 4])
def test_mlc_course_emit_te_model_with_topi(batch):
    """The MLC course's ``create_model_via_emit_te``: TOPI functions on relax constants."""
    from irlab import topi
    from irlab.relax.testing import evaluate

    rng = np.random.default_rng(1)
    w0, b0 = rng.standard_normal((16, 12), "float32"), rng.standard_normal(16, "float32")
    w1, b1 = rng.standard_normal((5, 16), "float32"), rng.standard_normal(5, "float32")
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo((n, 12), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit_te(topi.nn.dense, x, relax.const(w0, "float32"))
            lv1 = bb.emit_te(topi.add, lv0, relax.const(b0, "float32"))
            lv2 = bb.emit_te(topi.nn.relu, lv1)
            lv3 = bb.emit_te(topi.nn.dense, lv2, relax.const(w1, "float32"))
            lv4 = bb.emit_te(topi.add, lv3, relax.const(b1, "float32"))
            gv = bb.emit_output(lv4)
        bb.emit_func_output(gv)
    mod = bb.get()
    assert {"dense", "add", "relu"} <= {gv.name_hint for gv in mod.get_global_vars()}
    data = rng.standard_normal((batch, 12), "float32")
    expected = np.maximum(data @ w0.T + b0, 0) @ w1.T + b1
    np.testing.assert_allclose(evaluate(mod, [data]), expected, rtol=1e-4, atol=1e-4)


def test_failed_emit_leaves_the_block_unchanged():
    x = relax.Var("x", relax.TensorStructInfo([2], "float32"))
    y = relax.Var("y", relax.TensorStructInfo([3], "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, y]):
        with bb.dataflow():
            lv = bb.emit(relax.op.exp(x))
            with pytest.raises(IrlabError, match="in function main: R.add: shapes .* do not "
                                                 "broadcast"):
                bb.emit(relax.op.add(relax.op.exp(x), y))  # exp(x) must not stay behind
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)
    assert len(bb.get()["main"].body.blocks[0].bindings) == 2
