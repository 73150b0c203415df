"""nn.max_pool2d / nn.avg_pool2d / global and adaptive pools: attrs, output shapes over
strides/padding/dilation/ceil_mode/layouts, rejections, and references against window loops."""

import itertools
import math

import numpy as np
import pytest

from irlab import relay
from irlab.ir.op import Op, OpPattern
from irlab.ir.type import TensorType
from irlab.relay.op.nn import (AdaptivePool2DAttrs, AvgPool2DAttrs, GlobalPool2DAttrs,
                               MaxPool2DAttrs)
from irlab.relay.type_relation import TypeRelationError, infer_call_type

X = relay.var("x")
POOLS = {"max": relay.nn.max_pool2d, "avg": relay.nn.avg_pool2d}


def out_type_of(call, shape, dtype="float32"):
    return infer_call_type(call.op, [TensorType(shape, dtype)], call.attrs)


def evaluate(call, x):
    out_type = out_type_of(call, x.shape, str(x.dtype))
    result = call.op.reference([x], call.attrs, out_type)
    assert result.dtype == x.dtype and result.shape == out_type.shape
    return result


def expected_dim(size, k, s, d, before, after, ceil_mode):
    value = (size + before + after - (k - 1) * d - 1) / s
    return (math.ceil(value) if ceil_mode else math.floor(value)) + 1


# ---------------------------------------------------------------------------------------------
# attrs
def test_attrs_fields_defaults_and_constructor():
    assert list(MaxPool2DAttrs._fields) == ["pool_size", "strides", "dilation", "padding",
                                            "layout", "out_layout", "ceil_mode"]
    assert list(AvgPool2DAttrs._fields) == ["pool_size", "strides", "dilation", "padding",
                                            "layout", "out_layout", "ceil_mode",
                                            "count_include_pad"]
    assert list(GlobalPool2DAttrs._fields) == ["layout", "out_layout"]
    assert list(AdaptivePool2DAttrs._fields) == ["output_size", "layout", "out_layout"]
    a = relay.nn.max_pool2d(X, pool_size=3, strides=2, padding=1).attrs
    assert (a.pool_size, a.strides, a.padding, a.dilation) == ((3, 3), (2, 2), (1, 1, 1, 1),
                                                               (1, 1))
    assert [k for k, _ in a.non_default_items()] == ["pool_size", "strides", "padding"]
    b = relay.nn.avg_pool2d(X, (2, 3), padding=(1, 2), count_include_pad=True).attrs
    assert b.padding == (1, 2, 1, 2) and b.count_include_pad is True
    assert relay.nn.global_avg_pool2d(X).attrs.non_default_items() == []
    assert relay.nn.adaptive_avg_pool2d(X).attrs.output_size == ()
    assert relay.nn.adaptive_max_pool2d(X, 7).attrs.output_size == (7, 7)


def test_registration():
    for name in ("nn.max_pool2d", "nn.avg_pool2d", "nn.global_max_pool2d", "nn.global_avg_pool2d",
                 "nn.adaptive_max_pool2d", "nn.adaptive_avg_pool2d"):
        op = Op.get(name)
        assert op.pattern == OpPattern.OUT_ELEMWISE_FUSABLE
        assert [a.name for a in op.arguments] == ["data"]


# ---------------------------------------------------------------------------------------------
# relations
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("pool,strides,dilation,padding", [
    ((2, 2), (2, 2), (1, 1), (0, 0, 0, 0)), ((3, 3), (2, 2), (1, 1), (1, 1, 1, 1)),
    ((3, 2), (3, 2), (2, 1), (0, 1, 2, 0)), ((1, 4), (1, 3), (1, 2), (2, 2, 0, 1))])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_pool_shapes(kind, pool, strides, dilation, padding, ceil_mode):
    call = POOLS[kind](X, pool, strides, dilation, padding, ceil_mode=ceil_mode)
    h, w = 10, 11
    out = out_type_of(call, (2, 3, h, w), "float16")
    top, left, bottom, right = padding
    assert out == TensorType((2, 3,
                              expected_dim(h, pool[0], strides[0], dilation[0], top, bottom,
                                           ceil_mode),
                              expected_dim(w, pool[1], strides[1], dilation[1], left, right,
                                           ceil_mode)), "float16")


@pytest.mark.parametrize("layout,shape,expected", [
    ("NCHW", (1, 4, 9, 9), (1, 4, 4, 4)), ("NHWC", (1, 9, 9, 4), (1, 4, 4, 4)),
    ("NCHW16c", (1, 2, 9, 9, 16), (1, 2, 4, 4, 16)), ("HWCN", (9, 9, 4, 2), (4, 4, 4, 2))])
