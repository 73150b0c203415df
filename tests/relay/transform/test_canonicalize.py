"""CanonicalizeOps (bias_add -> expand_dims + add) and CanonicalizeCast (one up-cast per
elementwise consumer): TVM's test_pass_canonicalize_cast.py, model numerics, random graphs."""

import numpy as np
import pytest
from _model_references import MODEL_NAMES, bound_model, check_model
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irlab
from irlab import relay
from irlab.ir import assert_structural_equal
from irlab.relay import transform
from irlab.ir.op import OpPattern
from irlab.relay.analysis import count_ops
from irlab.relay.expr_functor import post_order
from irlab.relay.testing import run_opt_pass
from irlab.testing.check import check_numerics, random_value
from irlab.testing.strategies import relay_functions
from irlab.transform import PassContext, Sequential


def test_canonicalize_cast():
    def before(data, conv_weight, bias1, bias2):
        x = relay.nn.conv2d(data, conv_weight, channels=16, kernel_size=(3, 3), padding=(1, 1),
                            out_dtype="int8")
        x1 = relay.cast(x, dtype="int32")
        y1 = relay.add(x1, bias1)
        y2 = relay.add(x1, bias2)
        return relay.Function([data, conv_weight, bias1, bias2], relay.add(y1, y2))

    def expected(data, conv_weight, bias1, bias2):
        x = relay.nn.conv2d(data, conv_weight, channels=16, kernel_size=(3, 3), padding=(1, 1),
                            out_dtype="int8")
        x1 = relay.cast(x, dtype="int32")
        x2 = relay.cast(x, dtype="int32")
        y1 = relay.add(x1, bias1)
        y2 = relay.add(x2, bias2)
        return relay.Function([data, conv_weight, bias1, bias2], relay.add(y1, y2))

    data = relay.var("data", shape=(1, 16, 7, 7), dtype="int8")
    conv_weight = relay.var("weight")
    bias1 = relay.var("bias1", shape=(16, 1, 1), dtype="int32")
    bias2 = relay.var("bias2", shape=(16, 1, 1), dtype="int32")
    mod = irlab.IRModule.from_expr(before(data, conv_weight, bias1, bias2))
    seq = Sequential([transform.InferType(), transform.CanonicalizeCast(),
                      transform.InferType()])
    with PassContext(opt_level=3):
        after = seq(mod)
    weight = relay.var("weight", after["main"].params[1].checked_type)
    expected_mod = transform.InferType()(
        irlab.IRModule.from_expr(expected(data, weight, bias1, bias2)))
    assert_structural_equal(after["main"], expected_mod["main"])
    check_numerics(mod, after)


def test_canonicalize_cast_keeps_narrowing_and_opaque_uses():
    x = relay.var("x", shape=(4,), dtype="float32")
    narrow = relay.cast(x, "float16")  # not an up-cast: shared as it is
    wide = relay.cast(relay.var("h", shape=(4,), dtype="float16"), "float32")
    out = relay.Tuple([relay.exp(narrow), relay.negative(narrow),
                       relay.nn.softmax(wide), relay.nn.softmax(wide), relay.exp(wide)])
    func = run_opt_pass(relay.Function(relay.analysis.free_vars(out), out),
                        transform.InferType())
    after = run_opt_pass(func, transform.CanonicalizeCast())
    # softmax is not elementwise: both share the first cast, which exp also uses.
    assert count_ops(after)["cast"] == 2
    assert_structural_equal(after, func)


def test_bias_add_to_add():
    x = relay.var("x", shape=(1, 16, 8, 8))
    b = relay.var("b", shape=(16,))
    before = relay.Function([x, b], relay.nn.bias_add(x, b))
    expected = relay.Function([x, b], relay.add(x, relay.expand_dims(b, axis=1,
                                                                      num_newaxis=2)))
    after = run_opt_pass(before, transform.CanonicalizeOps())
    assert_structural_equal(after, run_opt_pass(expected, transform.InferType()))
    check_numerics(before, after)


@pytest.mark.parametrize("axis, expanded", [(-1, None), (3, None), (0, 3), (2, 1)])
def test_bias_add_axes(axis, expanded):
    x = relay.var("x", shape=(2, 3, 4, 5))
    b = relay.var("b", shape=((2, 3, 4, 5)[axis],))
    before = relay.Function([x, b], relay.nn.bias_add(x, b, axis=axis))
    bias = b if expanded is None else relay.expand_dims(b, axis=1, num_newaxis=expanded)
    expected = relay.Function([x, b], relay.add(x, bias))
    after = run_opt_pass(before, transform.CanonicalizeOps())
    assert_structural_equal(after, run_opt_pass(expected, transform.InferType()))
    check_numerics(before, after)


def test_pass_infos():
    for factory, name in ((transform.CanonicalizeOps, "CanonicalizeOps"),
                          (transform.CanonicalizeCast, "CanonicalizeCast")):
        info = factory().info
        assert (info.name, info.opt_level, info.required) == (name, 3, ["InferType"])


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_models_numerics(name):
    after = transform.CanonicalizeCast()(transform.CanonicalizeOps()(bound_model(name)))
    assert "nn.bias_add" not in count_ops(after["main"])
    check_model(name, after)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(func=relay_functions(max_steps=8, nesting=False), data=st.data())
def test_random_graphs_with_casts(func, data):
    """Random graphs whose float32 inputs are up-cast from float16 parameters: every
    elementwise consumer after the first gets its own cast; the values do not change."""
    binds, params = {}, []
    for p in func.params:
        ty = p.type_annotation
        if ty.dtype == "float32" and data.draw(st.booleans()):
            half = relay.var(p.name_hint, shape=ty.shape, dtype="float16")
            binds[p] = relay.cast(half, "float32")
            params.append(half)
        else:
            params.append(p)
    body = relay.bind(func.body, binds)
    before = transform.InferType()(irlab.IRModule.from_expr(relay.Function(params, body)))
    after = transform.CanonicalizeCast()(before)
    # No up-cast is shared by two elementwise uses any more.
    uses = {}
    for node in post_order(after["main"]):
        if isinstance(node, relay.Call) and isinstance(node.op, relay.Op) \
                and node.op.pattern <= OpPattern.BROADCAST:
            for arg in node.args:
                if isinstance(arg, relay.Call) and arg.op.name == "cast":
                    uses[arg] = uses.get(arg, 0) + 1
    assert all(count == 1 for count in uses.values())
    rng = np.random.default_rng(0)
    args = [random_value(p.checked_type, rng) for p in before["main"].params]
    results = [relay.create_executor("debug", mod=m).evaluate()(*args) for m in (before, after)]
    for expected, got in zip(_flatten(results[0]), _flatten(results[1])):
        np.testing.assert_array_equal(got, expected)


def _flatten(value):
    if isinstance(value, tuple):
        return [v for item in value for v in _flatten(item)]
    return [value.numpy()]
