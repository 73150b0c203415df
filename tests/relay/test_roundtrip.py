"""print -> parse round trips: structurally equal programs, sharing kept, text stable."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import irlab
import irlab.relay as relay
from irlab.ir import (DictAttrs, FuncType, GlobalVar, IRModule, TensorType, TupleType,
                      assert_structural_equal)
from irlab.relay.parser import parse, parse_expr
from irlab.relay.transform import InferType
from irlab.testing.strategies import relay_functions, relay_modules


def roundtrip_expr(expr, text_of=str):
    parsed = parse_expr(text_of(expr))
    assert_structural_equal(parsed, expr, map_free_vars=True)
    return parsed


def roundtrip_module(mod):
    """Untyped and typed module: parse(astext) equals it, and re-printing is identical.

    ``parse`` type-checks its result (as TVM's does), so an untyped module comes back typed."""
    typed = InferType()(mod)
    assert_structural_equal(parse(mod.astext()), typed)
    text = typed.astext()
    parsed = parse(text)
    assert_structural_equal(parsed, typed)
    assert InferType()(parsed).astext() == text
    return parsed


X = relay.var("x", shape=(1, 3))
C = relay.var("c", "bool")
Y = relay.var("y")


@pytest.mark.parametrize("make", [
    lambda: relay.Function([X], X),
    lambda: relay.Function([X], relay.add(X, relay.const(1.0))),
    lambda: relay.Function([X], relay.Tuple([])),
    lambda: relay.Function([X], relay.Tuple([X])),
    lambda: relay.Function([X], relay.TupleGetItem(relay.Tuple([X, relay.exp(X)]), 1)),
    lambda: relay.Function([X, C], relay.If(C, relay.exp(X), X)),
    lambda: relay.Function([X], relay.Let(Y, relay.exp(X), relay.negative(Y))),
    lambda: relay.Function([X], relay.Function([relay.var("p", shape=(1,))],
                                               relay.const(2, "int64"))),
    lambda: relay.Function([X], relay.clip(X, -1.5, 6.0)),
    lambda: relay.Function([X], relay.cast(X, "int8")),
    lambda: relay.Function([X], relay.nn.softmax(X, axis=0)),
    lambda: relay.Function([X], relay.add(X, relay.const(np.ones((1, 3), "float32")))),
    lambda: relay.Function([X], relay.exp(X), TensorType((1, 3)),
                           attrs={"Primitive": 1, "Composite": "x"}),
])
def test_each_node_kind_roundtrips(make):
    fn = make()
    roundtrip_expr(fn, relay.astext)
    roundtrip_module(IRModule.from_expr(fn))


def test_free_vars_roundtrip():
    y = relay.var("y", shape=(1, 3))
    roundtrip_expr(relay.Function([X], relay.add(X, y)))
    roundtrip_expr(relay.Tuple([relay.exp(y), relay.var("y")]))


def test_let_chain_and_shared_let_value():
    y, z = relay.var("y"), relay.var("z", shape=(1, 3))
    shared = relay.exp(X)
    body = relay.Let(y, shared, relay.Let(z, relay.add(y, shared), relay.multiply(z, shared)))
    roundtrip_module(IRModule.from_expr(relay.Function([X], body)))


def test_calls_of_globals_vars_and_functions():
    mod = IRModule()
    helper = GlobalVar("helper")
    p = relay.var("p", shape=(1, 3))
    mod[helper] = relay.Function([p], relay.negative(p))
    f = relay.var("f", FuncType([TensorType((1, 3))], TensorType((1, 3))))
    g = relay.var("g", shape=(1, 3))
    ident = relay.Function([g], g)
    mod["main"] = relay.Function([X, f], relay.Tuple([helper(X), f(X), ident(ident(X))]))
    roundtrip_module(mod)


def test_tuple_typed_params_and_nested_tuples():
    t = relay.var("t", TupleType([TensorType((2,)), TupleType([TensorType(())])]))
    inner = relay.TupleGetItem(relay.TupleGetItem(t, 1), 0)
    roundtrip_module(IRModule.from_expr(relay.Function([t], relay.Tuple([inner, inner]))))


def test_sharing_preserved_after_parse():
    shared = relay.exp(X)
    fn = relay.Function([X], relay.add(shared, relay.negative(shared)))
    parsed = parse(str(IRModule.from_expr(fn)))["main"]
    assert parsed.body.args[0] is parsed.body.args[1].args[0]


def test_call_attrs_on_function_calls_and_dict_attrs():
    p = relay.var("p", shape=(1, 3))
    fn = relay.Function([p], p)
    call = relay.Call(fn, [X], relay.op.tensor.CastAttrs(dtype="int32"))
    roundtrip_expr(relay.Function([X], call))
    call = relay.Call(fn, [X], DictAttrs({"k": "v", "n": 2}))
    roundtrip_expr(relay.Function([X], call))


def test_exotic_names_roundtrip():
    names = ["0", "_x", "x", "x", "x1", "conv1.weight", "a/b"]
    params = [relay.var(n, shape=(1,)) for n in names]
    out = params[0]
    for p in params[1:]:
        out = relay.add(out, p)
    roundtrip_module(IRModule.from_expr(relay.Function(params, out)))


def test_float_values_roundtrip_exactly():
    values = [0.1, 1 / 3, 1e-30, 3.4028235e38, -2.5e-7, 123456.789]
    for v in values:
        for dtype in ("float32", "float64", "float16"):
            if dtype == "float16" and abs(v) > 6e4:
                continue
            const = relay.const(v, dtype)
            parsed = parse_expr(str(const))
            assert parsed.data.numpy().tobytes() == const.data.numpy().tobytes()
    clip = relay.clip(X, 0.1234567, 1e10)
    roundtrip_expr(relay.Function([X], clip))


def test_ten_thousand_op_chain_roundtrips():
    x = relay.var("x", shape=(1,))
    out = x
    for i in range(10000):
        out = relay.add(out, x) if i % 2 else relay.exp(out)
    fn = relay.Function([x], out)
    text = str(fn)
    parsed = parse_expr(text)
    assert_structural_equal(parsed, fn)
    assert str(parsed) == text


def test_ten_thousand_let_chain_roundtrips():
    x = relay.var("x", shape=(1,))
    lets = [relay.var("v") for _ in range(10000)]
    body = lets[-1]
    for i in reversed(range(10000)):
        body = relay.Let(lets[i], relay.add(lets[i - 1] if i else x, x), body)
    fn = relay.Function([x], body)
    assert_structural_equal(parse_expr(str(fn)), fn)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(relay_modules())
def test_random_programs_roundtrip(mod):
    roundtrip_module(mod)
    if "meta[" not in str(mod):  # print(mod) has no metadata: only scalar constants
        assert_structural_equal(parse(str(mod)), InferType()(mod))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(relay_functions(max_steps=6))
def test_random_functions_roundtrip_as_expressions(fn):
    parsed = parse_expr(relay.astext(fn))
    assert_structural_equal(parsed, fn)
    assert relay.astext(parsed) == relay.astext(fn)


@pytest.mark.parametrize("name", ["simplenet", "mlp", "resnet18", "resnet50", "mobilenet_v2",
                                  "bert"])
def test_model_builders_roundtrip_typed_and_untyped(name):
    from irlab.relay.testing import MODELS

    mod, params = MODELS[name]()
    for candidate in (mod, relay.transform.InferType()(mod)):
        for text in (str(candidate), candidate.astext()):
            parsed = irlab.parser.parse(text)
            assert_structural_equal(parsed, InferType()(candidate))
    # With the weights bound as constants the metadata section carries them.
    bound = irlab.IRModule.from_expr(relay.build_module.bind_params_by_name(mod["main"], params))
    parsed = irlab.parser.parse(bound.astext())
    assert_structural_equal(parsed, InferType()(bound))
