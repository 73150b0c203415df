"""nn.conv2d / nn.conv2d_transpose: TE computes + CPU schedules against the ops' numpy
references, alone and fused as FuseOps makes them (conv + bias + residual + relu)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from _conv_util import check_fused, check_op, lower_op, tiled  # noqa: E402

from irlab import relay  # noqa: E402

nn = relay.nn

# What each schedule is called and whether it packs the weight on every call (into p1_global)
KINDS = {"direct": ("conv2d_nchw.x86", False), "packed": ("conv2d_nchw.x86", True),
         "prepacked": ("conv2d_nchw_prepacked.x86", False),
         "im2col": ("conv2d_nchw_im2col.x86", False), "nhwc": ("conv2d_nhwc.x86", False),
         "depthwise": ("conv2d_depthwise.x86", False), "other": ("conv2d_other.x86", False)}
# Named CPUs the choices are checked for, whatever the host (lowered and inspected, not run)
TARGETS = {8: "llvm -mcpu=haswell", 16: "llvm -mcpu=skylake-avx512"}

CONV2D = [
    # (id, data shape, weight shape, kwargs, schedule kind -- or {float32 lanes: kind} where
    #  the choice depends on the vector width --, tiled)
    # 8 output channels: one AVX2 vector (packed, channels as lanes), half an AVX-512 one
    # (direct, output columns as vector lanes)
    ("nchw_direct_pad1", (1, 4, 8, 8), (8, 4, 3, 3), dict(padding=1),
     {8: "packed", 16: "direct"}, True),
    ("nchw_direct_batch2", (2, 3, 9, 10), (5, 3, 3, 2), dict(), "direct", True),
    # direct with the weight packed, output channels as vector lanes
    ("nchw_packed", (1, 3, 10, 10), (32, 3, 3, 3), dict(padding=1), "packed", True),
    ("nchw_packed_7x7_s2", (1, 3, 20, 20), (16, 3, 7, 7), dict(strides=2, padding=3),
     "packed", True),
    ("nchw_packed_stride_dilate_asym", (2, 3, 15, 13), (16, 3, 3, 3),
     dict(strides=2, padding=(1, 2, 0, 1), dilation=(1, 2)), "packed", True),
    # the packed tile reading a pre-packed OIHW{n}o weight (AlterOpLayout's layout): no
    # packing stage; a block the tile would not choose, and a small image, still work
    ("nchw_prepacked", (1, 3, 10, 10), (2, 3, 3, 3, 16), dict(padding=1, kernel_layout="OIHW16o"),
     "prepacked", True),
    ("nchw_prepacked_stride_dilate_asym", (2, 3, 15, 13), (1, 3, 3, 3, 32),
     dict(strides=2, padding=(1, 2, 0, 1), dilation=(1, 2), kernel_layout="OIHW32o"),
     "prepacked", True),
    ("nchw_prepacked_small_8o", (1, 8, 5, 5), (3, 8, 3, 3, 8), dict(padding=1,
                                                                   kernel_layout="OIHW8o"),
     "prepacked", True),
    ("nhwc_split_kernel", (1, 6, 6, 4), (3, 3, 4, 2, 8), dict(padding=1, data_layout="NHWC",
                                                              kernel_layout="HWIO8o"),
     "other", False),
    # im2col + GEMM (fewer than 64 output pixels)
    ("nchw_im2col_1x1", (1, 16, 7, 7), (32, 16, 1, 1), dict(), "im2col", True),
    ("nchw_im2col_batch2_asym", (2, 5, 6, 5), (6, 5, 3, 2),
     dict(strides=2, padding=(1, 0, 2, 1), dilation=(2, 1)), "im2col", True),
    ("nchw_im2col_3x3", (1, 8, 5, 5), (20, 8, 3, 3), dict(padding=1), "im2col", True),
    # a strided conv whose 8 output channels do not fill an AVX-512 vector: im2col + GEMM
    # there; with AVX2 they fill one, and the packed schedule runs it
    ("nchw_im2col_strided_narrow", (1, 3, 20, 20), (8, 3, 3, 3), dict(strides=2, padding=1),
     {8: "packed", 16: "im2col"}, True),
    ("nchw_groups2", (1, 4, 8, 8), (6, 2, 3, 3), dict(padding=1, groups=2), "other", False),
    ("depthwise_nchw", (1, 8, 9, 9), (8, 1, 3, 3), dict(padding=1, groups=8), "depthwise",
     True),
    ("depthwise_nchw_s2", (1, 16, 10, 10), (16, 1, 3, 3), dict(padding=1, strides=2, groups=16),
     "depthwise", True),
    ("depthwise_multiplier", (1, 4, 9, 9), (8, 1, 3, 3), dict(padding=1, groups=4), "other",
     False),
    ("nhwc_hwio", (1, 8, 8, 4), (3, 3, 4, 32), dict(padding=1, data_layout="NHWC",
                                                     kernel_layout="HWIO"), "nhwc", True),
    ("nhwc_hwio_s2", (2, 9, 7, 5), (3, 3, 5, 24), dict(padding=(0, 1, 1, 0), strides=2,
                                                        data_layout="NHWC",
                                                        kernel_layout="HWIO"), "nhwc", True),
    ("nhwc_ohwi", (1, 8, 8, 4), (16, 3, 3, 4), dict(padding=1, strides=2, data_layout="NHWC",
                                                    kernel_layout="OHWI"), "nhwc", True),
    ("depthwise_nhwc", (1, 8, 8, 16), (3, 3, 16, 1), dict(padding=1, groups=16,
                                                          data_layout="NHWC",
                                                          kernel_layout="HWOI"),
     "depthwise", True),
    ("nchw_out_nhwc", (1, 4, 6, 6), (8, 4, 3, 3), dict(padding=1, out_layout="NHWC"), "other",
     False),
]


@pytest.mark.parametrize("case", CONV2D, ids=[c[0] for c in CONV2D])
def test_conv2d(case):
    """Every schedule on the host computes what the op's reference does."""
    _, dshape, wshape, kwargs, _, want_tile = case
    lowered = check_op(lambda x, w: nn.conv2d(x, w, **kwargs), [dshape, wshape])
    assert tiled(lowered) == want_tile


