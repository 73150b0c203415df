"""AnnotateTIROpPattern, DeadCodeElimination, CanonicalizeBindings, FoldConstant: structure and
numerics before/after (relax.testing.evaluate builds and runs the PrimFuncs)."""

import numpy as np

import irlab as tvm
from irlab import relax
from irlab.ir.op import OpPattern
from irlab.relax.testing import evaluate
from op_testing import rand, sym, tensor

R = relax.op


def _bindings(func):
    return [b for block in func.body.blocks for b in block.bindings]


def _mlp_module():
    n = sym("n")
    x = relax.Var("x", tensor([n, 4]))
    w = relax.Var("w", tensor([4, 3]))
    b = relax.Var("b", tensor([3]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w, b]):
        with bb.dataflow():
            lv = bb.emit(R.matmul(x, w))
            lv1 = bb.emit(R.add(lv, b))
            dead = bb.emit(R.exp(lv1))  # noqa: F841 (unused: DCE removes it)
            lv2 = bb.emit(R.nn.relu(lv1))
            lv3 = bb.emit(lv2)  # a renaming binding
            gv = bb.emit_output(lv3)
        bb.emit_func_output(gv)
    return bb.get()


def _inputs(batch):
    return [rand((batch, 4), seed=1), rand((4, 3), seed=2), rand((3,), seed=3)]


def _reference(x, w, b):
    return np.maximum(x @ w + b, 0)


def test_annotate_tir_op_pattern():
    mod = relax.transform.LegalizeOps()(_mlp_module())
    mod = relax.transform.AnnotateTIROpPattern()(mod)
    patterns = {gv.name_hint: f.attrs["op_pattern"] for gv, f in mod.items()
                if not isinstance(f, relax.Function)}
    assert patterns == {"matmul": OpPattern.OUT_ELEMWISE_FUSABLE, "add": OpPattern.BROADCAST,
                        "exp": OpPattern.ELEMWISE, "relu": OpPattern.ELEMWISE}


def test_dead_code_elimination():
    mod = relax.transform.LegalizeOps()(_mlp_module())
    new = relax.transform.DeadCodeElimination()(mod)
    assert len(_bindings(new["main"])) == len(_bindings(mod["main"])) - 1
    assert "exp" not in new and "relu" in new
    for batch in (1, 5):
        args = _inputs(batch)
        np.testing.assert_allclose(evaluate(new, args), _reference(*args), rtol=1e-5,
                                   atol=1e-5)


def test_dead_code_keeps_impure_and_entry_functions():
    x = relax.Var("x", tensor([2]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x], pure=False):
        bb.emit(R.call_packed("effect", x, sinfo_args=tensor([2])))
        bb.emit_func_output(x)
    with bb.function("helper", [x], private=True):
        bb.emit_func_output(x)
    mod = relax.transform.DeadCodeElimination()(bb.get())
    assert len(_bindings(mod["main"])) == 1
    assert "helper" not in mod


def test_canonicalize_bindings():
    mod = _mlp_module()
    new = relax.transform.CanonicalizeBindings()(mod)
    bindings = _bindings(new["main"])
    assert len(bindings) == len(_bindings(mod["main"])) - 2  # lv3 = lv2 and gv = lv3
    assert not any(isinstance(b.value, relax.Var) for b in bindings)
    out = new["main"].body.body
    assert not isinstance(out, relax.DataflowVar)
    assert relax.analysis.well_formed(new)
    for batch in (1, 3):
        args = _inputs(batch)
        np.testing.assert_allclose(evaluate(new, args), evaluate(mod, args), rtol=1e-6)


