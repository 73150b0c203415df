"""nn.conv2d_transpose: attrs, relation (shapes, weight inference, rejections), pattern and the
reference against a direct scatter loop."""

import itertools

import numpy as np
import pytest

from irlab import relay
from irlab.ir.op import Op, OpPattern
from irlab.ir.type import TensorType
from irlab.relay.op.nn import Conv2DTransposeAttrs
from irlab.relay.type_relation import TypeRelationError, infer_call_type

OP = Op.get("nn.conv2d_transpose")


def attrs(**kwargs):
    x, w = relay.var("x"), relay.var("w")
    return relay.nn.conv2d_transpose(x, w, **kwargs).attrs


def loops(x, w, strides, padding, output_padding, dilation, groups):
    """out[n, g*O+o, i*s + a*d - top, j*s + b*d - left] += x[n, g*I+c, i, j] w[g*I+c, o, a, b]"""
    n, cin, h, wd = x.shape
    _, og, kh, kw = w.shape
    top, left, bottom, right = padding
    out_h = (h - 1) * strides[0] + (kh - 1) * dilation[0] + 1 + output_padding[0] - top - bottom
    out_w = (wd - 1) * strides[1] + (kw - 1) * dilation[1] + 1 + output_padding[1] - left - right
    out = np.zeros((n, og * groups, out_h, out_w))
    ig = cin // groups
    for b_, ci, i, j, o, a, b in itertools.product(range(n), range(cin), range(h), range(wd),
                                                   range(og), range(kh), range(kw)):
        g = ci // ig
        y = i * strides[0] + a * dilation[0] - top
        z = j * strides[1] + b * dilation[1] - left
        if 0 <= y < out_h and 0 <= z < out_w:
            out[b_, g * og + o, y, z] += x[b_, ci, i, j] * w[ci, o, a, b]
    return out


def test_attrs_fields_defaults_and_pattern():
    assert list(Conv2DTransposeAttrs._fields) == [
        "channels", "kernel_size", "strides", "padding", "output_padding", "dilation",
        "groups", "data_layout", "kernel_layout", "out_layout", "out_dtype"]
    a = attrs()
    assert a.kernel_layout == "IOHW" and a.padding == (0, 0, 0, 0) and a.groups == 1
    assert attrs(padding=1).padding == (1, 1, 1, 1)
    assert OP.pattern == OpPattern.OUT_ELEMWISE_FUSABLE
    assert [arg.name for arg in OP.arguments] == ["data", "weight"]


@pytest.mark.parametrize("strides,padding,output_padding,dilation,groups", [
    ((1, 1), (0, 0, 0, 0), (0, 0), (1, 1), 1),
    ((2, 2), (1, 1, 1, 1), (1, 1), (1, 1), 1),
    ((3, 2), (0, 1, 2, 0), (1, 0), (1, 1), 2),
    ((1, 2), (1, 0, 0, 1), (0, 1), (2, 2), 1),
])
def test_reference_matches_direct_loops(strides, padding, output_padding, dilation, groups):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 3, 4)).astype(np.float32)
    w = rng.standard_normal((4, 3, 2, 3)).astype(np.float32)
    xv = relay.var("x", shape=x.shape)
    wv = relay.var("w", shape=w.shape)
    call = relay.nn.conv2d_transpose(xv, wv, strides=strides, padding=padding,
                                     output_padding=output_padding, dilation=dilation,
                                     groups=groups)
    out = relay.create_executor("debug", mod=relay.Function([xv, wv], call)).evaluate()(x, w)
    expected = loops(x.astype(np.float64), w.astype(np.float64), strides, padding,
                     output_padding, dilation, groups)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_relation_output_shape_and_weight_inference():
    data = TensorType((1, 4, 5, 5), "float32")
    out = infer_call_type(OP, [data, TensorType((4, 3, 3, 3), "float32")],
                          attrs(strides=2, padding=1, output_padding=1))
    assert out == TensorType((1, 3, 10, 10), "float32")
    # An unannotated weight is inferred from channels and kernel_size (I = data channels).
    x, w = relay.var("x", shape=(1, 4, 5, 5)), relay.var("w")
    func = relay.Function([x, w], relay.nn.conv2d_transpose(x, w, channels=6, kernel_size=3,
                                                            groups=2))
    typed = relay.transform.InferType()(relay.IRModule.from_expr(func))["main"]
    assert typed.params[1].checked_type == TensorType((4, 3, 3, 3), "float32")
    assert typed.ret_type == TensorType((1, 6, 7, 7), "float32")


@pytest.mark.parametrize("weight,kwargs,message", [
    ((3, 3, 3, 3), {}, "input channels differ"),
    ((4, 3, 3, 3), {"output_padding": 2}, "output_padding"),
    ((4, 3, 3, 3), {"channels": 5}, "channels=5"),
    ((4, 3, 3, 3), {"groups": 3}, "not divisible by groups"),
])
def test_relation_rejects(weight, kwargs, message):
    with pytest.raises(TypeRelationError, match=message):
        infer_call_type(OP, [TensorType((1, 4, 5, 5), "float32"),
                             TensorType(weight, "float32")], attrs(**kwargs))