def test_pool_layouts(layout, shape, expected):
    call = relay.nn.max_pool2d(X, 3, 2, layout=layout)
    assert out_type_of(call, shape).shape == expected


@pytest.mark.parametrize("kwargs,shape,message", [
    ({"pool_size": 5}, (1, 1, 4, 4), "pool window height .* larger than the padded input"),
    ({"pool_size": (1, 3), "dilation": (1, 3)}, (1, 1, 8, 6), r"width \(7 = \(3 - 1\) \* 3"),
    ({"pool_size": 2, "strides": 0}, (1, 1, 4, 4), "strides must be integers >= 1"),
    ({"pool_size": 2, "padding": (-1, 0)}, (1, 1, 4, 4), "padding must be non-negative"),
    ({"pool_size": 2, "layout": "NCHW"}, (1, 4, 4), "has 4 dimensions but the data has rank 3"),
    ({"pool_size": 2, "layout": "NCH"}, (1, 4, 4), "must contain H and W"),
    ({"pool_size": 2, "layout": "NCHW4w"}, (1, 1, 4, 4, 4), "must contain H and W"),
    ({"pool_size": 0}, (1, 1, 4, 4), "pool_size must be integers >= 1"),
])
def test_pool_rejections(kwargs, shape, message):
    with pytest.raises(TypeRelationError, match=message):
        out_type_of(relay.nn.avg_pool2d(X, **kwargs), shape)


@pytest.mark.parametrize("layout,shape,expected", [
    ("NCHW", (2, 3, 7, 5), (2, 3, 1, 1)), ("NHWC", (2, 7, 5, 3), (2, 1, 1, 3)),
    ("NCHW8c", (2, 3, 7, 5, 8), (2, 3, 1, 1, 8))])
def test_global_pool_shapes(layout, shape, expected):
    for fn in (relay.nn.global_max_pool2d, relay.nn.global_avg_pool2d):
        assert out_type_of(fn(X, layout=layout), shape).shape == expected


@pytest.mark.parametrize("output_size,expected_hw", [
    (None, (9, 6)), (1, (1, 1)), ((3, 2), (3, 2)), ((4,), (4, 4)), ((12, 7), (12, 7))])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_adaptive_pool_shapes(output_size, expected_hw, layout):
    dims = {"N": 2, "C": 3, "H": 9, "W": 6}
    call = relay.nn.adaptive_avg_pool2d(X, output_size, layout=layout)
    out = out_type_of(call, tuple(dims[c] for c in layout))
    dims.update(H=expected_hw[0], W=expected_hw[1])
    assert out.shape == tuple(dims[c] for c in layout)


def test_adaptive_pool_rejects_bad_output_size():
    with pytest.raises(TypeRelationError, match="output_size must be positive"):
        out_type_of(relay.nn.adaptive_max_pool2d(X, (0, 2)), (1, 1, 4, 4))
    with pytest.raises(TypeRelationError, match="at most 2 values"):
        out_type_of(relay.nn.adaptive_max_pool2d(X, (1, 2, 3)), (1, 1, 4, 4))


# ---------------------------------------------------------------------------------------------
# references
def pool_by_loops(x, kind, pool, strides, dilation, padding, ceil_mode, count_include_pad):
    """TVM's pooling, one output cell at a time, on NCHW data (float64 accumulation)."""
    n, c, h, w = x.shape
    top, left, bottom, right = padding
    oh = expected_dim(h, pool[0], strides[0], dilation[0], top, bottom, ceil_mode)
    ow = expected_dim(w, pool[1], strides[1], dilation[1], left, right, ceil_mode)
    out = np.zeros((n, c, oh, ow))
    lowest = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    for y, z in itertools.product(range(oh), range(ow)):
        values, in_padded = [], 0
        for i, j in itertools.product(range(pool[0]), range(pool[1])):
            row = y * strides[0] + i * dilation[0] - top
            col = z * strides[1] + j * dilation[1] - left
            if -top <= row < h + bottom and -left <= col < w + right:
                in_padded += 1  # inside the explicitly padded input
            if 0 <= row < h and 0 <= col < w:
                values.append(x[:, :, row, col].astype(np.float64))
        if kind == "max":
            # Padded cells hold the lowest value, so they only matter for all-padding windows.
            out[:, :, y, z] = np.max(values, axis=0) if values else lowest
        else:
            count = in_padded if count_include_pad else len(values)
            out[:, :, y, z] = np.sum(values, axis=0) / count if values else 0
    return out


