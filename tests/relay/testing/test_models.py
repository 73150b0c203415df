"""The model builders of ``irlab.relay.testing``: types, parameter shapes and counts, seeded
initialization, and interpreter runs checked against numpy re-implementations."""

import math

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.ir.type import TensorType
from irlab.relay import testing
from irlab.relay.testing import bert, mlp, mobilenet, resnet, simplenet

BN_SUFFIXES = ("gamma", "beta", "moving_mean", "moving_var")


# ---------------------------------------------------------------------------------------------
# helpers
def _shapes(params):
    return {k: tuple(v.shape) for k, v in params.items()}


def _count(params, keep=lambda name: True):
    return sum(int(np.prod(v.shape)) for k, v in params.items() if keep(k))


def _is_stat(name):
    return name.endswith("moving_mean") or name.endswith("moving_var")


def _run(mod, params, data):
    """Run ``main`` in the reference interpreter with ``data`` then the params in order."""
    main = mod["main"]
    args = [data] + [params[p.name_hint] for p in main.params[1:]]
    out = relay.create_executor("debug", mod=mod).evaluate()(*args)
    return out.numpy() if hasattr(out, "numpy") else np.asarray(out)


def _bn(prefix, c):
    return {f"{prefix}_{s}": (c,) for s in BN_SUFFIXES}


def _random_params(mod, rng):
    """Random values for every parameter of ``main`` (biases and BN stats included, unlike the
    initializer), so a numpy comparison exercises every weight."""
    out = {}
    for p in mod["main"].params[1:]:
        shape = p.checked_type.shape
        if p.name_hint.endswith("moving_var"):
            val = rng.uniform(0.5, 1.5, shape)
        elif p.name_hint.endswith("gamma"):
            val = rng.uniform(0.5, 1.5, shape)
        else:
            val = rng.uniform(-0.5, 0.5, shape)
        out[p.name_hint] = irlab.nd.array(val.astype("float32"))
    return out


# ---------------------------------------------------------------------------------------------
# expected parameter shapes, derived from the architectures' descriptions
def _resnet_expected(num_layers, num_classes, imagenet_stem=True):
    units = {18: [2, 2, 2, 2], 50: [3, 4, 6, 3]}[num_layers]
    bottleneck = num_layers >= 50
    widths = [256, 512, 1024, 2048] if bottleneck else [64, 128, 256, 512]
    exp = {"bn_data_gamma": (3,), "bn_data_beta": (3,), "bn_data_moving_mean": (3,),
           "bn_data_moving_var": (3,)}
    exp["conv0_weight"] = (64, 3, 7, 7) if imagenet_stem else (64, 3, 3, 3)
    if imagenet_stem:
        exp.update(_bn("bn0", 64))
    cin = 64
    for s, (n, w) in enumerate(zip(units, widths), start=1):
        for u in range(1, n + 1):
            p = f"stage{s}_unit{u}"
            exp.update(_bn(p + "_bn1", cin))
            if bottleneck:
                mid = w // 4
                exp[p + "_conv1_weight"] = (mid, cin, 1, 1)
                exp.update(_bn(p + "_bn2", mid))
                exp[p + "_conv2_weight"] = (mid, mid, 3, 3)
                exp.update(_bn(p + "_bn3", mid))
                exp[p + "_conv3_weight"] = (w, mid, 1, 1)
            else:
                exp[p + "_conv1_weight"] = (w, cin, 3, 3)
                exp.update(_bn(p + "_bn2", w))
                exp[p + "_conv2_weight"] = (w, w, 3, 3)
            if u == 1:
                exp[p + "_sc_weight"] = (w, cin, 1, 1)
            cin = w
    exp.update(_bn("bn1", cin))
    exp["fc1_weight"] = (num_classes, cin)
    exp["fc1_bias"] = (num_classes,)
    return exp


def _conv_or_fc(name):
    return name.endswith("_weight") or name.endswith("_bias")


# ---------------------------------------------------------------------------------------------
# full-size builders: types and parameter shapes (type inference only, no execution)
@pytest.fixture(scope="module")
def resnet18():
    return resnet.get_workload()


