"""ConvertLayout, AlterOpLayout and Legalize: cases of TVM's test_pass_convert_op_layout.py,
test_pass_alter_op_layout.py (hook tests) and test_pass_legalize.py, the hook registries, and
numerics on every model."""

import contextlib

import numpy as np
import pytest
from _model_references import MODEL_NAMES, bound_model, check_model

import irlab
from irlab import relay
from irlab.errors import IrlabError
from irlab.ir import assert_structural_equal
from irlab.ir.op import Op
from irlab.ir.type import TensorType, TupleType
from irlab.relay import analysis, transform
from irlab.relay.analysis import count_ops
from irlab.relay.expr_functor import post_order
from irlab.relay.transform import layout
from irlab.testing.check import check_numerics
from irlab.transform import PassContext, Sequential


@contextlib.contextmanager
def temp_op_attr(op_name, attr_key, value):
    """Set an op attribute for the duration of a test (TVM's TempOpAttr)."""
    op = Op.get(op_name)
    old = op.get_attr(attr_key)
    op.reset_attr(attr_key)
    op.set_attr(attr_key, value)
    try:
        yield
    finally:
        op.reset_attr(attr_key)
        if old is not None:
            op.set_attr(attr_key, old, 0)


def run_opt_pass(expr, passes):
    """As TVM's test helper: a Sequential at opt level 3 (so ``required`` passes run too)."""
    passes = passes if isinstance(passes, list) else [passes]
    mod = irlab.IRModule.from_expr(expr)
    with PassContext(opt_level=3):
        mod = Sequential(passes)(mod)
    return mod["main"]


def _check(before, passes, expected, numerics=True):
    after = run_opt_pass(before, passes)
    assert_structural_equal(after, run_opt_pass(expected, transform.InferType()))
    if numerics:
        check_numerics(before, after)
    return after


def _nhwc_conv(x, weight, channels=64, kernel=3, padding=(1, 1)):
    return relay.nn.conv2d(x, weight, channels=channels, kernel_size=(kernel, kernel),
                           padding=padding, data_layout="NHWC", kernel_layout="HWIO")


def _nchw_conv(x, weight, channels=64, kernel=3, padding=(1, 1)):
    return relay.nn.conv2d(x, weight, channels=channels, kernel_size=(kernel, kernel),
                           padding=padding)


TO_NCHW = {"nn.conv2d": ["NCHW", "default"]}
TO_NHWC = {"nn.conv2d": ["NHWC", "default"]}


# ---------------------------------------------------------------------------------------------
# ConvertLayout
def test_no_convert_layout():
    x = relay.var("x", shape=(1, 64, 8, 8))
    weight = relay.var("weight", shape=(64, 64, 3, 3))
    before = relay.Function([x, weight], relay.nn.relu(_nchw_conv(x, weight)))
    _check(before, transform.ConvertLayout(TO_NCHW), before)


def test_conv_convert_layout():
    x = relay.var("x", shape=(1, 8, 8, 64))
    weight = relay.var("weight", shape=(3, 3, 64, 64))
    before = relay.Function([x, weight], relay.nn.relu(_nhwc_conv(x, weight)))
    y = _nchw_conv(relay.layout_transform(x, "NHWC", "NCHW"),
                   relay.layout_transform(weight, "HWIO", "OIHW"))
    y = relay.layout_transform(relay.nn.relu(y), "NCHW", "NHWC")
    _check(before, transform.ConvertLayout(TO_NCHW), relay.Function([x, weight], y))


def test_conv_nhwc_convert_layout():
    x = relay.var("x", shape=(1, 64, 8, 8))
    weight = relay.var("weight", shape=(64, 64, 3, 3))
    before = relay.Function([x, weight], relay.nn.relu(_nchw_conv(x, weight)))
    y = _nhwc_conv(relay.layout_transform(x, "NCHW", "NHWC"),
                   relay.layout_transform(weight, "OIHW", "HWIO"))
    y = relay.layout_transform(relay.nn.relu(y), "NHWC", "NCHW")
    _check(before, transform.ConvertLayout(TO_NHWC), relay.Function([x, weight], y))


