"""FoldScaleAxis: the plain-layout cases of TVM's tests/python/relay/test_pass_fold_scale_axis.py
(irlab's conv2d has no blocked layouts such as NCHW4c), numerics on every model, and ResNet-18
whose batch norms disappear into the convolution weights."""

import numpy as np
import pytest
from _model_references import MODEL_NAMES, bound_model, check_model

import irlab
from irlab import relay
from irlab.ir import assert_structural_equal
from irlab.relay import transform
from irlab.relay.analysis import count_ops
from irlab.relay.build_module import bind_params_by_name
from irlab.relay.expr import Constant
from irlab.relay.expr_functor import post_order
from irlab.relay.testing import resnet, run_opt_pass
from irlab.testing.check import check_numerics
from irlab.transform import PassContext, Sequential

RNG = np.random.default_rng(0)


def _positive_scale(size):
    return RNG.uniform(0.5, 1, size=size).astype("float32")


def _typed(expr):
    return run_opt_pass(expr, transform.InferType())


def _weight_like(func, name="weight"):
    """A fresh weight var annotated with the type inference gave ``name`` in ``func``."""
    types = {p.name_hint: p.checked_type for p in _typed(func).params}
    return relay.var(name, types[name])


# ---------------------------------------------------------------------------------------------
# forward folding
def test_fold_fwd_simple():
    def before(x, conv_weight, in_bias, in_scale, channels):
        args = [x, conv_weight, in_bias]
        x = relay.multiply(x, in_scale)
        x = relay.nn.relu(x)
        x = relay.add(x, in_bias)
        y = relay.nn.conv2d(x, conv_weight, channels=channels, kernel_size=(3, 3),
                            padding=(1, 1))
        return relay.Function(args, y)

    def expected(x, conv_weight, in_bias, in_scale, channels):
        args = [x, conv_weight, in_bias]
        squeezed_scale = relay.squeeze(in_scale, axis=[1, 2])
        x = relay.nn.relu(x)
        in_bias = relay.divide(in_bias, relay.expand_dims(squeezed_scale, axis=1, num_newaxis=2))
        x = relay.add(x, in_bias)
        conv_weight = relay.multiply(conv_weight,
                                     relay.expand_dims(squeezed_scale, axis=1, num_newaxis=2))
        y = relay.nn.conv2d(x, conv_weight, channels=channels, kernel_size=(3, 3),
                            padding=(1, 1))
        return relay.Function(args, y)

    x = relay.var("x", shape=(2, 4, 10, 10))
    in_bias = relay.var("in_bias", shape=(4, 1, 1))
    in_scale = relay.const(_positive_scale((4, 1, 1)))
    y1 = before(x, relay.var("weight"), in_bias, in_scale, 2)
    weight = _weight_like(y1)
    y1_folded = run_opt_pass(_typed(y1), transform.ForwardFoldScaleAxis())
    assert_structural_equal(y1_folded, _typed(expected(x, weight, in_bias, in_scale, 2)))
    check_numerics(y1, y1_folded)


def test_fold_fwd_dual_path():
    """The scale is consumed by two depthwise NHWC convolutions."""

    def before(x, conv_weight, in_bias, in_scale, channels):
        args = [x, conv_weight, in_bias]
        x = relay.multiply(in_scale, x)
        x = relay.nn.relu(x)
        x = relay.subtract(x, in_bias)
        convs = [relay.nn.conv2d(x, conv_weight, channels=channels, kernel_size=(3, 3),
                                 data_layout="NHWC", kernel_layout="HWIO", groups=channels,
                                 padding=(1, 1)) for _ in range(2)]
        return relay.Function(args, relay.add(*convs))

    def expected(x, conv_weight, in_bias, in_scale, channels):
        args = [x, conv_weight, in_bias]
        x = relay.nn.relu(x)
        x = relay.subtract(x, relay.divide(in_bias, in_scale))
        convs = [relay.nn.conv2d(x, relay.multiply(conv_weight, in_scale), channels=channels,
                                 kernel_size=(3, 3), data_layout="NHWC", kernel_layout="HWIO",
                                 groups=channels, padding=(1, 1)) for _ in range(2)]
        return relay.Function(args, relay.add(*convs))

    x = relay.var("x", shape=(2, 4, 10, 3))
    weight = relay.var("weight", shape=(3, 3, 1, 3))
    in_bias = relay.var("in_bias", shape=(3,))
    in_scale = relay.const(_positive_scale(3))
    y1 = before(x, weight, in_bias, in_scale, 3)
    y1_folded = run_opt_pass(_typed(y1), transform.ForwardFoldScaleAxis())
    assert_structural_equal(y1_folded, _typed(expected(x, weight, in_bias, in_scale, 3)))
    check_numerics(y1, y1_folded)