@pytest.fixture(scope="module")
def resnet50():
    return resnet.get_workload(num_layers=50)


@pytest.fixture(scope="module")
def mobilenet_v2():
    return mobilenet.get_workload()


def _ret_type(mod):
    return mod["main"].checked_type.ret_type


def test_resnet18_types_and_shapes(resnet18):
    mod, params = resnet18
    assert _ret_type(mod) == TensorType((1, 1000), "float32")
    main = mod["main"]
    assert main.params[0].name_hint == "data"
    assert main.params[0].checked_type == TensorType((1, 3, 224, 224), "float32")
    assert _shapes(params) == _resnet_expected(18, 1000)
    # Every parameter's array matches the type inference gave its variable.
    for p in main.params[1:]:
        assert p.checked_type == TensorType(params[p.name_hint].shape, "float32")
    # torchvision's ResNet-18 has 11,689,512 parameters, 9,600 of them BN affine ones
    # (4,800 BN channels). TVM's builder also projects the shortcut of stage 1's first unit
    # (64 -> 64, 1x1), which torchvision leaves as the identity: 4,096 more weights.
    assert _count(params, _conv_or_fc) == 11_689_512 - 9_600 + 64 * 64
    assert round(_count(params, lambda k: not _is_stat(k)) / 1e6, 2) == 11.69
    assert relay.analysis.count_ops(main)["nn.conv2d"] == 1 + 8 * 2 + 4  # 4 projections


def test_resnet50_types_and_shapes(resnet50):
    mod, params = resnet50
    assert _ret_type(mod) == TensorType((1, 1000), "float32")
    assert _shapes(params) == _resnet_expected(50, 1000)
    # torchvision's ResNet-50: 25,557,032 parameters, 53,120 of them BN affine ones.
    assert _count(params, _conv_or_fc) == 25_557_032 - 53_120
    assert abs(_count(params, lambda k: not _is_stat(k)) - 25.6e6) < 0.1e6
    assert relay.analysis.count_ops(mod["main"])["nn.conv2d"] == 1 + 16 * 3 + 4


def test_resnet_cifar_stem_and_batch():
    mod, params = resnet.get_workload(batch_size=2, num_classes=10, image_shape=(3, 32, 32))
    assert _ret_type(mod) == TensorType((2, 10), "float32")
    assert _shapes(params) == _resnet_expected(18, 10, imagenet_stem=False)
    assert "nn.max_pool2d" not in relay.analysis.count_ops(mod["main"])


def test_resnet_rejects_unknown_depth():
    with pytest.raises(ValueError):
        resnet.get_net(1, 1000, num_layers=19)


def test_mobilenet_v2_types_and_shapes(mobilenet_v2):
    mod, params = mobilenet_v2
    assert _ret_type(mod) == TensorType((1, 1000), "float32")
    shapes = _shapes(params)
    # torchvision's mobilenet_v2 has 3,504,872 parameters (conv weights without bias, BN
    # gamma/beta, classifier weight and bias); moving statistics are not parameters there.
    assert _count(params, lambda k: not _is_stat(k)) == 3_504_872
    assert shapes["stem_conv_weight"] == (32, 3, 3, 3)
    assert shapes["block1_depthwise_conv_weight"] == (32, 1, 3, 3)
    assert "block1_expand_conv_weight" not in shapes  # t = 1: no expansion
    assert shapes["block2_expand_conv_weight"] == (96, 16, 1, 1)
    assert shapes["block2_depthwise_conv_weight"] == (96, 1, 3, 3)
    assert shapes["block2_project_conv_weight"] == (24, 96, 1, 1)
    assert shapes["block17_project_conv_weight"] == (320, 960, 1, 1)
    assert shapes["head_conv_weight"] == (1280, 320, 1, 1)
    assert shapes["fc_weight"] == (1000, 1280) and shapes["fc_bias"] == (1000,)
    ops = relay.analysis.count_ops(mod["main"])
    # stem + 16 blocks of 3 convs + block 1 with 2 + head; 17 depthwise (groups = C) among them.
    assert ops["nn.conv2d"] == 1 + 16 * 3 + 2 + 1
    assert ops["clip"] == 1 + 16 * 2 + 1 + 1
    # Residual adds: blocks keeping stride 1 and width (n - 1 per stage: 0+1+2+3+2+2+0).
    assert ops["add"] == 10
    groups = [c.attrs.groups for c in _calls(mod["main"], "nn.conv2d")]
    assert sum(g > 1 for g in groups) == 17


