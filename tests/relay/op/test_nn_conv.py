"""nn.conv2d: attrs normalization, type relation over the attribute space, weight inference,
rejections, and the reference against a direct evaluation of the convolution's definition."""

import itertools

import numpy as np
import pytest

from irlab import relay
from irlab.ir.op import Op, OpPattern
from irlab.ir.type import IncompleteType, TensorType
from irlab.relay.op.nn import Conv2DAttrs
from irlab.relay.type_relation import solve_relation
from irlab.relay.type_relation import TypeRelationError, infer_call_type

X, W = relay.var("x"), relay.var("w")
OP = Op.get("nn.conv2d")


def attrs_of(**kwargs):
    return relay.nn.conv2d(X, W, **kwargs).attrs


def rel(data_shape, weight_shape, dtype="float32", **kwargs):
    return infer_call_type(OP, [TensorType(data_shape, dtype), TensorType(weight_shape, dtype)],
                           attrs_of(**kwargs))


def solve(arg_types, attrs):
    """Run the relation with unknown arguments; return (output, solved argument types)."""
    return solve_relation(OP, arg_types, attrs)


def out_dim(size, kernel, stride, pad_before, pad_after, dilation):
    effective = dilation * (kernel - 1) + 1
    return (size + pad_before + pad_after - effective) // stride + 1


def permute(shape_by_letter, layout):
    return tuple(shape_by_letter[c] for c in layout)


# ---------------------------------------------------------------------------------------------
# constructor and attrs
def test_constructor_normalizes_ints_and_padding():
    a = attrs_of(strides=2, padding=1, dilation=3, kernel_size=5, channels=8)
    assert a.strides == (2, 2) and a.dilation == (3, 3) and a.kernel_size == (5, 5)
    assert a.padding == (1, 1, 1, 1)
    assert attrs_of(padding=(1, 2)).padding == (1, 2, 1, 2)
    assert attrs_of(padding=(1, 2, 3, 4)).padding == (1, 2, 3, 4)
    assert attrs_of(out_dtype="int32").out_dtype == "int32"
    with pytest.raises(Exception):
        attrs_of(padding=(1, 2, 3))


def test_default_padding_prints_as_non_default():
    # TVM's C++ default is (0, 0); the constructor stores 4 values, so padding always prints.
    assert Conv2DAttrs().padding == (0, 0)
    assert attrs_of().non_default_items() == [("padding", (0, 0, 0, 0))]
    names = [k for k, _ in attrs_of(channels=4, kernel_size=3, data_layout="NHWC",
                                    kernel_layout="HWIO").non_default_items()]
    assert names == ["padding", "channels", "kernel_size", "data_layout", "kernel_layout"]
    assert Conv2DAttrs._type_key == "relay.attrs.Conv2DAttrs"
    assert list(Conv2DAttrs._fields) == [
        "strides", "padding", "dilation", "groups", "channels", "kernel_size", "data_layout",
        "kernel_layout", "out_layout", "out_dtype"]


def test_registration():
    assert OP.num_inputs == 2 and [a.name for a in OP.arguments] == ["data", "weight"]
    assert OP.pattern == OpPattern.OUT_ELEMWISE_FUSABLE
    assert OP.attrs_type is Conv2DAttrs and OP.support_level == 2


# ---------------------------------------------------------------------------------------------
# type relation
@pytest.mark.parametrize("strides,padding,dilation", [
    ((1, 1), 0, (1, 1)), ((2, 2), 1, (1, 1)), ((2, 1), (1, 2), (1, 1)),
    ((1, 3), (0, 1, 2, 3), (2, 1)), ((3, 2), (2, 0), (2, 3)), ((1, 1), 3, (3, 3))])
