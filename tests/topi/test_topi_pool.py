"""Pooling (max/avg/global/adaptive), nn.lrn and nn.instance_norm: TE computes + CPU schedules
against the ops' numpy references."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from _conv_util import check_fused, check_op  # noqa: E402

from irlab import relay  # noqa: E402

nn = relay.nn

POOL = [
    ("max_3x3_s2_pad", lambda x: nn.max_pool2d(x, (3, 3), (2, 2), padding=1), (1, 4, 9, 9)),
    # ResNet's pool, narrowed: AVX-512 vectorizes the row of 28 in 2 pieces of 14
    ("max_3x3_s2_pad_pieces", lambda x: nn.max_pool2d(x, (3, 3), (2, 2), padding=1),
     (1, 3, 56, 56)),
    ("avg_3x3_s2_pad_pieces", lambda x: nn.avg_pool2d(x, (3, 3), (2, 2), padding=1),
     (1, 2, 56, 56)),
    ("max_3x3_s3_pieces", lambda x: nn.max_pool2d(x, (3, 3), (3, 3), padding=(1, 2, 1, 2)),
     (1, 2, 47, 47)),
    ("max_ceil_dilate_asym", lambda x: nn.max_pool2d(x, (3, 3), (2, 2), padding=(0, 1, 1, 0),
                                                     ceil_mode=True, dilation=(1, 2)),
     (1, 4, 10, 9)),
    ("max_nhwc", lambda x: nn.max_pool2d(x, (2, 2), (2, 2), layout="NHWC"), (2, 6, 8, 5)),
    ("max_nchw4c", lambda x: nn.max_pool2d(x, (2, 2), (1, 1), layout="NCHW4c"),
     (1, 2, 5, 5, 4)),
    ("avg_pad", lambda x: nn.avg_pool2d(x, (3, 3), (2, 2), padding=1), (1, 4, 9, 9)),
    ("avg_count_pad_ceil", lambda x: nn.avg_pool2d(x, (3, 3), (2, 2), padding=1,
                                                   count_include_pad=True, ceil_mode=True),
     (1, 4, 10, 10)),
    ("avg_ceil_no_count_pad", lambda x: nn.avg_pool2d(x, (2, 2), (2, 2), ceil_mode=True),
     (1, 3, 7, 7)),
    ("avg_nhwc_dilate", lambda x: nn.avg_pool2d(x, (2, 3), (1, 2), padding=(1, 0, 0, 2),
                                                layout="NHWC", dilation=2), (2, 9, 10, 3)),
    ("global_avg", lambda x: nn.global_avg_pool2d(x), (2, 4, 5, 6)),
    ("global_max_nhwc", lambda x: nn.global_max_pool2d(x, layout="NHWC"), (2, 5, 6, 4)),
    ("adaptive_avg", lambda x: nn.adaptive_avg_pool2d(x, (3, 4)), (1, 4, 8, 10)),
    ("adaptive_avg_1", lambda x: nn.adaptive_avg_pool2d(x, 1), (1, 4, 8, 10)),
    ("adaptive_avg_grow", lambda x: nn.adaptive_avg_pool2d(x, (5, 7)), (1, 2, 3, 4)),
    ("adaptive_max_nhwc", lambda x: nn.adaptive_max_pool2d(x, (3, 5), layout="NHWC"),
     (1, 7, 11, 3)),
    ("adaptive_max_default", lambda x: nn.adaptive_max_pool2d(x), (1, 2, 4, 5)),
]


@pytest.mark.parametrize("case", POOL, ids=[c[0] for c in POOL])
def test_pool(case):
    _, make, shape = case
    check_op(make, [shape])


def test_pool_int32():
    check_op(lambda x: nn.avg_pool2d(x, (3, 3), (2, 2), padding=1), [(1, 2, 7, 7)],
             dtype="int32")
    check_op(lambda x: nn.max_pool2d(x, (2, 2), (2, 2), padding=1), [(1, 2, 7, 7)],
             dtype="int32")
    # a row vectorized in pieces (AVX-512: int32), and int8 left to scalar windows
    for dtype in ("int32", "int8"):
        check_op(lambda x: nn.max_pool2d(x, (3, 3), (2, 2), padding=1), [(1, 2, 56, 56)],
                 dtype=dtype)


def test_fused_max_pool_alone():
    x = relay.var("x", shape=(1, 8, 16, 16))
    w = relay.var("w", shape=(8, 8, 1, 1))
    y = nn.max_pool2d(nn.relu(nn.conv2d(x, w)), (3, 3), (2, 2), padding=1)
    y = nn.global_avg_pool2d(y)
    lowered = check_fused(relay.Function([x, w], y))
    assert [lw.anchor[0].name for lw in lowered] == ["conv2d_nchw.x86", "max_pool2d.x86",
                                                     "global_avg_pool2d.x86"]


@pytest.mark.parametrize("args,shape", [((5, 1, 2.0, 1e-4, 0.75), (1, 8, 4, 4)),
                                        ((4, 3, 1.0, 0.5, 0.5), (1, 3, 4, 6)),
                                        ((3, -1, 1.0, 0.1, 0.6), (2, 5, 7))])
def test_lrn(args, shape):
    lowered = check_op(lambda x: nn.lrn(x, *args), [shape])
    assert lowered.anchor[0].name == "lrn.x86"


@pytest.mark.parametrize("axis,shape", [(1, (2, 4, 5, 6)), (-1, (2, 5, 3))])
def test_instance_norm(axis, shape):
    channels = shape[axis]
    check_op(lambda x, g, b: nn.instance_norm(x, g, b, axis=axis),
             [shape, (channels,), (channels,)], atol=1e-4)


@pytest.mark.parametrize("layout, stride, inlined", [("NCHW", 2, True), ("NHWC", 2, True),
                                                     ("NCHW16c", 2, True), ("NCHW", 1, False)])
def test_pool_padding_inlined_or_kept(layout, stride, inlined):
    """NCHW stride 2 (ResNet's 3x3/2 max pool): the windows are scalar loops and the padding is
    read through them, with no padded copy. So is it when the vector lanes are not a window
    axis (NHWC's C, NCHW16c's c: one padding test per vector tap). NCHW stride 1 vectorizes
    the windows along W and keeps the copy. (A schedule choice that does not depend on the
    ISA; the numbers are checked in test_pool.)"""
    import numpy as np

    import irlab
    from irlab.contrib import graph_executor

    shape = {"NCHW": (1, 8, 12, 12), "NHWC": (1, 12, 12, 16), "NCHW16c": (1, 2, 12, 12, 16)}[layout]
    x = relay.var("x", shape=shape)
    f = relay.Function([x], nn.max_pool2d(x, (3, 3), (stride, stride), padding=1, layout=layout))
    with irlab.transform.PassContext(opt_level=3):
        factory = relay.build(irlab.IRModule.from_expr(f), target="llvm")
    (pool,) = [lw for lw in factory.lowered if "pool" in lw.name]
    assert ("pad_temp" not in pool.prim_func.script()) == inlined
    a = np.random.default_rng(0).standard_normal(shape).astype("float32")
    m = graph_executor.GraphModule(factory["default"](irlab.cpu()))
    m.set_input(x=a)
    m.run()
    ref = relay.create_executor("debug", mod=irlab.IRModule.from_expr(f)).evaluate()(a)
    np.testing.assert_array_equal(m.get_output(0).numpy(), ref.numpy())


@pytest.mark.parametrize("kwargs,shape,edge", [
    (dict(pool_size=(3, 3), strides=(2, 2), padding=1), (1, 4, 9, 9), True),
    (dict(pool_size=(3, 3), strides=(2, 2), padding=1, ceil_mode=True), (1, 2, 8, 8), True),
    (dict(pool_size=(2, 2), strides=(2, 2), padding=1, ceil_mode=True), (1, 2, 7, 7), False),
    # the last window of each axis lies in the padding alone: its maximum is the padding value
    # (the lowest finite float, as TVM's min_value)
    (dict(pool_size=(3, 3), strides=(3, 3), padding=2, ceil_mode=True), (1, 2, 6, 6), False),
    # taps 2 apart: the border cell a clamped read gives may fall between two taps
    (dict(pool_size=(3, 3), strides=(1, 1), padding=1, dilation=(2, 1)), (1, 2, 8, 8), False),
])
def test_max_pool_pads_with_the_border_cell_when_every_window_meets_the_input(kwargs, shape,
                                                                              edge):
    """Max pooling reads the nearest border cell instead of -inf (a clamped load, no test)
    exactly when every window holds an input cell and its taps are contiguous: the same
    maxima, checked against the op's numpy reference."""
    from irlab import te
    from irlab.topi.nn.pooling import pool2d

    check_op(lambda x: nn.max_pool2d(x, **kwargs), [shape])
    data = te.placeholder(shape, "float32", name="data")
    pad = kwargs["padding"]
    out = pool2d(data, "max", kwargs["pool_size"], kwargs["strides"],
                 kwargs.get("dilation", (1, 1)), (pad, pad),
                 ceil_mode=kwargs.get("ceil_mode", False))
    (padded,) = out.op.input_tensors
    assert ("Select" not in type(padded.op.body[0]).__name__) == edge