def _calls(func, op_name):
    found = []

    def visit(node):
        if isinstance(node, relay.Call) and getattr(node.op, "name", None) == op_name:
            found.append(node)

    relay.analysis.post_order_visit(func, visit)
    return found


def test_simplenet_types_and_names():
    mod, params = simplenet.get_workload()
    assert _ret_type(mod) == TensorType((1, 32, 112, 112), "float32")
    assert _shapes(params) == {"graph_conv_weight": (32, 3, 3, 3), **_bn("graph_bn", 32)}
    assert [p.name_hint for p in mod["main"].params][0] == "data"


def test_mlp_types_and_shapes():
    mod, params = mlp.get_workload(batch_size=4)
    assert _ret_type(mod) == TensorType((4, 10), "float32")
    assert _shapes(params) == {"fc1_weight": (128, 784), "fc1_bias": (128,),
                               "fc2_weight": (64, 128), "fc2_bias": (64,),
                               "fc3_weight": (10, 64), "fc3_bias": (10,)}


def test_bert_base_types_and_shapes():
    mod, params = bert.get_workload()
    assert _ret_type(mod) == TensorType((1, 128, 768), "float32")
    shapes = _shapes(params)
    for name in ("query", "key", "value", "attention_output"):
        assert shapes[f"layer0_{name}_weight"] == (768, 768)
        assert shapes[f"layer0_{name}_bias"] == (768,)
    assert shapes["layer0_intermediate_weight"] == (3072, 768)
    assert shapes["layer0_output_weight"] == (768, 3072)
    # One BERT-base layer: 4*768*768 + 2*768*3072 weights, 9*768 + 3072 biases/norms.
    assert _count(params) == 7_087_872
    ops = relay.analysis.count_ops(mod["main"])
    assert ops["nn.dense"] == 6 and ops["nn.batch_matmul"] == 2 and ops["nn.layer_norm"] == 2
    assert ops["erf"] == 1 and ops["nn.softmax"] == 1


def test_bert_rejects_bad_heads():
    with pytest.raises(ValueError):
        bert.get_net(hidden_size=30, num_heads=4)


# ---------------------------------------------------------------------------------------------
# initialization
def test_params_are_deterministic_per_seed():
    _, a = mobilenet.get_workload(num_classes=10, image_shape=(3, 32, 32))
    _, b = mobilenet.get_workload(num_classes=10, image_shape=(3, 32, 32))
    _, c = mobilenet.get_workload(num_classes=10, image_shape=(3, 32, 32), seed=1)
    assert a.keys() == b.keys() == c.keys()
    for k in a:
        np.testing.assert_array_equal(a[k].numpy(), b[k].numpy())
    weights = [k for k in a if k.endswith("_weight")]
    assert weights and all(not np.array_equal(a[k].numpy(), c[k].numpy()) for k in weights)


def test_initializer_values():
    _, params = resnet.get_workload(num_classes=10, image_shape=(3, 32, 32))
    for name, arr in params.items():
        v = arr.numpy()
        assert v.dtype == np.float32 and np.all(np.isfinite(v))
        if name.endswith("gamma") or name.endswith("moving_var"):
            assert np.all(v == 1.0), name
        elif name.endswith("beta") or name.endswith("moving_mean") or name.endswith("bias"):
            assert np.all(v == 0.0), name
        else:
            # Xavier: U(-s, s) with s = sqrt(3 / ((fan_in + fan_out) / 2)).
            o, i = v.shape[:2]
            rf = int(np.prod(v.shape[2:]))
            s = math.sqrt(3.0 / ((i * rf + o * rf) / 2.0))
            assert np.abs(v).max() <= s and np.abs(v).max() > 0.8 * s, name
            assert abs(v.std() - s / math.sqrt(3)) < 0.2 * s, name