def _conv_bias_pool(pool_layout_expected):
    x = relay.var("x", shape=(1, 8, 8, 64))
    bias = relay.var("bias", shape=(64,))
    weight = relay.var("weight", shape=(3, 3, 64, 64))
    y = relay.nn.bias_add(_nhwc_conv(x, weight), bias, axis=3)
    y = relay.Tuple([y])[0]  # a useless tuple, eliminated by the rewriter
    y = relay.nn.relu(y)
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), layout="NHWC")
    y = relay.nn.batch_flatten(relay.cast(y, "int32"))
    before = relay.Function(analysis.free_vars(y), y)

    y = _nchw_conv(relay.layout_transform(x, "NHWC", "NCHW"),
                   relay.layout_transform(weight, "HWIO", "OIHW"))
    b = relay.layout_transform(relay.expand_dims(bias, axis=0, num_newaxis=3), "NHWC", "NCHW")
    y = relay.nn.relu(relay.add(y, b))
    if pool_layout_expected == "NHWC":
        y = relay.layout_transform(y, "NCHW", "NHWC")
        y = relay.nn.max_pool2d(y, pool_size=(2, 2), layout="NHWC", out_layout="NHWC")
        y = relay.cast(y, "int32")
    else:
        y = relay.cast(relay.nn.max_pool2d(y, pool_size=(2, 2)), "int32")
        # irlab transforms back before batch_flatten (TVM feeds it NCHW data, which changes
        # the element order of the result).
        y = relay.layout_transform(y, "NCHW", "NHWC")
    y = relay.nn.batch_flatten(y)
    return before, relay.Function(analysis.free_vars(y), y)


def test_conv_bias_pool_convert_layout():
    before, expected = _conv_bias_pool("NCHW")
    _check(before, transform.ConvertLayout(TO_NCHW), expected)


def test_conv_bias_pool_uses_specified_convert_layout():
    before, expected = _conv_bias_pool("NHWC")
    _check(before, transform.ConvertLayout({"nn.conv2d": ["NCHW", "OIHW"],
                                            "nn.max_pool2d": ["NHWC"]}), expected)


def test_conv_concat_convert_layout():
    x = relay.var("x", shape=(1, 8, 8, 64))
    weight1 = relay.var("weight1", shape=(3, 3, 64, 64))
    weight2 = relay.var("weight2", shape=(3, 3, 64, 64))
    y = _nhwc_conv(x, weight1)
    y1 = _nhwc_conv(y, weight2)
    before = relay.Function(analysis.free_vars(y1), relay.concatenate([y, y1], axis=3))
    before = relay.Function([x, weight1, weight2], before.body)

    y = _nchw_conv(relay.layout_transform(x, "NHWC", "NCHW"),
                   relay.layout_transform(weight1, "HWIO", "OIHW"))
    y1 = _nchw_conv(y, relay.layout_transform(weight2, "HWIO", "OIHW"))
    ret = relay.layout_transform(relay.concatenate([y, y1], axis=1), "NCHW", "NHWC")
    _check(before, transform.ConvertLayout(TO_NCHW),
           relay.Function([x, weight1, weight2], ret))


def test_dual_path_convert_layout():
    x = relay.var("x", shape=(1, 8, 8, 64))
    weight1 = relay.var("weight1", shape=(3, 3, 64, 32))
    weight2 = relay.var("weight2", shape=(3, 3, 32, 32))
    y = relay.nn.relu(_nhwc_conv(x, weight1, 32))
    y1 = relay.nn.relu(_nhwc_conv(y, weight2, 32))
    y2 = relay.nn.batch_flatten(y)
    before = relay.Function([x, weight1, weight2], relay.Tuple([y1, y2]))

    y = relay.nn.relu(_nchw_conv(relay.layout_transform(x, "NHWC", "NCHW"),
                                 relay.layout_transform(weight1, "HWIO", "OIHW"), 32))
    y1 = relay.nn.relu(_nchw_conv(y, relay.layout_transform(weight2, "HWIO", "OIHW"), 32))
    y1 = relay.layout_transform(y1, "NCHW", "NHWC")
    # As for batch_flatten above, irlab restores NHWC first (TVM flattens NCHW data).
    y2 = relay.nn.batch_flatten(relay.layout_transform(y, "NCHW", "NHWC"))
    _check(before, transform.ConvertLayout(TO_NCHW),
           relay.Function([x, weight1, weight2], relay.Tuple([y1, y2])))