def _nhwc_conv(data, weight, channels):
    return relay.nn.conv2d(data, weight, channels=channels, kernel_size=(3, 3),
                           data_layout="NHWC", kernel_layout="HWIO", padding=(1, 1))


@pytest.mark.parametrize("activation", ["leaky_relu", "relu"])
def test_fold_fwd_fail(activation):
    """The scaled value also feeds an add: the scale cannot be folded away."""
    x = relay.var("x", shape=(2, 11, 10, 4))
    in_scale = relay.const(_positive_scale((4,)))
    scaled = relay.multiply(x, in_scale)
    act = (relay.nn.leaky_relu(scaled, alpha=0.1) if activation == "leaky_relu"
           else relay.nn.relu(scaled))
    z = relay.add(_nhwc_conv(act, relay.var("weight"), 4), scaled)
    y1 = _typed(relay.Function(relay.analysis.free_vars(z), z))
    assert_structural_equal(run_opt_pass(y1, transform.ForwardFoldScaleAxis()), y1)


@pytest.mark.parametrize("in_scale", [relay.var("in_scale", shape=(4,)),
                                      relay.const(-_positive_scale((4,)))])
def test_fold_fwd_relu_fail(in_scale):
    """A variable or negative scale cannot pass a relu."""
    x = relay.var("x", shape=(2, 11, 10, 4))
    y = _nhwc_conv(relay.nn.relu(relay.multiply(x, in_scale)), relay.var("weight"), 4)
    y1 = _typed(relay.Function(relay.analysis.free_vars(y), y))
    assert_structural_equal(run_opt_pass(y1, transform.ForwardFoldScaleAxis()), y1)


def test_fold_fwd_let_fail():
    x = relay.var("x", shape=(2, 11, 10, 4))
    in_bias = relay.var("in_bias", shape=(4,))
    weight = relay.var("weight")
    scaled = relay.add(relay.nn.relu(relay.multiply(x, relay.const(_positive_scale((4,))))),
                       in_bias)
    x_var = relay.Var("x_var")
    let = relay.Let(x_var, scaled, relay.add(_nhwc_conv(x_var, weight, 4), scaled))
    y1 = _typed(relay.Function([x, weight, in_bias], let))
    assert_structural_equal(run_opt_pass(y1, transform.ForwardFoldScaleAxis()), y1)


def test_fold_fwd_negative_scale():
    """Without a relu in between, a negative scale folds too."""
    x = relay.var("x", shape=(2, 4, 10, 10))
    in_scale = relay.const(-_positive_scale((4, 1, 1)))

    def conv(data, weight):
        return relay.nn.conv2d(data, weight, channels=4, kernel_size=(3, 3), padding=(1, 1))

    weight_var = relay.var("weight")
    y1 = relay.Function([x, weight_var], conv(relay.multiply(x, in_scale), weight_var))
    weight = _weight_like(y1)
    squeezed = relay.squeeze(in_scale, axis=[1, 2])
    expected = relay.Function([x, weight], conv(x, relay.multiply(
        weight, relay.expand_dims(squeezed, axis=1, num_newaxis=2))))
    y1_folded = run_opt_pass(_typed(y1), transform.ForwardFoldScaleAxis())
    assert_structural_equal(y1_folded, _typed(expected))
    check_numerics(y1, y1_folded)


@pytest.mark.parametrize("data_shape, weight_shape", [((2, 4), (3, 4)), ((3, 5), (4, 5))])
def test_fold_fwd_dense(data_shape, weight_shape):
    x = relay.var("x", shape=data_shape)
    weight = relay.var("weight", shape=weight_shape)
    in_bias = relay.var("in_bias", shape=(data_shape[1],))
    in_scale = relay.const(_positive_scale((data_shape[1],)))
    before = relay.Function([x, weight, in_bias], relay.nn.dense(
        relay.add(relay.nn.relu(relay.multiply(x, in_scale)), in_bias), weight))
    expected = relay.Function([x, weight, in_bias], relay.nn.dense(
        relay.add(relay.nn.relu(x), relay.divide(in_bias, in_scale)),
        relay.multiply(weight, in_scale)))
    folded = run_opt_pass(_typed(before), transform.ForwardFoldScaleAxis())
    assert_structural_equal(folded, _typed(expected))
    check_numerics(before, folded)