def test_depthwise_weights_use_the_kernel_fan():
    _, params = mobilenet.get_workload(num_classes=10, image_shape=(3, 32, 32))
    v = params["block2_depthwise_conv_weight"].numpy()
    # fan = 3*3 for a depthwise kernel, not 96*9.
    assert np.abs(v).max() > 0.8 * math.sqrt(3.0 / 9.0)


def test_custom_initializer_and_seed():
    class Ones(testing.Xavier):
        def _init_weight(self, name, arr):
            arr[...] = 1.0 + self.rng.integers(0, 2)

    net = mlp.get_net(1)
    _, p0 = testing.create_workload(net, Ones(), seed=3)
    _, p1 = testing.create_workload(net, Ones(), seed=3)
    assert set(np.unique(p0["fc1_weight"].numpy())) <= {1.0, 2.0}
    for k in p0:
        np.testing.assert_array_equal(p0[k].numpy(), p1[k].numpy())


# ---------------------------------------------------------------------------------------------
# interpreter runs of the small variants
EXPECTED_OUT = {"simplenet": (1, 32, 16, 16), "mlp": (1, 10), "resnet18": (1, 10),
                "resnet50": (1, 10), "mobilenet_v2": (1, 10), "bert": (1, 8, 32)}


def test_models_registry_lists_every_builder():
    assert set(testing.MODELS) == set(EXPECTED_OUT) | {"bert_base"}
    assert set(testing.SMALL_MODELS) == set(EXPECTED_OUT)


@pytest.mark.parametrize("name", sorted(EXPECTED_OUT))
def test_small_variant_runs(name):
    mod, params = testing.MODELS[name]()
    data_type = mod["main"].params[0].checked_type
    assert _ret_type(mod) == TensorType(EXPECTED_OUT[name], "float32")
    rng = np.random.default_rng(7)
    data = rng.uniform(-1, 1, data_type.shape).astype("float32")
    out = _run(mod, params, data)
    assert out.shape == EXPECTED_OUT[name] and out.dtype == np.float32
    assert np.all(np.isfinite(out))
    if len(out.shape) == 2:  # classifiers end in softmax
        np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)
        assert out.std() > 0  # a meaningful, input-dependent distribution
    else:
        assert out.std() > 1e-3


# ---------------------------------------------------------------------------------------------
# numpy re-implementations
def _np_conv2d(x, w, stride, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out


def test_simplenet_matches_numpy():
    mod, _ = simplenet.get_workload(image_shape=(3, 20, 20))
    rng = np.random.default_rng(11)
    params = _random_params(mod, rng)
    x = rng.uniform(-1, 1, (1, 3, 20, 20)).astype("float32")
    out = _run(mod, params, x)
    p = {k: v.numpy().astype(np.float64) for k, v in params.items()}
    conv = _np_conv2d(x.astype(np.float64), p["graph_conv_weight"], stride=2, pad=1)

    def ch(v):
        return v[None, :, None, None]

    bn = (conv - ch(p["graph_bn_moving_mean"])) / np.sqrt(ch(p["graph_bn_moving_var"]) + 1e-5)
    expected = np.maximum(bn * ch(p["graph_bn_gamma"]) + ch(p["graph_bn_beta"]), 0.0)
    assert out.shape == (1, 32, 10, 10)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_mlp_matches_numpy():
    mod, _ = mlp.get_workload(batch_size=2)
    rng = np.random.default_rng(12)
    params = _random_params(mod, rng)
    x = rng.uniform(0, 1, (2, 1, 28, 28)).astype("float32")
    out = _run(mod, params, x)
    p = {k: v.numpy().astype(np.float64) for k, v in params.items()}
    h = x.reshape(2, -1).astype(np.float64)
    for i in (1, 2, 3):
        h = h @ p[f"fc{i}_weight"].T + p[f"fc{i}_bias"]
        if i < 3:
            h = np.maximum(h, 0)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-6)


