"""FastMath: exp/tanh/erf/softmax become their fast_* versions (TVM's test_pass_fast_math.py),
the fast ops are registered like their exact twins, and values do not change."""

import numpy as np
import pytest
from _model_references import MODEL_NAMES, bound_model, check_model
from hypothesis import HealthCheck, given, settings

import irlab
from irlab import relay
from irlab.ir import assert_structural_equal
from irlab.ir.op import Op, OpPattern
from irlab.relay import transform
from irlab.relay.analysis import count_ops
from irlab.relay.testing import run_opt_pass
from irlab.testing.check import check_numerics, random_value
from irlab.testing.strategies import relay_functions
from irlab.transform import PassContext, Sequential


@pytest.mark.parametrize("op_name, fast_name", [("exp", "fast_exp"), ("tanh", "fast_tanh"),
                                                ("erf", "fast_erf")])
def test_unary(op_name, fast_name):
    x = relay.var("x", shape=(1, 16, 16, 16), dtype="float32")
    func = relay.Function([x], getattr(relay, op_name)(x))
    mod = irlab.IRModule.from_expr(func)
    fast_mod = transform.FastMath()(mod)
    assert fast_name in fast_mod.astext()
    # Under a PassContext that requires it, FastMath runs even below its opt level 4.
    with PassContext(opt_level=3, required_pass=["FastMath"]):
        fast_mod = Sequential([transform.FastMath()])(mod)
    assert count_ops(fast_mod["main"]) == {fast_name: 1}
    check_numerics(mod, fast_mod, rtol=1e-6, atol=1e-6)


def test_softmax():
    x = relay.var("x", shape=(1, 16), dtype="float32")
    mod = irlab.IRModule.from_expr(relay.Function([x], relay.nn.softmax(x, axis=1)))
    fast_mod = transform.FastMath()(mod)
    assert "nn.fast_softmax" in fast_mod.astext()
    expected = relay.Function([x], relay.nn.fast_softmax(x, axis=1))
    assert_structural_equal(fast_mod["main"], run_opt_pass(expected, transform.InferType()))
    check_numerics(mod, fast_mod, rtol=1e-6, atol=1e-6)


def test_gated_by_opt_level():
    x = relay.var("x", shape=(4,))
    mod = irlab.IRModule.from_expr(relay.Function([x], relay.exp(x)))
    with PassContext(opt_level=3):
        assert "fast_exp" not in Sequential([transform.FastMath()])(mod).astext()
    with PassContext(opt_level=4):
        assert "fast_exp" in Sequential([transform.FastMath()])(mod).astext()


def test_fast_ops_registered_like_exact_ones():
    for name in ("fast_exp", "fast_tanh", "fast_erf"):
        op = Op.get(name)
        assert op.pattern == OpPattern.ELEMWISE and op.num_inputs == 1
    assert Op.get("nn.fast_softmax").pattern == OpPattern.OUT_ELEMWISE_FUSABLE
    assert Op.get("nn.fast_softmax").attrs_type is Op.get("nn.softmax").attrs_type


def test_pass_info():
    info = transform.FastMath().info
    assert (info.name, info.opt_level, info.required) == ("FastMath", 4, [])


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_models_numerics(name):
    after = transform.FastMath()(bound_model(name))
    counts = count_ops(after["main"])
    assert not {"exp", "tanh", "erf", "nn.softmax"} & set(counts)
    check_model(name, after, rtol=1e-6, atol=1e-6)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(func=relay_functions(max_steps=8))
def test_random_graphs(func):
    before = transform.InferType()(irlab.IRModule.from_expr(func))
    after = transform.FastMath()(before)
    counts = count_ops(after["main"])
    assert "exp" not in counts and "tanh" not in counts
    assert counts.get("fast_exp", 0) == count_ops(before["main"]).get("exp", 0)
    rng = np.random.default_rng(0)
    args = [random_value(p.checked_type, rng) for p in before["main"].params]
    results = [relay.create_executor("debug", mod=m).evaluate()(*args) for m in (before, after)]
    for expected, got in zip(_flatten(results[0]), _flatten(results[1])):
        np.testing.assert_array_equal(got, expected)


def _flatten(value):
    if isinstance(value, tuple):
        return [v for item in value for v in _flatten(item)]
    return [value.numpy()]
