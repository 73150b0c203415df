"""SimplifyInference: batch_norm, dropout and layer_norm lowered to arithmetic, structurally as
TVM (tests/python/relay/test_pass_simplify_inference.py) and numerically on every model."""

import numpy as np
import pytest
from _model_references import MODEL_NAMES, bound_model, check_model

from irlab import relay
from irlab.ir import assert_structural_equal
from irlab.relay import transform
from irlab.relay.analysis import count_ops
from irlab.relay.testing import run_opt_pass
from irlab.testing.check import check_numerics, random_inputs


def _positive_var_inputs(func):
    """Random inputs with a non-negative ``moving_var`` (sqrt of a negative is NaN)."""
    inputs = random_inputs(func)
    inputs["moving_var"] = np.abs(inputs["moving_var"])
    return inputs


def simple_bn(x, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5, shape=None,
              dtype="float32", center=True, scale=True):
    """TVM's expected form: x * scale + shift with the vectors expanded along ``axis``."""
    bn_scale = relay.const(1, dtype) / relay.sqrt(moving_var + relay.const(epsilon, dtype))
    if scale:
        bn_scale = relay.multiply(bn_scale, gamma)
    shift = relay.multiply(relay.negative(moving_mean), bn_scale)
    if center:
        shift = relay.add(shift, beta)
    num_newaxis = len(shape) - (axis + 1)
    if num_newaxis:
        bn_scale = relay.expand_dims(bn_scale, axis=1, num_newaxis=num_newaxis)
        shift = relay.expand_dims(shift, axis=1, num_newaxis=num_newaxis)
    return x * bn_scale + shift


def _bn_vars(channels=10):
    ttype = relay.TensorType((channels,), "float32")
    return [relay.var(n, ttype) for n in ("gamma", "beta", "moving_mean", "moving_var")]