def test_bn_convert_layout():
    x = relay.var("x", shape=(1, 8, 8, 64))
    weight1 = relay.var("weight1", shape=(3, 3, 64, 32))
    gamma, beta, mean, variance = (relay.var(n) for n in ("gamma", "beta", "mean", "var"))
    y = relay.nn.batch_norm(_nhwc_conv(x, weight1, 32), gamma, beta, mean, variance, axis=3)
    before = relay.Function(analysis.free_vars(y[0]), y[0])
    after = run_opt_pass(before, transform.ConvertLayout(TO_NCHW))
    # Only one NCHW -> NHWC transform: batch_norm follows the convolution's layout.
    back = [n for n in post_order(after) if isinstance(n, relay.Call)
            and n.op.name == "layout_transform" and n.attrs.src_layout == "NCHW"]
    assert len(back) == 1
    bn = [n for n in post_order(after) if isinstance(n, relay.Call)
          and n.op.name == "nn.batch_norm"]
    assert bn[0].attrs.axis == 1


def test_resnet_convert_layout():
    def before(pool_layout="NHWC"):
        x = relay.var("x", shape=(1, 8, 8, 64))
        weight1 = relay.var("weight1", shape=(3, 3, 64, 32))
        weight2 = relay.var("weight2", shape=(1, 1, 64, 32))
        y = relay.nn.relu(_nhwc_conv(x, weight1, 32))
        y2 = relay.nn.relu(_nhwc_conv(x, weight2, 32, kernel=1, padding=(0, 0)))
        y = relay.nn.global_max_pool2d(y + y2, layout=pool_layout)
        return relay.Function(analysis.free_vars(y), y)

    def expected(pool_nhwc):
        x = relay.var("x", shape=(1, 8, 8, 64))
        weight1 = relay.var("weight1", shape=(3, 3, 64, 32))
        weight2 = relay.var("weight2", shape=(1, 1, 64, 32))
        w1 = relay.layout_transform(weight1, "HWIO", "OIHW")
        w2 = relay.layout_transform(weight2, "HWIO", "OIHW")
        xt = relay.layout_transform(x, "NHWC", "NCHW")
        y = relay.nn.relu(_nchw_conv(xt, w1, 32))
        y2 = relay.nn.relu(_nchw_conv(xt, w2, 32, kernel=1, padding=(0, 0)))
        y = y + y2
        if pool_nhwc:
            y = relay.layout_transform(y, "NCHW", "NHWC")
            y = relay.nn.global_max_pool2d(y, layout="NHWC", out_layout="NHWC")
        else:
            y = relay.layout_transform(relay.nn.global_max_pool2d(y), "NCHW", "NHWC")
        return relay.Function([x, weight1, weight2], y)

    _check(before(), transform.ConvertLayout(TO_NCHW), expected(False))
    _check(before(), transform.ConvertLayout({**TO_NCHW, "nn.global_max_pool2d": ["NHWC"]}),
           expected(True))


def test_scalar_convert_layout():
    x = relay.var("x", shape=(1, 8, 8, 64))
    weight = relay.var("weight", shape=(3, 3, 64, 64))
    before = relay.Function([x, weight], relay.add(_nhwc_conv(x, weight),
                                                   relay.const(1, "float32")))
    y = _nchw_conv(relay.layout_transform(x, "NHWC", "NCHW"),
                   relay.layout_transform(weight, "HWIO", "OIHW"))
    y = relay.layout_transform(relay.add(y, relay.const(1.0, "float32")), "NCHW", "NHWC")
    _check(before, transform.ConvertLayout(TO_NCHW), relay.Function([x, weight], y))


@pytest.mark.parametrize("norm", ["layer_norm", "batch_norm", "instance_norm"])
def test_conv_norm_convert_layout(norm):
    x = relay.var("x", shape=(1, 8, 8, 64))
    weight = relay.var("weight", shape=(3, 3, 64, 64))
    vec = [relay.var(n, relay.TensorType((64,), "float32"))
           for n in ("beta", "gamma", "moving_mean", "moving_var")]

    def apply(y, axis):
        if norm in ("layer_norm", "instance_norm"):
            return getattr(relay.nn, norm)(y, vec[1], vec[0], axis=axis)
        return relay.nn.relu(relay.nn.batch_norm(y, vec[1], vec[0], vec[2], vec[3],
                                                 axis=axis)[0])

    body = apply(_nhwc_conv(x, weight), 3)
    before = relay.Function(analysis.free_vars(body), body)
    y = _nchw_conv(relay.layout_transform(x, "NHWC", "NCHW"),
                   relay.layout_transform(weight, "HWIO", "OIHW"))
    y = relay.layout_transform(apply(y, 1), "NCHW", "NHWC")
    after = _check(before, transform.ConvertLayout(TO_NCHW),
                   relay.Function(before.params, y), numerics=False)
    inputs = {p.name_hint: np.random.default_rng(0).uniform(0.5, 1.5, p.checked_type.shape)
              .astype("float32") for p in after.params}
    check_numerics(before, after, inputs=inputs, rtol=1e-4, atol=1e-4)