@pytest.mark.parametrize("groups,cin,cout", [(1, 6, 4), (2, 6, 4), (3, 6, 6), (6, 6, 12)])
def test_nchw_output_shape(strides, padding, dilation, groups, cin, cout):
    n, h, w, kh, kw = 2, 11, 9, 3, 2
    a = attrs_of(strides=strides, padding=padding, dilation=dilation, groups=groups)
    top, left, bottom, right = a.padding
    out = infer_call_type(OP, [TensorType((n, cin, h, w)),
                               TensorType((cout, cin // groups, kh, kw))], a)
    expected = (n, cout, out_dim(h, kh, strides[0], top, bottom, dilation[0]),
                out_dim(w, kw, strides[1], left, right, dilation[1]))
    assert out == TensorType(expected, "float32")


@pytest.mark.parametrize("data_layout,kernel_layout,out_layout", [
    ("NCHW", "OIHW", ""), ("NHWC", "HWIO", ""), ("NHWC", "OHWI", ""), ("NHWC", "HWIO", "NCHW"),
    ("NCHW", "OIHW", "NHWC"), ("NCHW", "HWIO", "")])
def test_layouts(data_layout, kernel_layout, out_layout):
    n, c, h, w, o, kh, kw = 1, 5, 10, 7, 8, 3, 1
    data = permute({"N": n, "C": c, "H": h, "W": w}, data_layout)
    weight = permute({"O": o, "I": c, "H": kh, "W": kw}, kernel_layout)
    out = rel(data, weight, strides=(2, 1), padding=(1, 0), data_layout=data_layout,
              kernel_layout=kernel_layout, out_layout=out_layout)
    expected = {"N": n, "C": o, "H": (h + 2 - kh) // 2 + 1, "W": w - kw + 1}
    assert out.shape == permute(expected, out_layout or data_layout)


def test_out_dtype():
    out = infer_call_type(OP, [TensorType((1, 2, 5, 5), "int8"), TensorType((3, 2, 3, 3), "int8")],
                          attrs_of(out_dtype="int32"))
    assert out == TensorType((1, 3, 3, 3), "int32")
    assert rel((1, 2, 5, 5), (3, 2, 3, 3), dtype="float16").dtype == "float16"


@pytest.mark.parametrize("data_layout,kernel_layout,groups,channels", [
    ("NCHW", "OIHW", 1, 16), ("NCHW", "OIHW", 2, 8), ("NCHW", "OIHW", 4, 4),
    ("NCHW", "OIHW", 4, 8), ("NHWC", "HWIO", 1, 16), ("NHWC", "HWOI", 4, 4),
    ("NHWC", "OHWI", 2, 6)])
def test_weight_inferred_from_attrs(data_layout, kernel_layout, groups, channels):
    c, kh, kw = 4, 3, 5
    data = TensorType(permute({"N": 2, "C": c, "H": 9, "W": 9}, data_layout), "float16")
    a = attrs_of(channels=channels, kernel_size=(kh, kw), groups=groups, padding=(1, 2),
                 data_layout=data_layout, kernel_layout=kernel_layout)
    out, (_, weight) = solve([data, IncompleteType()], a)
    oihw = {"O": channels, "I": c // groups, "H": kh, "W": kw}
    assert weight == TensorType(permute(oihw, kernel_layout), "float16")
    assert out.shape == permute({"N": 2, "C": channels, "H": 9, "W": 9}, data_layout)


def test_unknown_weight_without_attrs_defers():
    from irlab.relay.type_relation import Defer

    with pytest.raises(Defer):
        solve([TensorType((1, 3, 8, 8)), IncompleteType()], attrs_of(channels=4))


def test_known_weight_checked_against_attrs():
    out = rel((1, 3, 8, 8), (4, 3, 3, 3), channels=4, kernel_size=3)
    assert out.shape == (1, 4, 6, 6)
    with pytest.raises(TypeRelationError, match="channels=5 but the weight has 4"):
        rel((1, 3, 8, 8), (4, 3, 3, 3), channels=5)
    with pytest.raises(TypeRelationError, match=r"kernel_size=\(1, 1\) but the weight's kernel is "
                                                r"\(3, 3\)"):
        rel((1, 3, 8, 8), (4, 3, 3, 3), kernel_size=1)


def test_channel_mismatch_message():
    with pytest.raises(TypeRelationError) as err:
        rel((1, 3, 224, 224), (32, 4, 3, 3))
    assert str(err.value) == (
        "input channels differ: data has 3 channels (shape (1, 3, 224, 224), layout NCHW) but "
        "weight expects 4 (shape (32, 4, 3, 3), layout OIHW)")
    with pytest.raises(TypeRelationError, match=r"weight expects 6 \(3 per group x 2 groups\)"):
        rel((1, 4, 8, 8), (4, 3, 3, 3), groups=2)


@pytest.mark.parametrize("data,weight,kwargs,message", [
    ((1, 3, 4, 4), (2, 3, 5, 5), {}, "dilated kernel height .* larger than the padded input"),
    ((1, 3, 4, 8), (2, 3, 3, 3), {"dilation": (1, 4)}, r"kernel width \(9 = \(3 - 1\) \* 4"),
    ((1, 3, 8, 8), (2, 3, 3, 3), {"strides": (0, 1)}, "strides must be integers >= 1"),
    ((1, 3, 8, 8), (2, 3, 3, 3), {"dilation": (1, 0)}, "dilation must be integers >= 1"),
    ((1, 3, 8, 8), (2, 3, 3, 3), {"padding": (-1, 0)}, "padding must be non-negative"),
    ((1, 6, 8, 8), (3, 3, 3, 3), {"groups": 2}, r"output channels of the weight \(3"),
    ((1, 5, 8, 8), (4, 1, 3, 3), {"groups": 2}, "not divisible by groups=2"),
    ((1, 3, 8), (2, 3, 3, 3), {}, "4-D data"),
    ((1, 3, 8, 8), (2, 3, 3), {}, "4-D weight"),
    ((1, 3, 8, 8), (2, 3, 3, 3), {"data_layout": "NCHW16c"}, "data_layout 'NCHW16c' is not"),
    ((1, 3, 8, 8), (2, 3, 3, 3), {"kernel_layout": "OIHH"}, "kernel_layout 'OIHH' is not"),
    ((1, 3, 8, 8), (2, 3, 3, 3), {"out_layout": "NCW"}, "out_layout 'NCW' is not"),
    ((1, 3, 8, 8), (2, 3, 3, 3), {"strides": (1, 1, 1)}, "strides must have 2 values"),
])
def test_rejections(data, weight, kwargs, message):
    with pytest.raises(TypeRelationError, match=message):
        rel(data, weight, **kwargs)


def test_inferred_weight_rejects_bad_channels():
    with pytest.raises(TypeRelationError, match="positive multiple of groups=2"):
        solve([TensorType((1, 4, 8, 8)), IncompleteType()],
              attrs_of(channels=3, kernel_size=3, groups=2))


# ---------------------------------------------------------------------------------------------
# reference
def conv_by_definition(x, w, strides, padding, dilation, groups):
    """out[n, o, y, x] = sum_{c, i, j} xpad[n, g*Cg + c, y*sh + i*dh, x*sw + j*dw] * w[o, c, i, j]
    with g = o // (O / groups); one output pixel at a time."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    top, left, bottom, right = padding
    xpad = np.zeros((n, c, h + top + bottom, wd + left + right), dtype=np.float64)
    xpad[:, :, top:top + h, left:left + wd] = x
    oh = out_dim(h, kh, strides[0], top, bottom, dilation[0])
    ow = out_dim(wd, kw, strides[1], left, right, dilation[1])
    out = np.zeros((n, o, oh, ow))
    per_group = o // groups
    for oc, yy, xx in itertools.product(range(o), range(oh), range(ow)):
        g = oc // per_group
        for ci, i, j in itertools.product(range(cg), range(kh), range(kw)):
            out[:, oc, yy, xx] += (xpad[:, g * cg + ci, yy * strides[0] + i * dilation[0],
                                        xx * strides[1] + j * dilation[1]] * w[oc, ci, i, j])
    return out


def run_reference(x, w, **kwargs):
    a = attrs_of(**kwargs)
    out_type = infer_call_type(OP, [TensorType(x.shape, str(x.dtype)),
                                    TensorType(w.shape, str(w.dtype))], a)
    result = OP.reference([x, w], a, out_type)
    assert result.dtype == np.dtype(out_type.dtype) and result.shape == out_type.shape
    return result


@pytest.mark.parametrize("strides,padding,dilation,groups", [
    ((1, 1), (0, 0, 0, 0), (1, 1), 1), ((2, 2), (1, 1, 1, 1), (1, 1), 1),
    ((1, 2), (2, 0, 1, 3), (2, 1), 1), ((3, 1), (1, 2, 0, 0), (1, 2), 2),
    ((1, 1), (1, 1, 1, 1), (1, 1), 4), ((2, 1), (0, 1, 1, 0), (2, 2), 4)])
def test_reference_nchw_matches_definition(strides, padding, dilation, groups):
    rng = np.random.default_rng(0)
    cin, cout = 4, 8
    x = rng.standard_normal((2, cin, 7, 6)).astype("float32")
    w = rng.standard_normal((cout, cin // groups, 3, 2)).astype("float32")
    got = run_reference(x, w, strides=strides, padding=padding, dilation=dilation, groups=groups)
    want = conv_by_definition(x, w, strides, padding, dilation, groups)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("data_layout,kernel_layout,groups", [
    ("NHWC", "HWIO", 1), ("NHWC", "OHWI", 1), ("NHWC", "HWOI", 3), ("NHWC", "HWIO", 3)])
def test_reference_other_layouts(data_layout, kernel_layout, groups):
    rng = np.random.default_rng(1)
    x_nchw = rng.standard_normal((1, 3, 6, 5)).astype("float32")
    w_oihw = rng.standard_normal((6, 3 // groups, 3, 3)).astype("float32")
    x = x_nchw.transpose(["NCHW".index(c) for c in data_layout])
    w = w_oihw.transpose(["OIHW".index(c) for c in kernel_layout])
    got = run_reference(x, w, strides=(2, 1), padding=(1, 1), groups=groups,
                        data_layout=data_layout, kernel_layout=kernel_layout)
    want = conv_by_definition(x_nchw, w_oihw, (2, 1), (1, 1, 1, 1), (1, 1), groups)
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)
    got_nchw = run_reference(x, w, strides=(2, 1), padding=(1, 1), groups=groups,
                             data_layout=data_layout, kernel_layout=kernel_layout,
                             out_layout="NCHW")
    np.testing.assert_allclose(got_nchw, want, rtol=1e-5, atol=1e-5)


def test_reference_integer_out_dtype_is_exact():
    rng = np.random.default_rng(2)
    x = rng.integers(-128, 128, (1, 8, 5, 5)).astype("int8")
    w = rng.integers(-128, 128, (4, 8, 3, 3)).astype("int8")
    got = run_reference(x, w, padding=1, out_dtype="int32")
    want = conv_by_definition(x.astype(np.int64), w.astype(np.int64), (1, 1), (1, 1, 1, 1),
                              (1, 1), 1)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want.astype(np.int64))


def test_reference_float16_keeps_dtype():
    x = np.ones((1, 2, 4, 4), "float16")
    w = np.ones((3, 2, 3, 3), "float16")
    got = run_reference(x, w, padding=1)
    assert got.dtype == np.float16 and got[0, 0, 1, 1] == 18 and got[0, 0, 0, 0] == 8