# ---------------------------------------------------------------------------------------------
# backward folding
def _nchw_conv(data, weight, channels, **kwargs):
    return relay.nn.conv2d(data, weight, channels=channels, kernel_size=(3, 3), padding=(1, 1),
                           **kwargs)


def test_fold_bwd_simple():
    channels = 8
    x = relay.var("x", shape=(2, 4, 10, 10))
    out_bias = relay.var("out_bias", shape=(channels,))
    out_scale = relay.const(_positive_scale((channels, 1, 1)))

    def before(weight):
        y = _nchw_conv(x, weight, channels)
        y = relay.add(y, relay.expand_dims(out_bias, axis=1, num_newaxis=2))
        y = relay.multiply(relay.nn.relu(y), out_scale)
        return relay.Function([x, weight, out_bias], y)

    y1 = before(relay.var("weight"))
    weight = _weight_like(y1)
    squeezed = relay.squeeze(out_scale, axis=[1, 2])
    y = _nchw_conv(x, relay.multiply(weight, relay.expand_dims(squeezed, axis=1,
                                                               num_newaxis=3)), channels)
    bias = relay.multiply(relay.expand_dims(out_bias, axis=1, num_newaxis=2),
                          relay.expand_dims(squeezed, axis=1, num_newaxis=2))
    expected = relay.Function([x, weight, out_bias], relay.nn.relu(relay.add(y, bias)))
    folded = run_opt_pass(_typed(y1), transform.BackwardFoldScaleAxis())
    assert_structural_equal(folded, _typed(expected))
    check_numerics(y1, folded)


def test_fold_bwd_dual_path():
    channels = 8
    x = relay.var("x", shape=(2, 4, 10, 10))
    out_bias = relay.var("out_bias", shape=(channels,))
    out_scale = relay.const(_positive_scale((channels, 1, 1)))

    def before(weight):
        y1 = relay.nn.relu(_nchw_conv(x, weight, channels))
        y2 = relay.nn.relu(_nchw_conv(x, weight, channels))
        return relay.Function([x, weight, out_bias],
                              relay.multiply(relay.add(y1, y2), out_scale))

    y1 = before(relay.var("weight"))
    weight = _weight_like(y1)
    squeezed = relay.squeeze(out_scale, axis=[1, 2])

    def folded_weight():
        return relay.multiply(weight, relay.expand_dims(squeezed, axis=1, num_newaxis=3))

    expected = relay.Function([x, weight, out_bias], relay.add(
        relay.nn.relu(_nchw_conv(x, folded_weight(), channels)),
        relay.nn.relu(_nchw_conv(x, folded_weight(), channels))))
    folded = run_opt_pass(_typed(y1), transform.BackwardFoldScaleAxis())
    assert_structural_equal(folded, _typed(expected))
    check_numerics(y1, folded)


def test_fold_bwd_simple_constant():
    """A scalar scale, after relu(conv + bias), folds into the constant weight and bias."""
    data = relay.var("data", relay.TensorType((1, 3, 8, 8), "float32"))
    weight = relay.const(RNG.standard_normal((16, 3, 3, 3)).astype("float32"))
    bias = relay.const(RNG.standard_normal((16, 1, 1)).astype("float32"))
    y = relay.add(relay.nn.conv2d(data, weight, kernel_size=(3, 3), channels=16,
                                  padding=(1, 1)), bias)
    y = relay.multiply(relay.nn.relu(y), relay.const(2.0))
    mod = irlab.IRModule.from_expr(relay.Function([data], y))
    with PassContext(opt_level=3):
        after = Sequential([transform.InferType(), transform.FoldScaleAxis()])(mod)
    body = after["main"].body
    assert body.op.name == "nn.relu" and "multiply" not in count_ops(after["main"])
    new_bias = body.args[0].args[1]
    new_weight = body.args[0].args[0].args[1]
    np.testing.assert_allclose(new_weight.data.numpy(), 2 * weight.data.numpy(), rtol=1e-6)
    np.testing.assert_allclose(new_bias.data.numpy(), 2 * bias.data.numpy(), rtol=1e-6)
    check_numerics(mod, after)