def test_lower_rank_operand_is_expanded():
    """add(conv, z) with z of shape (H, W, C) (TVM's transpose test setup)."""
    x = relay.var("x", shape=(1, 8, 8, 64))
    weight = relay.var("weight", shape=(3, 3, 64, 32))
    z = relay.var("z", shape=(8, 8, 32))
    before = relay.Function([x, weight, z], relay.add(_nhwc_conv(x, weight, 32), z))
    y = _nchw_conv(relay.layout_transform(x, "NHWC", "NCHW"),
                   relay.layout_transform(weight, "HWIO", "OIHW"), 32)
    z_nchw = relay.layout_transform(relay.expand_dims(z, axis=0), "NHWC", "NCHW")
    y = relay.layout_transform(relay.add(y, z_nchw), "NCHW", "NHWC")
    _check(before, transform.ConvertLayout(TO_NCHW), relay.Function([x, weight, z], y))


def test_depthwise_conv_gets_hwoi():
    x = relay.var("x", shape=(1, 8, 6, 6))
    weight = relay.var("weight", shape=(8, 1, 3, 3))
    before = relay.Function([x, weight], relay.nn.conv2d(
        x, weight, channels=8, kernel_size=(3, 3), padding=(1, 1), groups=8))
    after = run_opt_pass(before, transform.ConvertLayout(TO_NHWC))
    conv = [n for n in post_order(after) if isinstance(n, relay.Call)
            and n.op.name == "nn.conv2d"][0]
    assert (conv.attrs.data_layout, conv.attrs.kernel_layout) == ("NHWC", "HWOI")
    check_numerics(before, after)


def test_convert_layout_rejects_bad_desired_layouts():
    with pytest.raises(IrlabError):
        transform.ConvertLayout(["NHWC"])
    with pytest.raises(IrlabError):
        transform.ConvertLayout({"nn.conv2d": "NHWC"})
    x = relay.var("x", shape=(1, 8, 6, 6))
    func = relay.Function([x], _nchw_conv(x, relay.var("w", shape=(4, 8, 3, 3)), 4))
    with pytest.raises(IrlabError):
        run_opt_pass(func, transform.ConvertLayout({"nn.conv2d": ["default", "default"]}))


# ---------------------------------------------------------------------------------------------
# AlterOpLayout (hooks)
def _conv_relu_before():
    x = relay.var("x", shape=(1, 64, 8, 8))
    weight = relay.var("weight", shape=(64, 64, 3, 3))
    return relay.Function([x, weight], relay.nn.relu(_nchw_conv(x, weight)))


def test_alter_op():
    """Directly replacing an operator with a new one."""

    def alter_conv2d(attrs, inputs, tinfos, out_type):
        data, weight = inputs
        return relay.nn.conv2d(data, relay.multiply(weight, relay.const(2.0, "float32")),
                               **attrs)

    x = relay.var("x", shape=(1, 64, 8, 8))
    weight = relay.var("weight", shape=(64, 64, 3, 3))
    expected = relay.Function([x, weight], relay.nn.relu(_nchw_conv(
        x, relay.multiply(weight, relay.const(2.0, "float32")))))
    with temp_op_attr("nn.conv2d", "FTVMAlterOpLayout", alter_conv2d):
        _check(_conv_relu_before(), transform.AlterOpLayout(), expected, numerics=False)


def test_alter_return_none():
    x = relay.var("x", shape=(1, 64, 8, 8))
    before = relay.Function([x], relay.nn.global_max_pool2d(x))
    called = []

    def alter(attrs, inputs, tinfos, out_type):
        called.append((tuple(t.shape for t in tinfos), out_type))
        return None

    with temp_op_attr("nn.global_max_pool2d", "FTVMAlterOpLayout", alter):
        _check(before, transform.AlterOpLayout(), before)
    assert called == [(((1, 64, 8, 8),), TensorType((1, 64, 1, 1), "float32"))]


