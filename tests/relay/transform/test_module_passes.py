"""RemoveUnusedFunctions and Inline ("InlineGlobals"): TVM's cases and every model."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relay
from irlab.errors import IrlabError
from irlab.instrument import modules_identical
from irlab.ir import assert_structural_equal
from irlab.relay import transform
from irlab.testing.check import run_module
from irlab.transform import get_pass

from _model_references import MODEL_NAMES, bound_model, check_model


def _inline(func):
    return func.with_attr("Inline", 1)


def _typed(mod):
    return transform.InferType()(mod)


def _check_inline(before, expected):
    assert_structural_equal(_typed(transform.Inline()(before)), _typed(expected))


def _var(name, shape=(3, 5)):
    return relay.var(name, shape=shape)


# -- RemoveUnusedFunctions (TVM's tests/python/relay/test_pass_remove_unused_functions.py) -----
def _module_with_unused():
    mod = tvm.IRModule()
    x = _var("x")
    mod["used"] = relay.Function([x], relay.exp(x))
    y = _var("y")
    mod["also_used"] = relay.Function([y], mod.get_global_var("used")(y))
    z = _var("z")
    mod["unused"] = relay.Function([z], relay.negative(z))
    w = _var("w")
    mod["other_entry"] = relay.Function([w], mod.get_global_var("unused")(w))
    p = _var("p")
    mod["main"] = relay.Function([p], mod.get_global_var("also_used")(p))
    return mod


def test_remove_all_unused_functions():
    mod = transform.RemoveUnusedFunctions()(_module_with_unused())
    assert sorted(gv.name_hint for gv in mod.get_global_vars()) == ["also_used", "main",
                                                                     "used"]


def test_remove_unused_with_other_entries():
    mod = transform.RemoveUnusedFunctions(["main", "other_entry"])(_module_with_unused())
    assert sorted(gv.name_hint for gv in mod.get_global_vars()) == [
        "also_used", "main", "other_entry", "unused", "used"]


def test_references_count_not_only_calls():
    mod = tvm.IRModule()
    x = _var("x")
    mod["callee"] = relay.Function([x], x)
    y = _var("y")
    mod["main"] = relay.Function([y], relay.Let(relay.Var("f"), mod.get_global_var("callee"),
                                                y))
    out = transform.RemoveUnusedFunctions()(mod)
    assert "callee" in out


def test_recursive_functions_are_kept_once():
    mod = tvm.IRModule()
    i = relay.var("i", shape=(), dtype="int32")
    f = relay.GlobalVar("f")
    body = relay.If(relay.equal(i, relay.const(0)), i, f(relay.subtract(i, relay.const(1))))
    mod[f] = relay.Function([i], body, relay.TensorType((), "int32"))
    j = relay.var("j", shape=(), dtype="int32")
    mod["main"] = relay.Function([j], f(j))
    mod["dead"] = relay.Function([j], j)
    out = transform.RemoveUnusedFunctions()(mod)
    assert sorted(gv.name_hint for gv in out.get_global_vars()) == ["f", "main"]


def test_missing_entry_is_an_error():
    with pytest.raises(IrlabError, match="nowhere"):
        transform.RemoveUnusedFunctions(["nowhere"])(_module_with_unused())


# -- Inline (TVM's tests/python/relay/test_pass_inline.py) --------------------------------------
def _g2(mod):
    x2, y2 = _var("x2"), _var("y2")
    mod["g2"] = relay.Function([x2, y2], x2 - y2)


def _main(mod, call_g1, call_g2):
    p = [_var(f"p{i}") for i in range(4)]
    mod["main"] = relay.Function(p, call_g1(p[0], p[1]) * call_g2(p[2], p[3]))


def test_call_chain_inline_leaf():
    """main -> g1 -> g11 (inline); main -> g2. Only g11 goes."""
    def build(inline_g11):
        mod = tvm.IRModule()
        x1, y1 = _var("x1"), _var("y1")
        if inline_g11:
            x11 = _var("x11")
            mod["g11"] = _inline(relay.Function([x11], x11))
            mod["g1"] = relay.Function([x1, y1], x1 + y1 + mod.get_global_var("g11")(x1))
        else:
            mod["g1"] = relay.Function([x1, y1], x1 + y1 + x1)
        _g2(mod)
        _main(mod, mod.get_global_var("g1"), mod.get_global_var("g2"))
        return mod

    _check_inline(build(True), build(False))


def test_call_chain_inline_multiple_levels():
    """g1 (inline) -> g11 (inline): both disappear into main."""
    before = tvm.IRModule()
    x11 = _var("x11")
    before["g11"] = _inline(relay.Function([x11], x11))
    x1, y1 = _var("x1"), _var("y1")
    before["g1"] = _inline(relay.Function([x1, y1],
                                          x1 + y1 + before.get_global_var("g11")(x1)))
    _g2(before)
    _main(before, before.get_global_var("g1"), before.get_global_var("g2"))

    expected = tvm.IRModule()
    _g2(expected)
    _main(expected, lambda a, b: a + b + a, expected.get_global_var("g2"))
    _check_inline(before, expected)


def test_call_chain_inline_multiple_levels_extern_compiler():
    """An inlined function for an external compiler stays a function, called in place."""
    def g11():
        x11 = _var("x11")
        return _inline(relay.Function([x11], x11)).with_attr("Compiler", "a")

    before = tvm.IRModule()
    before["g11"] = g11()
    x1, y1 = _var("x1"), _var("y1")
    before["g1"] = _inline(relay.Function([x1, y1],
                                          x1 + y1 + before.get_global_var("g11")(x1)))
    _g2(before)
    _main(before, before.get_global_var("g1"), before.get_global_var("g2"))

    expected = tvm.IRModule()
    _g2(expected)
    fn11 = g11()
    _main(expected, lambda a, b: a + b + fn11(a), expected.get_global_var("g2"))
    _check_inline(before, expected)


def _sum_up(mod, extra=None):
    """A recursive global marked Inline: it is never inlined."""
    i = relay.var("i", shape=(), dtype="int32")
    sum_up = relay.GlobalVar("sum_up")
    rec = relay.add(sum_up(relay.subtract(i, relay.const(1))), i)
    if extra is not None:
        rec = relay.add(rec, extra(i))
    body = relay.If(relay.equal(i, relay.const(0)), i, rec)
    mod[sum_up] = _inline(relay.Function([i], body, relay.TensorType((), "int32")))
    return sum_up


def test_recursive_call_with_global():
    before = tvm.IRModule()
    x = relay.var("x", shape=(), dtype="int32")
    before["gx"] = _inline(relay.Function([x], x))
    sum_up = _sum_up(before, extra=before.get_global_var("gx"))
    iarg = relay.var("i", shape=(), dtype="int32")
    before["main"] = relay.Function([iarg], sum_up(iarg))

    expected = tvm.IRModule()
    sum_up = _sum_up(expected, extra=lambda i: i)
    expected["main"] = relay.Function([iarg], sum_up(iarg))
    _check_inline(before, expected)


def test_recursive_called():
    mod = tvm.IRModule()
    sum_up = _sum_up(mod)
    iarg = relay.var("i", shape=(), dtype="int32")
    mod["main"] = relay.Function([iarg], sum_up(iarg))
    _check_inline(mod, mod)


def test_recursive_not_called():
    def build(inline):
        mod = tvm.IRModule()
        _sum_up(mod)
        x, y = relay.var("x", shape=(2, 2)), relay.var("y", shape=(2, 2))
        if inline:
            x1 = relay.var("x1", shape=(2, 2))
            mod["g1"] = _inline(relay.Function([x1], x1))
            mod["main"] = relay.Function([x, y], x + y + mod.get_global_var("g1")(x))
        else:
            mod["main"] = relay.Function([x, y], x + y + x)
        return mod

    _check_inline(build(True), build(False))


def test_globalvar_as_call_arg():
    """Inlined functions referred to without a call become local functions."""
    before = tvm.IRModule()
    x1, y1 = _var("x1"), _var("y1")
    before["g1"] = _inline(relay.Function([x1, y1], x1 + y1))
    f = relay.Var("f")
    p0, p1 = _var("p0"), _var("p1")
    before["main"] = relay.Function([p0, p1], relay.Let(f, before.get_global_var("g1"),
                                                        f(p0, p1)))
    out = transform.Inline()(before)
    assert "g1" not in out
    let = out["main"].body
    assert isinstance(let.value, relay.Function) and let.value.get_attr("Inline") == 1
    a, b = np.ones((3, 5), "float32"), np.full((3, 5), 2, "float32")
    np.testing.assert_allclose(run_module(out, {"p0": a, "p1": b})[0], a + b)


def test_inline_twice_binds_fresh_variables():
    """A body with a let inlined at two call sites gets its own variables at each."""
    mod = tvm.IRModule()
    x = _var("x")
    t = relay.Var("t")
    mod["twice"] = _inline(relay.Function([x], relay.Let(t, relay.exp(x), t + t)))
    p = _var("p")
    g = mod.get_global_var("twice")
    mod["main"] = relay.Function([p], g(p) * g(relay.negative(p)))
    out = transform.Inline()(mod)
    lets = [n for n in tvm.relay.expr_functor.post_order(out["main"])
            if isinstance(n, relay.Let)]
    assert len(lets) == 2 and lets[0].var is not lets[1].var
    value = np.linspace(-1, 1, 15, dtype="float32").reshape(3, 5)
    got = run_module(out, {"p": value})[0]
    np.testing.assert_allclose(got, 4 * np.exp(value) * np.exp(-value), rtol=1e-6)


def test_entry_functions_stay_even_when_marked():
    mod = tvm.IRModule()
    x = _var("x")
    mod["main"] = _inline(relay.Function([x], relay.exp(x)))
    assert modules_identical(transform.Inline()(mod), mod)


def test_pass_infos_and_registry():
    info = transform.Inline().info
    assert (info.name, info.opt_level, info.required) == ("InlineGlobals", 1, [])
    info = transform.RemoveUnusedFunctions().info
    assert (info.name, info.opt_level, info.required) == ("RemoveUnusedFunctions", 1, [])
    assert get_pass("InlineGlobals").info.name == "InlineGlobals"  # for required lists


# -- every model ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_models(name):
    """A model's single @main is kept as it is; splitting a model into an inlined helper and
    inlining it back gives the same graph, which computes the same."""
    mod = bound_model(name)
    for pass_ in (transform.RemoveUnusedFunctions(), transform.Inline()):
        assert modules_identical(pass_(mod), mod)
    # main(data) = @body(data), @body marked Inline=1: inlining gives main back.
    main = mod["main"]
    split = tvm.IRModule()
    params = [relay.var(p.name_hint, p.type_annotation) for p in main.params]
    split["body"] = _inline(relay.Function(main.params, main.body))
    split["main"] = relay.Function(params, split.get_global_var("body")(*params))
    split["unused"] = relay.Function(main.params, main.body)
    split = transform.RemoveUnusedFunctions()(split)
    inlined = transform.Inline()(split)
    assert [gv.name_hint for gv in inlined.get_global_vars()] == ["main"]
    assert_structural_equal(_typed(inlined)["main"].body, mod["main"].body,
                            map_free_vars=True)
    check_model(name, inlined)