@pytest.mark.parametrize("lanes", sorted(TARGETS), ids=[TARGETS[k] for k in sorted(TARGETS)])
@pytest.mark.parametrize("case", CONV2D, ids=[c[0] for c in CONV2D])
def test_conv2d_choice_per_target(case, lanes):
    """The schedule each named CPU gets (direct / packed / im2col... by its vector width)."""
    _, dshape, wshape, kwargs, kind, want_tile = case
    kind = kind[lanes] if isinstance(kind, dict) else kind
    _, lowered = lower_op(lambda x, w: nn.conv2d(x, w, **kwargs), [dshape, wshape],
                          TARGETS[lanes])
    name, packs = KINDS[kind]
    assert lowered.anchor[0].name == name
    assert tiled(lowered) == want_tile
    assert ("p1_global" in lowered.prim_func.script()) == packs


CONV2D_TRANSPOSE = [
    ("stride2_outpad", (1, 4, 5, 5), (4, 3, 3, 3), dict(strides=2, padding=1,
                                                       output_padding=1)),
    ("groups_dilation_asym", (1, 4, 5, 6), (4, 3, 3, 2),
     dict(strides=(2, 1), padding=(0, 1, 2, 0), groups=2, dilation=(1, 2))),
    ("pad_larger_than_kernel", (1, 2, 8, 8), (2, 3, 3, 3), dict(padding=3)),
    ("plain", (2, 3, 4, 4), (3, 5, 2, 2), dict()),
]


@pytest.mark.parametrize("case", CONV2D_TRANSPOSE, ids=[c[0] for c in CONV2D_TRANSPOSE])
def test_conv2d_transpose(case):
    _, dshape, wshape, kwargs = case
    lowered = check_op(lambda x, w: nn.conv2d_transpose(x, w, **kwargs), [dshape, wshape])
    assert lowered.anchor[0].name == "conv2d_transpose.x86"


def _residual_block(layout):
    if layout == "NCHW":
        x = relay.var("x", shape=(1, 16, 10, 10))
        w = relay.var("w", shape=(16, 16, 3, 3))
        conv = nn.conv2d(x, w, padding=1)
        axis = 1
    else:
        x = relay.var("x", shape=(1, 10, 10, 16))
        w = relay.var("w", shape=(3, 3, 16, 16))
        conv = nn.conv2d(x, w, padding=1, data_layout="NHWC", kernel_layout="HWIO")
        axis = 3
    b = relay.var("b", shape=(16,))
    y = nn.relu(relay.add(nn.bias_add(conv, b, axis=axis), x))
    return relay.Function([x, w, b], y)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_fused_conv_bias_residual_relu(layout):
    (lowered,) = check_fused(_residual_block(layout))
    assert lowered.name.endswith("conv2d_nn_bias_add_add_nn_relu")
    assert tiled(lowered)
    # the epilogue runs in the tile's write-back: no full-size conv2d buffer is left
    assert "conv2d = T.alloc_buffer" not in lowered.prim_func.script()


def test_fused_im2col_bias_relu():
    x = relay.var("x", shape=(1, 8, 7, 7))
    w = relay.var("w", shape=(16, 8, 3, 3))
    b = relay.var("b", shape=(16,))
    y = nn.relu(nn.bias_add(nn.conv2d(x, w, padding=1), b))
    (lowered,) = check_fused(relay.Function([x, w, b], y))
    assert lowered.anchor[0].name == "conv2d_nchw_im2col.x86" and tiled(lowered)


def test_fused_conv_add_relu_and_pool():
    x = relay.var("x", shape=(1, 3, 24, 24))
    w = relay.var("w", shape=(16, 3, 3, 3))
    c = relay.var("c", shape=(16, 1, 1))
    y = nn.relu(relay.add(nn.conv2d(x, w, padding=1, strides=2), c))
    y = nn.max_pool2d(y, (3, 3), (2, 2), padding=1)
    conv, pool = check_fused(relay.Function([x, w, c], y))
    assert conv.anchor[0].name == "conv2d_nchw.x86" and tiled(conv)
    assert pool.anchor[0].name == "max_pool2d.x86"


def test_fused_depthwise_relu():
    x = relay.var("x", shape=(1, 16, 8, 8))
    w = relay.var("w", shape=(16, 1, 3, 3))
    y = nn.relu(nn.conv2d(x, w, padding=1, groups=16))
    (lowered,) = check_fused(relay.Function([x, w], y))
    assert lowered.anchor[0].name == "conv2d_depthwise.x86"


def test_generic_target_has_no_schedule():
    """A target without the "cpu" key gets the generic (unscheduled) implementation."""
    from irlab.ir.op import Op
    from irlab.relay.op.strategy.conv import conv2d_strategy

    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 4, 3, 3))
    func = relay.transform.InferType()(
        __import__("irlab").IRModule.from_expr(relay.Function([x, w], nn.conv2d(x, w))))["main"]

    class _Target:
        keys = ()

    strategy = conv2d_strategy(func.body.attrs, [], func.body.checked_type, _Target())
    names = [i.name for i in strategy.implementations()]
    assert names == ["conv2d.generic"]
    assert Op.get("nn.conv2d").get_attr("FTVMStrategy") is not None