def test_alter_layout_propagates_and_transforms_back():
    """A conv altered to NHWC: relu, the bias add and the pool follow; transforms are
    inserted at the inputs and at the output (TVM's test_alter_layout, with NHWC in place
    of NCHW16c)."""

    def alter_conv2d(attrs, inputs, tinfos, out_type):
        new_attrs = dict(attrs, data_layout="NHWC", kernel_layout="HWIO")
        return relay.nn.conv2d(*inputs, **new_attrs)

    x = relay.var("x", shape=(1, 64, 8, 8))
    bias = relay.var("bias", shape=(64, 1, 1))
    weight = relay.var("weight", shape=(64, 64, 3, 3))
    y = relay.nn.relu(relay.add(_nchw_conv(x, weight), bias))
    y = relay.nn.max_pool2d(y, pool_size=(2, 2))
    before = relay.Function([x, bias, weight], y)

    y = _nhwc_conv(relay.layout_transform(x, "NCHW", "NHWC"),
                   relay.layout_transform(weight, "OIHW", "HWIO"))
    b = relay.layout_transform(relay.expand_dims(bias, axis=0), "NCHW", "NHWC")
    y = relay.nn.relu(relay.add(y, b))
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), layout="NHWC")
    y = relay.layout_transform(y, "NHWC", "NCHW")
    with temp_op_attr("nn.conv2d", "FTVMAlterOpLayout", alter_conv2d):
        _check(before, transform.AlterOpLayout(), relay.Function([x, bias, weight], y))


def test_alter_layout_scalar_and_dual_path():
    def alter_conv2d(attrs, inputs, tinfos, out_type):
        return relay.nn.conv2d(*inputs, **dict(attrs, data_layout="NHWC",
                                               kernel_layout="HWIO"))

    x = relay.var("x", shape=(1, 64, 8, 8))
    weight = relay.var("weight", shape=(64, 64, 3, 3))
    y = relay.add(_nchw_conv(x, weight), relay.const(1.0))
    z = relay.Tuple([relay.nn.relu(y), relay.nn.batch_flatten(y)])
    before = relay.Function([x, weight], z)
    with temp_op_attr("nn.conv2d", "FTVMAlterOpLayout", alter_conv2d):
        after = run_opt_pass(before, transform.AlterOpLayout())
    # The scalar is not transformed; the shared add is transformed back once.
    transforms = [n for n in post_order(after) if isinstance(n, relay.Call)
                  and n.op.name == "layout_transform"]
    assert len(transforms) == 4
    check_numerics(before, after)


def test_alter_hooks_per_target():
    seen = []
    layout.register_alter_op_layout("nn.global_avg_pool2d",
                                    lambda *args: seen.append("generic"), level=10)
    layout.register_alter_op_layout("nn.global_avg_pool2d",
                                    lambda *args: seen.append("cuda"), level=10,
                                    target="cuda")
    hooks = Op.get("nn.global_avg_pool2d").get_attr("FTVMAlterOpLayout")
    assert isinstance(hooks, layout.TargetHooks)
    assert hooks.resolve(["cuda"]) is not hooks.resolve([])
    # A lower level never overrides a registered hook.
    layout.register_alter_op_layout("nn.global_avg_pool2d", lambda *args: seen.append("low"),
                                    level=5)
    x = relay.var("x", shape=(1, 4, 3, 3))
    try:
        run_opt_pass(relay.Function([x], relay.nn.global_avg_pool2d(x)),
                     transform.AlterOpLayout())
    finally:
        Op.get("nn.global_avg_pool2d").reset_attr("FTVMAlterOpLayout")
    assert seen == ["generic"]  # no current target: the generic CPU hook


def test_default_cpu_conv2d_hook_is_identity():
    before = _conv_relu_before()
    _check(before, transform.AlterOpLayout(), before, numerics=False)


def test_pass_infos():
    infos = {p.info.name: (p.info.opt_level, p.info.required) for p in (
        transform.ConvertLayout({}), transform.AlterOpLayout(), transform.Legalize())}
    assert infos == {"ConvertLayout": (3, ["InferType", "CanonicalizeOps"]),
                     "AlterOpLayout": (3, ["InferType"]), "Legalize": (1, ["InferType"])}


