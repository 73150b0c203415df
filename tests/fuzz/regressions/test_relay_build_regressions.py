"""Mismatches the Relay differential fuzzer found (``tests/fuzz/test_relay_fuzz.py``, issue
20), minimized: ``relay.build`` + the graph executor against the Relay interpreter."""

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.contrib import graph_executor
from irlab.testing.check import run_module


def build_and_run(mod, inputs, opt_level):
    with irlab.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, "llvm")
    module = graph_executor.GraphModule(lib["default"](irlab.cpu()))
    module.run(**inputs)
    return [module.get_output(i).numpy() for i in range(module.get_num_outputs())]


def check(mod, inputs, opt_level):
    expected = run_module(mod, inputs)
    got = build_and_run(mod, inputs, opt_level)
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_concatenate_of_a_tuple_at_every_opt_level(opt_level):
    """At opt_level 0 the concatenate's primitive function takes the tuple as one parameter:
    LowerTE raised "only tensor parameters are supported" (TVM flattens tuple params)."""
    x = relay.var("x", shape=(1, 2))
    body = relay.concatenate([relay.exp(x), x], 0)
    mod = irlab.IRModule.from_expr(relay.Function([x], body))
    check(mod, {"x": np.array([[0.5, -1.0]], "float32")}, opt_level)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_constant_named_like_an_input(opt_level):
    """Graph codegen named the first constant ``p0``; an input named ``p0`` was then
    overwritten by the constant's value (the result ignored the input)."""
    x = relay.var("p0", shape=(2,))
    body = relay.add(x, relay.const(np.array([10.0, 20.0], "float32")))
    mod = irlab.IRModule.from_expr(relay.Function([x], body))
    check(mod, {"p0": np.array([1.0, 2.0], "float32")}, opt_level)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_nan_through_relu_maximum_and_max_pool(opt_level):
    """The fuzzer's NaN/inf inputs: the interpreter (numpy) keeps NaN through relu, maximum
    and max_pool2d; compiled code returned 0 or the other operand."""
    x = relay.var("x", shape=(1, 1, 2, 2))
    body = relay.nn.max_pool2d(relay.maximum(relay.nn.relu(x), relay.const(-1.0)),
                               pool_size=(2, 2))
    mod = irlab.IRModule.from_expr(relay.Function([x], body))
    data = np.array([[[[np.nan, 1.0], [-2.0, 0.5]]]], "float32")
    expected = run_module(mod, {"x": data})[0]
    got = build_and_run(mod, {"x": data}, opt_level)[0]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))


@pytest.mark.parametrize("opt_level", [0, 3])
def test_softmax_fused_with_elementwise_ops(opt_level):
    """An elementwise op fused before a softmax is inlined by LowerTE; the softmax schedule
    still looked up its block ("cannot find a block named 'T_multiply'"), and read the row
    axis from the fused output instead of the softmax."""
    x = relay.var("p1", shape=(1, 4, 4, 6))
    body = relay.maximum(relay.nn.softmax(x, axis=1), relay.multiply(x, x))
    mod = irlab.IRModule.from_expr(relay.Function([x], body))
    data = np.random.default_rng(0).standard_normal((1, 4, 4, 6)).astype("float32")
    expected = run_module(mod, {"p1": data})[0]
    got = build_and_run(mod, {"p1": data}, opt_level)[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_max_of_minus_infinity_is_minus_infinity(opt_level):
    """max_pool2d / max over elements that are all -inf gave -3.4028235e38, not -inf."""
    x = relay.var("x", shape=(1, 1, 2, 2))
    body = relay.Tuple([relay.nn.max_pool2d(x, pool_size=(1, 1)), relay.max(x, axis=3)])
    mod = irlab.IRModule.from_expr(relay.Function([x], body))
    data = np.full((1, 1, 2, 2), -np.inf, "float32")
    for e, g in zip(run_module(mod, {"x": data}), build_and_run(mod, {"x": data}, opt_level)):
        np.testing.assert_array_equal(g, e)