CASES = [
    ((2, 2), (2, 2), (1, 1), (0, 0, 0, 0), False),
    ((3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False),
    ((3, 3), (2, 2), (1, 1), (1, 1, 1, 1), True),
    ((3, 2), (2, 3), (1, 1), (0, 1, 2, 0), True),
    ((2, 3), (1, 2), (2, 1), (1, 0, 0, 2), False),
    ((3, 3), (3, 3), (2, 2), (2, 2, 2, 2), True),
    ((4, 4), (1, 1), (1, 1), (3, 3, 3, 3), False),
]


@pytest.mark.parametrize("pool,strides,dilation,padding,ceil_mode", CASES)
@pytest.mark.parametrize("kind,count_include_pad", [("max", False), ("avg", False),
                                                    ("avg", True)])
def test_pool_reference_matches_loops(pool, strides, dilation, padding, ceil_mode, kind,
                                      count_include_pad):
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 8)).astype("float32")
    kwargs = {"count_include_pad": count_include_pad} if kind == "avg" else {}
    call = POOLS[kind](X, pool, strides, dilation, padding, ceil_mode=ceil_mode, **kwargs)
    got = evaluate(call, x)
    want = pool_by_loops(x, kind, pool, strides, dilation, padding, ceil_mode, count_include_pad)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_max_pool_window_entirely_in_padding_gives_lowest():
    x = -np.ones((1, 1, 1, 1), "float32")
    got = evaluate(relay.nn.max_pool2d(X, 1, 2, padding=(0, 0, 2, 0)), x)
    assert got.shape == (1, 1, 2, 1)
    assert got[0, 0, 0, 0] == -1 and got[0, 0, 1, 0] == np.finfo(np.float32).min


def test_avg_pool_integer_truncates_toward_zero():
    x = np.array([[[[-3, 0, 5, 2]]]], "int32")
    got = evaluate(relay.nn.avg_pool2d(X, (1, 2), (1, 2)), x)
    assert got.tolist() == [[[[-1, 3]]]]


@pytest.mark.parametrize("layout", ["NHWC", "NCHW4c"])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool_reference_other_layouts(layout, kind):
    x = np.random.default_rng(1).standard_normal((1, 8, 6, 7)).astype("float32")
    want = pool_by_loops(x, kind, (3, 2), (2, 1), (1, 1), (1, 0, 1, 1), True, True)
    kwargs = {"count_include_pad": True} if kind == "avg" else {}
    call = POOLS[kind](X, (3, 2), (2, 1), 1, (1, 0, 1, 1), layout=layout, ceil_mode=True,
                       **kwargs)
    if layout == "NHWC":
        got = evaluate(call, x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    else:  # NCHW4c: channel c*4 + k sits at [:, c, :, :, k]
        packed = x.reshape(1, 2, 4, 6, 7).transpose(0, 1, 3, 4, 2)
        got = evaluate(call, packed).transpose(0, 1, 4, 2, 3).reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_global_pool_reference(layout):
    x = np.random.default_rng(2).standard_normal((2, 3, 5, 4)).astype("float32")
    data = x if layout == "NCHW" else x.transpose(0, 2, 3, 1)
    h_w = (2, 3) if layout == "NCHW" else (1, 2)
    got_max = evaluate(relay.nn.global_max_pool2d(X, layout=layout), data)
    got_avg = evaluate(relay.nn.global_avg_pool2d(X, layout=layout), data)
    np.testing.assert_allclose(got_max, data.max(axis=h_w, keepdims=True))
    np.testing.assert_allclose(got_avg, data.astype(np.float64).mean(axis=h_w, keepdims=True),
                               rtol=1e-6)


def adaptive_by_loops(x, kind, oh, ow):
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow))
    for i, j in itertools.product(range(oh), range(ow)):
        r0, r1 = math.floor(i * h / oh), math.ceil((i + 1) * h / oh)
        c0, c1 = math.floor(j * w / ow), math.ceil((j + 1) * w / ow)
        window = x[:, :, r0:r1, c0:c1].astype(np.float64)
        out[:, :, i, j] = window.max(axis=(2, 3)) if kind == "max" else window.mean(axis=(2, 3))
    return out


@pytest.mark.parametrize("output_size", [(1, 1), (3, 2), (4, 5), (7, 3), (9, 10)])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_adaptive_pool_reference(output_size, kind):
    x = np.random.default_rng(3).standard_normal((2, 3, 7, 10)).astype("float32")
    fn = relay.nn.adaptive_max_pool2d if kind == "max" else relay.nn.adaptive_avg_pool2d
    got = evaluate(fn(X, output_size), x)
    np.testing.assert_allclose(got, adaptive_by_loops(x, kind, *output_size), rtol=1e-6)
    got_nhwc = evaluate(fn(X, output_size, layout="NHWC"), x.transpose(0, 2, 3, 1))
    np.testing.assert_allclose(got_nhwc.transpose(0, 3, 1, 2), got, rtol=1e-6)