# ---------------------------------------------------------------------------------------------
# Legalize
def _legalize_conv2d(attrs, inputs, types):
    data, weight = inputs
    return relay.nn.conv2d(data, relay.multiply(weight, relay.const(2.0, "float32")), **attrs)


def test_legalize():
    x = relay.var("x", shape=(1, 64, 8, 8))
    weight = relay.var("weight", shape=(64, 64, 3, 3))
    expected = relay.Function([x, weight], relay.nn.relu(_nchw_conv(
        x, relay.multiply(weight, relay.const(2.0, "float32")))))
    with temp_op_attr("nn.conv2d", "FTVMLegalize", _legalize_conv2d):
        _check(_conv_relu_before(), transform.Legalize(), expected, numerics=False)


def test_legalize_none():
    x = relay.var("x", shape=(1, 64, 8, 8))
    before = relay.Function([x], relay.nn.global_max_pool2d(x))
    called = []

    def legalize(attrs, inputs, types):
        called.append(True)
        return None

    with temp_op_attr("nn.global_max_pool2d", "FTVMLegalize", legalize):
        _check(before, transform.Legalize(), before)
    assert called == [True]


def test_legalize_multiple_ops():
    def legalize_relu(attrs, inputs, types):
        return relay.nn.relu(relay.add(relay.const(0, "float32"), inputs[0]))

    x = relay.var("x", shape=(1, 64, 8, 8))
    weight = relay.var("weight", shape=(64, 64, 3, 3))
    y = _nchw_conv(x, relay.multiply(weight, relay.const(2.0, "float32")))
    expected = relay.Function([x, weight], relay.nn.relu(relay.add(relay.const(0, "float32"),
                                                                   y)))
    with temp_op_attr("nn.conv2d", "FTVMLegalize", _legalize_conv2d), \
            temp_op_attr("nn.relu", "FTVMLegalize", legalize_relu):
        _check(_conv_relu_before(), transform.Legalize(), expected, numerics=False)


def test_legalize_multi_input():
    x = relay.var("x", shape=(1, 64, 8, 8))
    y = relay.var("y", shape=(1, 64, 8, 20))
    z = relay.var("z", shape=(1, 64, 8, 10))
    before = relay.Function([x, y, z], relay.concatenate([x, y, z], axis=3))

    def legalize_concatenate(attrs, inputs, types):
        assert len(inputs) == 1 and isinstance(inputs[0], relay.Tuple)
        assert len(types) == 2 and isinstance(types[0], TupleType)
        assert isinstance(types[1], TensorType)
        return None

    with temp_op_attr("concatenate", "FTVMLegalize", legalize_concatenate):
        _check(before, transform.Legalize(), before)


def test_legalize_registry_and_bad_result():
    x = relay.var("x", shape=(2, 3))
    before = relay.Function([x], relay.nn.relu(x))
    layout.register_legalize("nn.relu", lambda attrs, inputs, types: inputs[0])
    try:
        with pytest.raises(IrlabError, match="must return a call"):
            run_opt_pass(before, transform.Legalize())
        layout.register_legalize("nn.relu", lambda attrs, inputs, types: relay.clip(
            inputs[0], 0.0, 1e30), level=11)
        after = run_opt_pass(before, transform.Legalize())
        assert count_ops(after) == {"clip": 1}
    finally:
        Op.get("nn.relu").reset_attr("FTVMLegalize")


# ---------------------------------------------------------------------------------------------
# every model
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_models_numerics(name):
    with PassContext(opt_level=3):
        converted = Sequential([transform.ConvertLayout(TO_NHWC)])(bound_model(name))
        # The generic CPU's legalize/alter hooks keep the program: run them on top, so one
        # evaluation checks the three passes.
        after = Sequential([transform.Legalize(), transform.AlterOpLayout()])(converted)
    convs = [n for n in post_order(converted["main"]) if isinstance(n, relay.Call)
             and n.op.name == "nn.conv2d"]
    assert all(c.attrs.data_layout == "NHWC" for c in convs)
    if convs:
        # Layout-agnostic ops stay NHWC: one transform per conv weight, one for the input
        # and one back before the layout-sensitive tail.
        transforms = count_ops(converted["main"])["layout_transform"]
        assert transforms <= len(convs) + 2
    assert_structural_equal(after["main"], converted["main"])
    check_model(name, after)