def test_canonicalize_tuple_get_item_and_match_cast():
    x = relax.Var("x", tensor([2, 3]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            tup = bb.emit(relax.Tuple([x, x]))
            first = bb.emit(relax.TupleGetItem(tup, 0))
            same = bb.match_cast(first, tensor([2, 3]))
            gv = bb.emit_output(R.add(same, x))
        bb.emit_func_output(gv)
    new = relax.transform.CanonicalizeBindings()(bb.get())
    add = [b.value for b in _bindings(new["main"]) if isinstance(b.value, relax.Call)][0]
    assert add.args[0] is new["main"].params[0]
    new = relax.transform.DeadCodeElimination()(new)
    assert len(_bindings(new["main"])) == 1


def test_fold_constant():
    c0 = relax.const(rand((2, 3), seed=4))
    c1 = relax.const(rand((3,), seed=5))
    x = relax.Var("x", tensor([2, 3]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(R.add(c0, c1))
            lv1 = bb.emit(R.multiply(lv, x))
            gv = bb.emit_output(lv1)
        bb.emit_func_output(gv)
    mod = bb.get()
    legal = relax.transform.LegalizeOps()(mod)
    folded = relax.transform.FoldConstant()(legal)
    first = _bindings(folded["main"])[0].value
    assert isinstance(first, relax.Constant)
    np.testing.assert_allclose(first.data.numpy(), c0.data.numpy() + c1.data.numpy())
    arg = rand((2, 3), seed=6)
    np.testing.assert_allclose(evaluate(folded, [arg]), evaluate(legal, [arg]), rtol=1e-6)
    # an unlegalized op of constants folds too
    direct = relax.transform.FoldConstant()(mod)
    assert isinstance(_bindings(direct["main"])[0].value, relax.Constant)
    cleaned = relax.transform.DeadCodeElimination()(folded)
    assert "add" not in cleaned and "multiply" in cleaned


def test_passes_are_instrumented():
    seen = []

    @tvm.instrument.pass_instrument
    class Names:
        def run_before_pass(self, mod, info):
            seen.append(info.name)

    with tvm.transform.PassContext(instruments=[Names()]):
        tvm.transform.Sequential([relax.transform.LegalizeOps(),
                                  relax.transform.CanonicalizeBindings(),
                                  relax.transform.DeadCodeElimination()])(_mlp_module())
    assert ["LegalizeOps", "CanonicalizeBindings", "DeadCodeElimination"] == \
        [s for s in seen if s != "sequential"]


def test_legalize_ops_leaves_unknown_shapes_and_takes_custom_rules():
    x = relax.Var("x", relax.TensorStructInfo(dtype="float32", ndim=2))
    y = relax.Var("y", tensor([2, 3]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, y]):
        with bb.dataflow():
            a = bb.emit(R.exp(x))
            b = bb.emit(R.exp(y))
            gv = bb.emit_output(R.add(a, b))
        bb.emit_func_output(gv)
    mod = relax.transform.LegalizeOps()(bb.get())
    ops = [b.value.op.name for b in _bindings(mod["main"])]
    assert ops == ["relax.exp", "relax.call_tir", "relax.add"]

    def my_exp(bb_, call):
        return bb_.call_te(lambda t: tvm.topi.exp(t), call.args[0], primfunc_name_hint="my_exp")

    mod = relax.transform.LegalizeOps({"relax.exp": my_exp})(bb.get())
    assert "my_exp" in mod


def test_canonicalize_then_dce_before_expected():
    def packed(name, arg):
        return relax.call_pure_packed(name, arg, sinfo_args=tensor([2]))

    x = relax.Var("x", tensor([2]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(packed("f", x))
            lv1 = bb.emit(lv)
            bb.emit(packed("g", x))
            gv = bb.emit_output(lv1)
        bb.emit_func_output(gv)
    before = bb.get()

    y = relax.Var("x", tensor([2]))
    bb = relax.BlockBuilder()
    with bb.function("main", [y]):
        with bb.dataflow():
            out = bb.emit_output(packed("f", y))
        bb.emit_func_output(out)
    expected = bb.get()

    after = tvm.transform.Sequential([relax.transform.CanonicalizeBindings(),
                                      relax.transform.DeadCodeElimination()])(before)
    tvm.ir.assert_structural_equal(after, expected)


def test_normalize_binds_nested_calls():
    x = relax.Var("x", tensor([2, 3]))
    nested = R.add(R.exp(x), x)
    func = relax.Function([x], nested, tensor([2, 3]))
    mod = relax.transform.Normalize()(tvm.IRModule({"main": func}))
    main = mod["main"]
    assert isinstance(main.body, relax.SeqExpr)
    assert [b.value.op.name for b in _bindings(main)] == ["relax.exp", "relax.add"]
    assert isinstance(main.body.body, relax.Var)  # the body: a bound value
    assert relax.analysis.well_formed(mod)
    legal = relax.transform.LegalizeOps()(mod)
    arg = rand((2, 3), seed=7)
    np.testing.assert_allclose(evaluate(legal, [arg]), np.exp(arg) + arg, rtol=1e-6)