@pytest.mark.parametrize("dim, axis, nstep", [(2, 1, 1), (4, 1, 1), (4, 0, 3)])
def test_simplify_batchnorm(dim, axis, nstep):
    eps = 0.01
    ttype1 = relay.TensorType(tuple(10 for _ in range(dim)), "float32")
    x = relay.var("x", ttype1)
    gamma, beta, moving_mean, moving_var = _bn_vars()
    y1, y2 = x, x
    for _ in range(nstep):
        y1, _, _ = relay.nn.batch_norm(y1 + relay.const(1, "float32"), gamma, beta, moving_mean,
                                       moving_var, epsilon=eps, axis=axis)
        y1 = relay.nn.dropout(y1)
        y2 = simple_bn(y2 + relay.const(1, "float32"), gamma, beta, moving_mean, moving_var,
                       epsilon=eps, axis=axis, shape=ttype1.shape)
    params = [x, gamma, beta, moving_mean, moving_var]
    before = relay.Function(params, y1)
    after = run_opt_pass(before, transform.SimplifyInference())
    expected = run_opt_pass(relay.Function(params, y2), transform.InferType())
    assert_structural_equal(after, expected)
    check_numerics(before, after, inputs=_positive_var_inputs(before), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("center, scale", [(False, True), (True, False), (False, False)])
def test_batchnorm_center_scale_flags(center, scale):
    x = relay.var("x", shape=(2, 10, 3, 3))
    gamma, beta, mean, var = _bn_vars()
    out = relay.nn.batch_norm(x, gamma, beta, mean, var, center=center, scale=scale)[0]
    before = relay.Function([x, gamma, beta, mean, var], out)
    after = run_opt_pass(before, transform.SimplifyInference())
    expected = simple_bn(x, gamma, beta, mean, var, shape=(2, 10, 3, 3), center=center,
                         scale=scale)
    expected = run_opt_pass(relay.Function([x, gamma, beta, mean, var], expected),
                            transform.InferType())
    assert_structural_equal(after, expected)
    check_numerics(before, after, inputs=_positive_var_inputs(before))


def test_batchnorm_negative_axis_and_statistics_outputs():
    x = relay.var("x", shape=(2, 3, 10))
    gamma, beta, mean, var = _bn_vars()
    bn = relay.nn.batch_norm(x, gamma, beta, mean, var, axis=-1)
    # Fields 1 and 2 (the moving statistics) keep the batch_norm call, as TVM.
    out = relay.Tuple([bn[0], bn[1]])
    before = relay.Function([x, gamma, beta, mean, var], out)
    after = run_opt_pass(before, transform.SimplifyInference())
    counts = count_ops(after)
    assert counts["nn.batch_norm"] == 1 and counts["multiply"] == 3
    assert "expand_dims" not in counts  # the channel axis is the last one
    check_numerics(before, after, inputs=_positive_var_inputs(before))


def test_dropout_is_identity():
    x = relay.var("x", shape=(4, 5))
    before = relay.Function([x], relay.nn.relu(relay.nn.dropout(x, rate=0.3)))
    after = run_opt_pass(before, transform.SimplifyInference())
    expected = run_opt_pass(relay.Function([x], relay.nn.relu(x)), transform.InferType())
    assert_structural_equal(after, expected)


def test_layer_norm_decomposed():
    x = relay.var("x", shape=(2, 4, 6))
    gamma = relay.var("gamma", shape=(6,))
    beta = relay.var("beta", shape=(6,))
    before = relay.Function([x, gamma, beta],
                            relay.nn.layer_norm(x, gamma, beta, axis=-1, epsilon=1e-3))
    after = run_opt_pass(before, transform.SimplifyInference())

    mean = relay.mean(x, axis=[-1], keepdims=True)
    var = relay.variance(x, axis=[-1], keepdims=True, with_mean=mean)
    out = (x - mean) / relay.sqrt(var + relay.const(1e-3, "float32"))
    out = relay.add(relay.multiply(out, gamma), beta)
    expected = run_opt_pass(relay.Function([x, gamma, beta], out), transform.InferType())
    assert_structural_equal(after, expected)
    check_numerics(before, after, rtol=1e-4, atol=1e-4)


def test_layer_norm_middle_axis_without_center():
    x = relay.var("x", shape=(2, 4, 6))
    gamma = relay.var("gamma", shape=(4,))
    beta = relay.var("beta", shape=(4,))
    before = relay.Function([x, gamma, beta],
                            relay.nn.layer_norm(x, gamma, beta, axis=1, center=False))
    after = run_opt_pass(before, transform.SimplifyInference())
    counts = count_ops(after)
    assert "nn.layer_norm" not in counts and counts["expand_dims"] == 1
    assert counts["add"] == 1  # only var + eps: no beta
    check_numerics(before, after, rtol=1e-4, atol=1e-4)


def test_pass_info():
    info = transform.SimplifyInference().info
    assert (info.name, info.opt_level, info.required) == ("SimplifyInference", 0, ["InferType"])


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_models_numerics(name):
    after = transform.SimplifyInference()(bound_model(name))
    counts = count_ops(after["main"])
    assert not {"nn.batch_norm", "nn.layer_norm", "nn.dropout"} & set(counts)
    check_model(name, after)


@pytest.mark.parametrize("axis, center, scale", [(1, True, True), (-1, False, True),
                                                 (2, True, False)])
def test_instance_norm_decomposed(axis, center, scale):
    x = relay.var("x", shape=(2, 3, 4, 5))
    channels = (2, 3, 4, 5)[axis]
    gamma = relay.var("gamma", shape=(channels,))
    beta = relay.var("beta", shape=(channels,))
    before = relay.Function([x, gamma, beta], relay.nn.instance_norm(
        x, gamma, beta, axis=axis, epsilon=1e-3, center=center, scale=scale))
    after = run_opt_pass(before, transform.SimplifyInference())

    reduced = [i for i in range(1, 4) if i != axis % 4]
    mean = relay.mean(x, axis=reduced, keepdims=True)
    var = relay.variance(x, axis=reduced, keepdims=True, with_mean=mean)
    out = (x - mean) / relay.sqrt(var + relay.const(1e-3, "float32"))
    newaxis = 3 - axis % 4
    if scale:
        out = relay.multiply(out, relay.expand_dims(gamma, axis=1, num_newaxis=newaxis)
                             if newaxis else gamma)
    if center:
        out = relay.add(out, relay.expand_dims(beta, axis=1, num_newaxis=newaxis)
                        if newaxis else beta)
    expected = run_opt_pass(relay.Function([x, gamma, beta], out), transform.InferType())
    assert_structural_equal(after, expected)
    check_numerics(before, after, rtol=1e-4, atol=1e-4)