def test_fold_bwd_dual_consumer():
    channels = 4
    x = relay.var("x", shape=(2, 4, 10, 10))
    out_bias = relay.var("out_bias", shape=(channels,))
    out_scale = relay.const(_positive_scale((channels, 1, 1)))

    def before(weight):
        y0 = relay.nn.relu(relay.multiply(_nchw_conv(x, weight, channels), out_scale))
        y1 = relay.nn.relu(relay.multiply(_nchw_conv(y0, weight, channels), out_scale))
        y2 = relay.nn.relu(relay.multiply(_nchw_conv(y0, weight, channels), out_scale))
        return relay.Function([x, weight, out_bias], relay.add(y1, y2))

    y1 = before(relay.var("weight"))
    weight = _weight_like(y1)

    def folded_weight():
        squeezed = relay.squeeze(out_scale, axis=[1, 2])
        return relay.multiply(weight, relay.expand_dims(squeezed, axis=1, num_newaxis=3))

    y0 = relay.nn.relu(_nchw_conv(x, folded_weight(), channels))
    expected = relay.Function([x, weight, out_bias], relay.add(
        relay.nn.relu(_nchw_conv(y0, folded_weight(), channels)),
        relay.nn.relu(_nchw_conv(y0, folded_weight(), channels))))
    folded = run_opt_pass(_typed(y1), transform.BackwardFoldScaleAxis())
    assert_structural_equal(folded, _typed(expected))
    check_numerics(y1, folded)


def test_fold_bwd_fail():
    x = relay.var("x", shape=(4, 4, 10, 10))
    weight = relay.var("weight")
    out_scale = relay.const(_positive_scale((4, 1, 1)))
    # The two branches put the channels on different axes (NCHW vs CNHW).
    y1 = relay.nn.relu(_nchw_conv(x, weight, 4))
    y2 = relay.nn.relu(_nchw_conv(x, weight, 4, out_layout="CNHW"))
    fail1 = relay.Function([x, weight], relay.multiply(relay.add(y1, y2), out_scale))
    # The convolution's output is also read unscaled.
    conv = _nchw_conv(x, weight, 4)
    fail2 = relay.Function([x, weight], relay.add(relay.multiply(conv, out_scale),
                                                  relay.nn.relu(conv)))
    for func in (fail1, fail2):
        typed = _typed(func)
        assert_structural_equal(run_opt_pass(typed, transform.BackwardFoldScaleAxis()), typed)


@pytest.mark.parametrize("out_scale", [relay.var("out_scale", shape=(4, 1, 1)),
                                       relay.const(-_positive_scale((4, 1, 1)))])
def test_fold_bwd_relu_fail(out_scale):
    x = relay.var("x", shape=(4, 4, 10, 10))
    y = relay.multiply(relay.nn.relu(_nchw_conv(x, relay.var("weight"), 4)), out_scale)
    typed = _typed(relay.Function(relay.analysis.free_vars(y), y))
    assert_structural_equal(run_opt_pass(typed, transform.BackwardFoldScaleAxis()), typed)


def test_fold_bwd_negative_scale():
    x = relay.var("x", shape=(2, 4, 10, 10))
    out_scale = relay.const(-_positive_scale((8, 1, 1)))
    weight_var = relay.var("weight")
    y1 = relay.Function([x, weight_var],
                        relay.multiply(_nchw_conv(x, weight_var, 8), out_scale))
    weight = _weight_like(y1)
    squeezed = relay.squeeze(out_scale, axis=[1, 2])
    expected = relay.Function([x, weight], _nchw_conv(x, relay.multiply(
        weight, relay.expand_dims(squeezed, axis=1, num_newaxis=3)), 8))
    folded = run_opt_pass(_typed(y1), transform.BackwardFoldScaleAxis())
    assert_structural_equal(folded, _typed(expected))
    check_numerics(y1, folded)