def _np_layer_norm(x, gamma, beta, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


def _np_erf(x):
    return np.vectorize(math.erf)(x)


def _np_bert_layer(x, p, heads, eps):
    b, s, h = x.shape
    d = h // heads

    def dense(t, name):
        return t @ p[f"layer0_{name}_weight"].T + p[f"layer0_{name}_bias"]

    def heads_of(t):  # (b, s, h) -> (b, heads, s, d)
        return t.reshape(b, s, heads, d).transpose(0, 2, 1, 3)

    q, k, v = (heads_of(dense(x, n)) for n in ("query", "key", "value"))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    ctx = (e / e.sum(axis=-1, keepdims=True)) @ v
    ctx = ctx.transpose(0, 2, 1, 3).reshape(b, s, h)
    a = _np_layer_norm(dense(ctx, "attention_output") + x,
                       p["layer0_attention_layernorm_gamma"],
                       p["layer0_attention_layernorm_beta"], eps)
    f = dense(a, "intermediate")
    f = 0.5 * f * (1.0 + _np_erf(f / math.sqrt(2.0)))
    return _np_layer_norm(dense(f, "output") + a, p["layer0_output_layernorm_gamma"],
                          p["layer0_output_layernorm_beta"], eps)


@pytest.mark.parametrize("batch, seq, hidden, heads, inter",
                         [(1, 8, 32, 4, 64), (2, 5, 24, 3, 40)])
def test_bert_layer_matches_numpy(batch, seq, hidden, heads, inter):
    eps = 1e-12
    mod, _ = bert.get_workload(batch_size=batch, seq_len=seq, hidden_size=hidden,
                               num_heads=heads, intermediate_size=inter, epsilon=eps)
    rng = np.random.default_rng(13)
    params = _random_params(mod, rng)
    x = rng.normal(0, 1, (batch, seq, hidden)).astype("float32")
    out = _run(mod, params, x)
    p = {k: v.numpy().astype(np.float64) for k, v in params.items()}
    expected = _np_bert_layer(x.astype(np.float64), p, heads, eps)
    assert out.shape == (batch, seq, hidden)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_bert_default_params_give_normalized_output():
    mod, params = testing.MODELS["bert"]()
    x = np.random.default_rng(5).normal(0, 1, (1, 8, 32)).astype("float32")
    out = _run(mod, params, x)
    # gamma = 1, beta = 0 from the initializer: every token comes out normalized.
    np.testing.assert_allclose(out.mean(axis=-1), 0.0, atol=1e-4)
    np.testing.assert_allclose(out.std(axis=-1), 1.0, rtol=1e-3)


def test_bert_stacks_layers():
    """``num_layers`` encoder layers, each with its own 16 weights (BERT-base has 12)."""
    from irlab.relay.testing import bert

    net = bert.get_net(seq_len=128, num_layers=12)
    names = {p.name_hint for p in net.params}
    assert len(names) == 1 + 12 * 16 and "layer11_output_weight" in names
    mod, params = bert.get_workload(batch_size=1, seq_len=4, hidden_size=8, num_heads=2,
                                    intermediate_size=16, num_layers=2)
    assert _ret_type(mod) == TensorType((1, 4, 8), "float32")
    out = _run(mod, params, np.random.default_rng(3).uniform(-1, 1, (1, 4, 8)).astype("float32"))
    assert out.shape == (1, 4, 8) and np.all(np.isfinite(out))
    with pytest.raises(ValueError, match="num_layers"):
        bert.get_net(num_layers=0)


def test_synthetic_graph_has_the_asked_size_and_runs():
    """The explorer's stress graph: about ``num_nodes`` nodes (calls and the input), no
    weights, a finite output."""
    from irlab.relay.testing import synthetic

    func = synthetic.get_net(num_nodes=40, width=4)
    calls = []
    relay.analysis.post_order_visit(func.body, lambda e: calls.append(e)
                                    if isinstance(e, relay.Call) else None)
    assert 40 - 4 <= len(calls) + 1 <= 40 + 4
    mod, params = synthetic.get_workload(num_nodes=40)
    assert params == {}
    out = _run(mod, params, np.random.default_rng(5).uniform(-1, 1, (1, 16)).astype("float32"))
    assert out.shape == (1, 16) and np.all(np.isfinite(out))
    with pytest.raises(ValueError, match="width"):
        synthetic.get_net(num_nodes=2, width=4)
