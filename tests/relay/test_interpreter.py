"""The reference interpreter: TVM's executor API, every node kind, input checking, depth."""

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.errors import IrlabError

rng = np.random.default_rng(0)


def run(fn, *args, **kwargs):
    mod = irlab.IRModule.from_expr(fn)
    return relay.create_executor("debug", mod=mod).evaluate()(*args, **kwargs)


def test_dataflow_matches_numpy():
    x = relay.var("x", shape=(3, 4))
    y = relay.var("y", shape=(4,))
    out = relay.sigmoid(relay.multiply(x, y)) - relay.exp(y)
    a = rng.standard_normal((3, 4)).astype("float32")
    b = rng.standard_normal(4).astype("float32")
    got = run(relay.Function([x, y], out), a, b)
    assert isinstance(got, irlab.nd.NDArray)
    np.testing.assert_allclose(got.numpy(), 1 / (1 + np.exp(-(a * b))) - np.exp(b), rtol=1e-6)


def test_keyword_inputs_tuples_let_if_and_closures():
    x = relay.var("x", shape=(2,))
    c = relay.var("c", "bool")
    f = relay.var("f")
    p = relay.var("p", shape=(2,))
    v = relay.var("v")
    body = relay.Let(f, relay.Function([p], relay.add(p, p)),
                     relay.Let(v, relay.Call(f, [x]),
                               relay.If(c, relay.Tuple([v, x]), relay.Tuple([x, v]))))
    fn = relay.Function([x, c], body)
    a = np.array([1.0, 2.0], "float32")
    first, second = run(fn, x=a, c=True)
    np.testing.assert_array_equal(first.numpy(), 2 * a)
    np.testing.assert_array_equal(second.numpy(), a)
    first, _ = run(fn, a, np.array(False))
    np.testing.assert_array_equal(first.numpy(), a)


def test_global_calls_and_params_binding():
    mod = irlab.IRModule()
    p = relay.var("p", shape=(2,))
    mod["square"] = relay.Function([p], relay.multiply(p, p))
    x = relay.var("x", shape=(2,))
    w = relay.var("w", shape=(2,))
    mod["main"] = relay.Function([x, w], relay.add(relay.Call(mod.get_global_var("square"), [x]),
                                                   w))
    ex = relay.create_executor("debug", mod=mod, params={"w": np.ones(2, "float32")})
    got = ex.evaluate()(np.array([2.0, 3.0], "float32"))
    np.testing.assert_array_equal(got.numpy(), [5.0, 10.0])


def test_evaluate_a_bare_expression():
    c = relay.const(np.arange(3, dtype="float32"))
    got = relay.create_executor().evaluate(relay.add(c, c))
    np.testing.assert_array_equal(got.numpy(), [0, 2, 4])


def test_inputs_are_checked():
    x = relay.var("x", shape=(2, 3))
    fn = relay.Function([x], relay.exp(x))
    with pytest.raises(IrlabError, match="expected shape \\(2, 3\\), got \\(3, 2\\)"):
        run(fn, np.zeros((3, 2), "float32"))
    with pytest.raises(IrlabError, match="expected dtype float32, got float64"):
        run(fn, np.zeros((2, 3)))
    with pytest.raises(IrlabError, match="missing inputs: x"):
        run(fn)
    with pytest.raises(IrlabError, match="no input named 'y'"):
        run(fn, y=np.zeros((2, 3), "float32"))
    with pytest.raises(IrlabError, match="kind='debug'"):
        relay.create_executor("tensorrt", mod=irlab.IRModule.from_expr(fn))


def test_integer_division_semantics_follow_tvm():
    a = relay.var("a", shape=(4,), dtype="int32")
    b = relay.var("b", shape=(4,), dtype="int32")
    fn = relay.Function([a, b], relay.Tuple([relay.divide(a, b), relay.floor_divide(a, b),
                                             relay.floor_mod(a, b), relay.mod(a, b)]))
    av = np.array([7, -7, 7, -7], "int32")
    bv = np.array([2, 2, -2, -2], "int32")
    div, fdiv, fmod, tmod = (r.numpy() for r in run(fn, av, bv))
    np.testing.assert_array_equal(div, [3, -3, -3, 3])  # truncating, as C
    np.testing.assert_array_equal(fdiv, [3, -4, -4, 3])
    np.testing.assert_array_equal(fmod, [1, 1, -1, -1])
    np.testing.assert_array_equal(tmod, [1, -1, 1, -1])


def test_deep_chain_runs():
    x = relay.var("x", shape=(2,))
    e = x
    for _ in range(10000):
        e = relay.add(e, relay.const(np.float32(1.0)))
    got = run(relay.Function([x], e), np.zeros(2, "float32"))
    np.testing.assert_array_equal(got.numpy(), [10000.0, 10000.0])