@pytest.mark.parametrize("data_shape, weight_shape", [((2, 4), (3, 4)), ((3, 5), (4, 5))])
def test_fold_bwd_dense(data_shape, weight_shape):
    x = relay.var("x", shape=data_shape)
    weight = relay.var("weight", shape=weight_shape)
    in_bias = relay.var("in_bias", shape=(weight_shape[0],))
    in_scale = relay.const(_positive_scale((weight_shape[0],)))
    before = relay.Function([x, weight, in_bias], relay.multiply(
        relay.nn.relu(relay.add(relay.nn.dense(x, weight), in_bias)), in_scale))
    scaled_weight = relay.multiply(weight, relay.expand_dims(in_scale, axis=1))
    expected = relay.Function([x, weight, in_bias], relay.nn.relu(relay.add(
        relay.nn.dense(x, scaled_weight), relay.multiply(in_bias, in_scale))))
    folded = run_opt_pass(_typed(before), transform.BackwardFoldScaleAxis())
    assert_structural_equal(folded, _typed(expected))
    check_numerics(before, folded)


def test_fold_bwd_bias_add():
    x = relay.var("x", shape=(2, 4, 10, 10))
    out_bias = relay.var("out_bias", shape=(4,))
    out_scale = relay.const(_positive_scale((4, 1, 1)))
    weight_var = relay.var("weight")
    y1 = relay.Function([x, weight_var, out_bias], relay.multiply(relay.nn.relu(
        relay.nn.bias_add(_nchw_conv(x, weight_var, 4), out_bias)), out_scale))
    weight = _weight_like(y1)
    squeezed = relay.squeeze(out_scale, axis=[1, 2])
    conv = _nchw_conv(x, relay.multiply(weight, relay.expand_dims(squeezed, axis=1,
                                                                  num_newaxis=3)), 4)
    expected = relay.Function([x, weight, out_bias], relay.nn.relu(
        relay.nn.bias_add(conv, relay.multiply(out_bias, squeezed))))
    folded = run_opt_pass(_typed(y1), transform.BackwardFoldScaleAxis())
    assert_structural_equal(folded, _typed(expected))
    check_numerics(y1, folded)


# ---------------------------------------------------------------------------------------------
# pass structure and whole networks
def test_pass_infos():
    fold = transform.FoldScaleAxis()
    assert (fold.info.name, fold.info.opt_level) == ("FoldScaleAxis", 0)
    assert [(p.info.name, p.info.opt_level, p.info.required) for p in fold.passes] == [
        ("BackwardFoldScaleAxis", 3, ["InferType"]), ("ForwardFoldScaleAxis", 3, ["InferType"]),
        ("FoldConstant", 2, [])]


def _remove_batch_norm(mod):
    seq = Sequential([transform.SimplifyInference(), transform.FoldConstant(),
                      transform.FoldScaleAxis(), transform.FoldConstant()])
    with PassContext(opt_level=3):
        return seq(mod)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_models_numerics(name):
    after = _remove_batch_norm(bound_model(name))
    counts = count_ops(after["main"])
    assert "nn.batch_norm" not in counts
    if name in ("simplenet", "mobilenet_v2"):
        assert "multiply" not in counts  # every batch norm follows a convolution
    if name.startswith("resnet"):
        assert counts["multiply"] == 1  # the last batch norm, before global pooling
    check_model(name, after)


def _upstream_of_convolutions(func):
    """Every node some conv2d's data input depends on."""
    nodes = set()
    for node in post_order(func):
        if isinstance(node, relay.Call) and getattr(node.op, "name", "") == "nn.conv2d":
            nodes.update(post_order(node.args[0], stop=nodes))
    return nodes


def test_resnet18_batch_norms_fold_into_convolutions():
    mod, params = resnet.get_workload(num_layers=18)
    bound = irlab.IRModule.from_expr(bind_params_by_name(mod["main"], params))
    func = _remove_batch_norm(bound)["main"]
    counts = count_ops(func)
    assert "nn.batch_norm" not in counts
    convs = [n for n in post_order(func) if isinstance(n, relay.Call)
             and getattr(n.op, "name", "") == "nn.conv2d"]
    assert len(convs) == 21 and all(isinstance(c.args[1], Constant) for c in convs)
    upstream = _upstream_of_convolutions(func)
    assert not [n for n in upstream if isinstance(n, relay.Call) and n.op.name == "multiply"]
    # Only the final batch norm (before global pooling, no convolution after it) remains.
    assert counts["multiply"] == 1
