"""``nn.conv2d``: 2-D convolution with strides, asymmetric padding, dilation, groups (depthwise
included) and any permutation layouts (NCHW/OIHW, NHWC/HWIO, NHWC/OHWI, NHWC/HWOI...); the
kernel may also have its output channels split into blocks (``OIHW16o``: weight shape
``(O // 16, I, KH, KW, 16)``, the layout AlterOpLayout gives the x86 packed schedule).
``nn.contrib_conv2d_NCHWc`` is conv2d in TVM's channel-blocked x86 layouts (``NCHW16c`` data,
``OIHW16i16o`` weight), what AlterOpLayout makes of an x86 conv2d by default."""

from __future__ import annotations

import re

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.attrs import Attrs
from irlab.runtime.dtype import to_numpy_dtype
from irlab.ir.op import Op, OpPattern, register_op
from irlab.ir.type import TensorType
from irlab.relay.expr import Call
from irlab.relay.op import transform as _transform
from irlab.relay.op.nn._utils import (acc_dtype, check_pair, dtype_or_empty, get_pad_tuple2d,
                                      int_pair, kernel_out_channels, layout_axes, padding4,
                                      unpack_kernel)
from irlab.relay.op.op import register_alter_op_layout, register_convert_op_layout
from irlab.relay.op.op_common import checked_shape, make_call, out_array
from irlab.relay.op.scale_axis import ScaleAxes, ScaleAxisRule
from irlab.tir.data_layout import split_kernel_layout


class Conv2DAttrs(Attrs):
    """Attributes of ``nn.conv2d`` (TVM's ``relay.attrs.Conv2DAttrs``, fields in its order)."""

    _type_key = "relay.attrs.Conv2DAttrs"
    strides: tuple = (1, 1)
    # TVM's C++ default is (0, 0); the Python constructor always stores 4 values, so a
    # normalized (0, 0, 0, 0) is non-default and prints, exactly as in TVM.
    padding: tuple = (0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    channels: int = None
    kernel_size: tuple = None
    data_layout: str = "NCHW"
    kernel_layout: str = "OIHW"
    out_layout: str = ""
    out_dtype: str = ""


def _out_hw(ctx, size_hw, kernel, strides, dilation, padding) -> tuple:
    """(OH, OW) of a convolution with ``padding`` (top, left, bottom, right, as ``padding4``
    returns it); a kernel larger than the padded input fails."""
    top, left, bottom, right = padding
    out = []
    for axis, size, k, d, s, pad in (("height", size_hw[0], kernel[0], dilation[0], strides[0],
                                      top + bottom),
                                     ("width", size_hw[1], kernel[1], dilation[1], strides[1],
                                      left + right)):
        span = (k - 1) * d + 1
        if size + pad < span:
            ctx.fail(f"the dilated kernel {axis} ({span} = ({k} - 1) * {d} + 1) is larger than "
                     f"the padded input {axis} ({size + pad} = {size} + {pad})")
        out.append((size + pad - span) // s + 1)
    return tuple(out)


def _conv2d_rel(ctx):
    attrs = ctx.attrs
    data = ctx.tensor(0, "data")
    ctx.expect(data.ndim == 4, f"conv2d expects 4-D data, got shape {data.shape}")
    dlay = layout_axes(attrs.data_layout, "NCHW", "data_layout", ctx)
    try:
        primal, block = split_kernel_layout(attrs.kernel_layout)
    except IrlabError as err:
        ctx.fail(str(err))
    klay = {c: primal.index(c) for c in "OIHW"}
    kernel_ndim = 4 if block is None else 5
    out_layout = attrs.out_layout or attrs.data_layout
    layout_axes(out_layout, "NCHW", "out_layout", ctx)  # validation only
    strides = check_pair(attrs.strides, "strides", ctx)
    dilation = check_pair(attrs.dilation, "dilation", ctx)
    padding = padding4(attrs.padding, ctx)
    groups = attrs.groups
    ctx.expect(isinstance(groups, int) and groups >= 1, f"groups must be >= 1, got {groups}")

    batch, in_ch = data.shape[dlay["N"]], data.shape[dlay["C"]]
    height, width = data.shape[dlay["H"]], data.shape[dlay["W"]]
    ctx.expect(in_ch % groups == 0,
               f"input channels ({in_ch}, shape {data.shape}, layout "
               f"{attrs.data_layout}) are not divisible by groups={groups}")

    if not ctx.known(1) and attrs.channels is not None and attrs.kernel_size is not None:
        # Infer an unannotated weight from the attrs, as TVM's Conv2DRel does.
        kernel_size = check_pair(attrs.kernel_size, "kernel_size", ctx)
        ctx.expect(attrs.channels >= 1 and attrs.channels % groups == 0,
                   f"channels={attrs.channels} must be a positive multiple of groups={groups}")
        ctx.expect(block is None or attrs.channels % block == 0,
                   f"channels={attrs.channels} are not divisible by the output-channel block "
                   f"of kernel_layout {attrs.kernel_layout}")
        oihw = {"O": attrs.channels // (block or 1), "I": in_ch // groups,
                "H": kernel_size[0], "W": kernel_size[1]}
        shape = tuple(oihw[c] for c in primal) + ((block,) if block else ())
        ctx.assign(1, TensorType(shape, data.dtype))
    weight = ctx.tensor(1, "weight")
    ctx.expect(weight.ndim == kernel_ndim,
               f"conv2d expects a {kernel_ndim}-D weight for kernel_layout "
               f"{attrs.kernel_layout}, got shape {weight.shape}")
    where_w = f"shape {weight.shape}, layout {attrs.kernel_layout}"
    ctx.expect(block is None or weight.shape[-1] == block,
               f"the last axis of the weight ({where_w}) must be the output-channel block "
               f"{block}")
    out_ch, w_in = weight.shape[klay["O"]] * (block or 1), weight.shape[klay["I"]]
    kernel = (weight.shape[klay["H"]], weight.shape[klay["W"]])
    where_d = f"shape {data.shape}, layout {attrs.data_layout}"
    if w_in * groups != in_ch:
        per_group = f" ({w_in} per group x {groups} groups)" if groups > 1 else ""
        ctx.fail(f"input channels differ: data has {in_ch} channels ({where_d}) but weight "
                 f"expects {w_in * groups}{per_group} ({where_w})")
    ctx.expect(out_ch % groups == 0,
               f"output channels of the weight ({out_ch}, {where_w}) are not divisible by "
               f"groups={groups}")
    if attrs.channels is not None:
        ctx.expect(attrs.channels == out_ch,
                   f"channels={attrs.channels} but the weight has {out_ch} output channels "
                   f"({where_w})")
    if attrs.kernel_size is not None:
        ctx.expect(tuple(attrs.kernel_size) == kernel,
                   f"kernel_size={tuple(attrs.kernel_size)} but the weight's kernel is "
                   f"{kernel} ({where_w})")

    out_hw = _out_hw(ctx, (height, width), kernel, strides, dilation, padding)
    nchw = {"N": batch, "C": out_ch, "H": out_hw[0], "W": out_hw[1]}
    shape = tuple(nchw[c] for c in out_layout)
    return TensorType(shape, attrs.out_dtype or data.dtype)


def conv2d_nchw(data: np.ndarray, weight: np.ndarray, strides, padding, dilation,
                groups: int) -> np.ndarray:
    """Grouped 2-D convolution of NCHW ``data`` with an OIHW ``weight`` (im2col + matmul)."""
    batch, in_ch = data.shape[:2]
    out_ch, group_in, kh, kw = weight.shape
    top, left, bottom, right = padding
    padded = np.pad(data, ((0, 0), (0, 0), (top, bottom), (left, right)))
    span = ((kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1)
    # (N, C, positions_h, positions_w, span_h, span_w) view, then keep the strided
    # positions and the dilated taps: (N, C, OH, OW, KH, KW).
    windows = np.lib.stride_tricks.sliding_window_view(padded, span, axis=(2, 3))
    patches = windows[:, :, ::strides[0], ::strides[1], ::dilation[0], ::dilation[1]]
    out_h, out_w = patches.shape[2:4]
    cols = patches.reshape(batch, groups, group_in, out_h, out_w, kh, kw)
    cols = cols.transpose(1, 0, 3, 4, 2, 5, 6).reshape(groups, batch * out_h * out_w,
                                                       group_in * kh * kw)
    group_out = out_ch // groups
    kernels = weight.reshape(groups, group_out, group_in * kh * kw).transpose(0, 2, 1)
    out = np.matmul(cols, kernels)  # (G, N*OH*OW, O/G)
    out = out.reshape(groups, batch, out_h, out_w, group_out).transpose(1, 0, 4, 2, 3)
    return out.reshape(batch, out_ch, out_h, out_w)


def _conv2d_reference(inputs, attrs, out_type):
    data, weight = inputs
    acc = acc_dtype(to_numpy_dtype(out_type.dtype))
    # Convert to the canonical layouts, compute, then to the output layout (TVM's semantics).
    x = data.transpose([attrs.data_layout.index(c) for c in "NCHW"]).astype(acc)
    primal, _ = split_kernel_layout(attrs.kernel_layout)
    w = unpack_kernel(weight, attrs.kernel_layout)
    w = w.transpose([primal.index(c) for c in "OIHW"]).astype(acc)
    pad = attrs.padding
    pad = pad * 4 if len(pad) == 1 else (pad + pad if len(pad) == 2 else pad)
    out = conv2d_nchw(x, w, attrs.strides, pad, attrs.dilation, attrs.groups)
    out_layout = attrs.out_layout or attrs.data_layout
    return out_array(out.transpose(["NCHW".index(c) for c in out_layout]), out_type)


def _conv2d_layout(attrs, new_in, old_in, types):
    """FInferCorrectLayout: a convolution dictates layouts; whatever its inputs arrive in, it
    wants its attrs' layouts."""
    return ([attrs.data_layout, attrs.kernel_layout],
            [attrs.out_layout or attrs.data_layout], attrs)


def _scale_axes(call):
    """FoldScaleAxis: the channel axes of a conv2d in plain layouts (permutations of NCHW /
    OIHW) with groups 1 or depthwise; None for split layouts (an OIHW16o kernel from
    AlterOpLayout) and grouped convolutions, which are not folded into (as TVM)."""
    attrs = call.attrs
    kernel = attrs.kernel_layout
    out_layout = attrs.out_layout or attrs.data_layout
    if not all(layout.isupper() for layout in (attrs.data_layout, kernel, out_layout)):
        return None
    weight = tuple(call.args[1].checked_type.shape)
    depthwise = weight[kernel.index("O")] == attrs.groups and weight[kernel.index("I")] == 1
    if attrs.groups != 1 and not depthwise:
        return None
    # Input channel c of a depthwise conv feeds only output channel c.
    return ScaleAxes(data=attrs.data_layout.index("C"), output=out_layout.index("C"),
                     weight_of_data=kernel.index("O" if depthwise else "I"),
                     weight_of_output=kernel.index("O"))


register_op("nn.conv2d", num_inputs=2,
            arguments=[("data", "Tensor", "The input tensor."),
                       ("weight", "Tensor", "The weight tensor.")],
            attrs_type=Conv2DAttrs, type_rel=_conv2d_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            reference=_conv2d_reference, support_level=2,
            description="2-D convolution (cross-correlation) of data with a weight tensor.",
            ).set_attrs(FInferCorrectLayout=_conv2d_layout, TScaleAxisRule=ScaleAxisRule.WEIGHT,
                        FScaleAxisChannels=_scale_axes)


def conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
           channels=None, kernel_size=None, data_layout="NCHW", kernel_layout="OIHW",
           out_layout="", out_dtype=""):
    """2-D convolution. Ints become pairs and padding becomes (top, left, bottom, right)."""
    return make_call("nn.conv2d", [data, weight], _conv2d_attrs(
        strides, padding, dilation, groups, channels, kernel_size, data_layout, kernel_layout,
        out_layout, out_dtype))


def _conv2d_attrs(strides, padding, dilation, groups, channels, kernel_size, data_layout,
                  kernel_layout, out_layout, out_dtype) -> Conv2DAttrs:
    """Conv2DAttrs from a constructor's arguments, normalized as TVM's Python does."""
    return Conv2DAttrs(
        strides=int_pair(strides, "strides"), padding=get_pad_tuple2d(padding),
        dilation=int_pair(dilation, "dilation"), groups=int(groups),
        channels=None if channels is None else int(channels),
        kernel_size=int_pair(kernel_size, "kernel_size"), data_layout=str(data_layout),
        kernel_layout=str(kernel_layout), out_layout=str(out_layout or ""),
        out_dtype=dtype_or_empty(out_dtype))


# ---------------------------------------------------------------------------------------------
# nn.contrib_conv2d_NCHWc: conv2d in channel-blocked layouts (TVM's x86 layout)
_NCHWC = re.compile(r"^NCHW(\d+)c$")
_NCHWC_KERNEL = re.compile(r"^OIHW(\d+)i(\d+)o$")


def nchwc_blocks(attrs) -> tuple:
    """``(x, y)`` of a contrib_conv2d_NCHWc's layouts ``NCHW{x}c`` / ``OIHW{x}i{y}o`` /
    ``NCHW{y}c``; raises IrlabError naming the layout that is not of that form."""
    data = _NCHWC.match(attrs.data_layout)
    out = _NCHWC.match(attrs.out_layout or attrs.data_layout)
    kernel = _NCHWC_KERNEL.match(attrs.kernel_layout)
    for match, what, value, form in ((data, "data_layout", attrs.data_layout, "NCHW16c"),
                                     (out, "out_layout", attrs.out_layout, "NCHW16c"),
                                     (kernel, "kernel_layout", attrs.kernel_layout,
                                      "OIHW16i16o")):
        if match is None:
            raise IrlabError(f"contrib_conv2d_NCHWc: {what} {value!r} is not of the form {form}")
    x, y = int(data.group(1)), int(out.group(1))
    if (int(kernel.group(1)), int(kernel.group(2))) != (x, y):
        raise IrlabError(f"contrib_conv2d_NCHWc: kernel_layout {attrs.kernel_layout} does not "
                         f"match data_layout {attrs.data_layout} and out_layout "
                         f"{attrs.out_layout or attrs.data_layout} (expected OIHW{x}i{y}o)")
    return x, y


def _conv2d_nchwc_rel(ctx):
    attrs = ctx.attrs
    try:
        x, y = nchwc_blocks(attrs)
    except IrlabError as err:
        ctx.fail(str(err))
    data = ctx.tensor(0, "data")
    weight = ctx.tensor(1, "weight")
    ctx.expect(attrs.groups == 1, f"contrib_conv2d_NCHWc has one group, got groups={attrs.groups}")
    ctx.expect(data.ndim == 5 and data.shape[4] == x,
               f"contrib_conv2d_NCHWc expects 5-D data (N, C/{x}, H, W, {x}) for data_layout "
               f"{attrs.data_layout}, got shape {data.shape}")
    ctx.expect(weight.ndim == 6 and weight.shape[4:] == (x, y),
               f"contrib_conv2d_NCHWc expects a 6-D weight (O/{y}, C/{x}, KH, KW, {x}, {y}) for "
               f"kernel_layout {attrs.kernel_layout}, got shape {weight.shape}")
    ctx.expect(weight.shape[1] == data.shape[1],
               f"input channels differ: data {data.shape} has {data.shape[1] * x} but weight "
               f"{weight.shape} expects {weight.shape[1] * x}")
    strides = check_pair(attrs.strides, "strides", ctx)
    dilation = check_pair(attrs.dilation, "dilation", ctx)
    kernel = (weight.shape[2], weight.shape[3])
    out_h, out_w = _out_hw(ctx, data.shape[2:4], kernel, strides, dilation,
                           padding4(attrs.padding, ctx))
    return TensorType((data.shape[0], weight.shape[0], out_h, out_w, y),
                      attrs.out_dtype or data.dtype)


def _conv2d_nchwc_reference(inputs, attrs, out_type):
    data, weight = inputs
    x, y = nchwc_blocks(attrs)
    n, c_chunks, h, w, _ = data.shape
    o_chunks, _, kh, kw, _, _ = weight.shape
    acc = acc_dtype(to_numpy_dtype(out_type.dtype))
    nchw = data.transpose(0, 1, 4, 2, 3).reshape(n, c_chunks * x, h, w).astype(acc)
    oihw = weight.transpose(0, 5, 1, 4, 2, 3).reshape(o_chunks * y, c_chunks * x, kh, kw)
    pad = tuple(attrs.padding)
    pad = pad * 4 if len(pad) == 1 else (pad + pad if len(pad) == 2 else pad)
    out = conv2d_nchw(nchw, oihw.astype(acc), attrs.strides, pad, attrs.dilation, 1)
    _, _, oh, ow = out.shape
    return out_array(out.reshape(n, o_chunks, y, oh, ow).transpose(0, 1, 3, 4, 2), out_type)


register_op("nn.contrib_conv2d_NCHWc", num_inputs=2,
            arguments=[("data", "Tensor", "The input tensor, NCHW{x}c."),
                       ("weight", "Tensor", "The weight tensor, OIHW{x}i{y}o.")],
            attrs_type=Conv2DAttrs, type_rel=_conv2d_nchwc_rel,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, reference=_conv2d_nchwc_reference,
            support_level=10,
            description="2-D convolution in channel-blocked layouts (NCHW{x}c data, "
                        "OIHW{x}i{y}o weight, NCHW{y}c output), as AlterOpLayout makes "
                        "conv2d on x86.",
            ).set_attrs(FInferCorrectLayout=_conv2d_layout)


def contrib_conv2d_nchwc(data, kernel, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                         groups=1, channels=None, kernel_size=None, data_layout="NCHW16c",
                         kernel_layout="OIHW16i16o", out_layout="", out_dtype=""):
    """conv2d on ``NCHW{x}c`` data with an ``OIHW{x}i{y}o`` kernel, giving ``NCHW{y}c`` (TVM's
    ``relay.nn.contrib_conv2d_nchwc``): what AlterOpLayout makes of an x86 conv2d."""
    return make_call("nn.contrib_conv2d_NCHWc", [data, kernel], _conv2d_attrs(
        strides, padding, dilation, groups, channels, kernel_size, data_layout, kernel_layout,
        out_layout, out_dtype))


# ---------------------------------------------------------------------------------------------
# layout hooks (TVM's python/tvm/relay/op/nn/_nn.py and topi/x86/conv2d_alter_op.py)
def is_depthwise_conv2d(data_shape, data_layout, weight_shape, kernel_layout, groups):
    """Each input channel convolved on its own: C_in == C_out == groups."""
    in_channels = data_shape[data_layout.index("C")]
    out_channels = kernel_out_channels(weight_shape, kernel_layout)
    return in_channels == groups and out_channels == groups


@register_convert_op_layout("nn.conv2d")
def convert_conv2d(attrs, inputs, tinfos, desired_layouts):
    """New data layout as desired; a "default" kernel layout follows the data layout
    (OIHW for NCHW; HWIO, or HWOI for depthwise, for NHWC)."""
    data, weight = inputs
    if len(desired_layouts) != 2:
        raise IrlabError("nn.conv2d needs two desired layouts (data, kernel), got "
                         f"{desired_layouts!r}")
    data_layout, kernel_layout = desired_layouts
    if data_layout == "default":
        raise IrlabError("the data layout of nn.conv2d cannot be 'default'")
    new_attrs = dict(attrs)
    new_attrs["data_layout"] = data_layout
    if kernel_layout != "default":
        new_attrs["kernel_layout"] = kernel_layout
    elif data_layout == "NCHW":
        new_attrs["kernel_layout"] = "OIHW"
    elif data_layout == "NHWC":
        depthwise = is_depthwise_conv2d(tinfos[0].shape, attrs.data_layout, tinfos[1].shape,
                                        attrs.kernel_layout, attrs.groups)
        new_attrs["kernel_layout"] = "HWOI" if depthwise else "HWIO"
    elif data_layout == "HWNC":
        new_attrs["kernel_layout"] = "HWOI"
    else:
        raise IrlabError(f"layout {data_layout} is not supported for nn.conv2d")
    return conv2d(data, weight, **new_attrs)


@register_alter_op_layout("nn.conv2d")
def alter_op_layout_conv2d(attrs, inputs, tinfos, out_type):
    """With no target, conv2d stays as it is."""
    return None


@register_alter_op_layout("nn.conv2d", target="cpu")
def alter_op_layout_conv2d_cpu(attrs, inputs, tinfos, out_type):
    """CPU targets (llvm, c). By default (``relay.x86.conv2d_NCHWc``, on unless the
    PassContext turns it off) an NCHW/OIHW conv2d whose output channels fill vectors becomes
    ``nn.contrib_conv2d_NCHWc`` (``use_nchwc`` picks the blocks; the rewriter converts the data
    to ``NCHW{x}c`` and the kernel to ``OIHW{x}i{y}o``, FoldConstant packs a constant kernel
    once, and the ops after it follow the blocked layout until one cannot). Before::

        nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1, 1, 1]);

    After AlterOpLayout (AVX-512)::

        %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
        %1 = layout_transform(meta[relay.Constant][0], src_layout="OIHW",
                              dst_layout="OIHW16i16o");
        %2 = nn.contrib_conv2d_NCHWc(%0, %1, padding=[1, 1, 1, 1], data_layout="NCHW16c",
                                     kernel_layout="OIHW16i16o", out_layout="NCHW16c");
        layout_transform(%2, src_layout="NCHW16c", dst_layout="NCHW")

    A 3x3 stride-1 conv with a constant kernel and 32+ channels becomes Winograd F(m, 3)
    instead when ``use_winograd`` says so (under MetaSchedule, or by config): its kernel goes
    through ``contrib_conv2d_winograd_weight_transform`` and a blocking reshape + transpose,
    which FoldConstant evaluates once, into
    ``nn.contrib_conv2d_winograd_without_weight_transform`` on the same ``NCHW{x}c`` data::

        %0 = nn.contrib_conv2d_winograd_weight_transform(meta[relay.Constant][0], tile_size=4);
        %1 = transpose(reshape(%0, newshape=[6, 6, 4, 16, 4, 16]), axes=[0, 1, 2, 4, 5, 3]);
        nn.contrib_conv2d_winograd_without_weight_transform(%x16c, %1, tile_size=4,
            padding=[1, 1, 1, 1], data_layout="NCHW16c", kernel_layout="HWOI16i16o",
            out_layout="NCHW16c")

    With it off, an NCHW/OIHW conv2d the packed schedule would run gets an ``OIHW{n}o``
    kernel (``use_prepacked_kernel`` picks n), so the weight is packed once -- by FoldConstant
    when it is a constant -- instead of on every call. Before::

        nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1, 1, 1])

    After AlterOpLayout (then FoldConstant packs the constant)::

        %0 = layout_transform(meta[relay.Constant][0], src_layout="OIHW", dst_layout="OIHW64o");
        nn.conv2d(%x, %0, padding=[1, 1, 1, 1], kernel_layout="OIHW64o")
    """
    from irlab.relay.op.strategy.conv import use_nchwc, use_prepacked_kernel, use_winograd
    from irlab.relay.expr import Constant
    from irlab.target import Target

    target = Target.current(allow_none=True)
    blocks = None if target is None else use_nchwc(attrs, tinfos, out_type, target)
    if blocks is not None:
        x, y = blocks
        tile_size = use_winograd(attrs, tinfos, out_type, blocks,
                                 isinstance(inputs[1], Constant))
        if tile_size is not None:
            return _winograd_nchwc(attrs, inputs, tinfos, tile_size, x, y)
        new_attrs = dict(attrs)
        new_attrs.update(data_layout=f"NCHW{x}c", kernel_layout=f"OIHW{x}i{y}o",
                         out_layout=f"NCHW{y}c")
        return contrib_conv2d_nchwc(*inputs, **new_attrs)
    block = None if target is None else use_prepacked_kernel(attrs, tinfos, out_type, target)
    if block is None:
        return None
    new_attrs = dict(attrs)
    new_attrs["kernel_layout"] = f"OIHW{block}o"
    return conv2d(*inputs, **new_attrs)


def _winograd_nchwc(attrs, inputs, tinfos, tile_size, x, y):
    """conv2d as Winograd F(tile_size, 3) on NCHW{x}c data: the kernel transformed
    (``contrib_conv2d_winograd_weight_transform``) and blocked as ``HWOI{x}i{y}o`` by ops that
    FoldConstant evaluates once."""
    from irlab.relay.op.nn.winograd import (contrib_conv2d_winograd_weight_transform,
                                            contrib_conv2d_winograd_without_weight_transform)

    alpha = tile_size + 2
    out_ch, in_ch = (int(d) for d in tinfos[1].shape[:2])
    kernel = contrib_conv2d_winograd_weight_transform(inputs[1], tile_size)
    kernel = _transform.reshape(kernel, (alpha, alpha, out_ch // y, y, in_ch // x, x))
    kernel = _transform.transpose(kernel, (0, 1, 2, 4, 5, 3))
    return contrib_conv2d_winograd_without_weight_transform(
        inputs[0], kernel, tile_size, padding=attrs.padding, channels=attrs.channels,
        kernel_size=attrs.kernel_size, data_layout=f"NCHW{x}c",
        kernel_layout=f"HWOI{x}i{y}o", out_layout=f"NCHW{y}c", out_dtype=attrs.out_dtype)


# ---------------------------------------------------------------------------------------------
# CombineParallelConv2D: how sibling conv2d merge into one
class Conv2DParallelCombiner:
    """Concatenates the weights along O; following ops get their operands concatenated along
    the channel axis."""

    def is_supported(self, call):
        return call.attrs.groups == 1

    @staticmethod
    def _kernel_hw(call):
        layout = call.attrs.kernel_layout
        shape = checked_shape(call.args[1])
        return shape[layout.index("H")], shape[layout.index("W")]

    @staticmethod
    def _out_channels(call):
        # a split kernel (OIHW16o) counts its blocks; its weights concatenate along the block
        # axis O (same block: can_combine compares kernel_layout), keeping the channel order
        return kernel_out_channels(checked_shape(call.args[1]), call.attrs.kernel_layout)

    def can_combine(self, a, b):
        fields = ("strides", "padding", "dilation", "groups", "data_layout", "kernel_layout",
                  "out_dtype", "out_layout")
        return (all(getattr(a.attrs, f) == getattr(b.attrs, f) for f in fields)
                and self._kernel_hw(a) == self._kernel_hw(b))

    def _channel_axis(self, call):
        attrs = call.attrs
        return (attrs.out_layout or attrs.data_layout).index("C")

    def make_combined_op(self, branches):
        root = branches[0][0]
        weights = [branch[0].args[1] for branch in branches]
        axis = root.attrs.kernel_layout.index("O")
        channels = sum(self._out_channels(branch[0]) for branch in branches)
        attrs = root.attrs.with_fields(channels=channels)
        self.channel_axis = self._channel_axis(root)
        return Call(root.op, [root.args[0], _transform.concatenate(weights, axis)], attrs)

    def is_arg_compatible(self, a, b, index):
        ta, tb = a.args[index].checked_type, b.args[index].checked_type
        out_a, out_b = checked_shape(a), checked_shape(b)
        if ta.dtype != tb.dtype or len(ta.shape) != len(tb.shape):
            return False
        pos = self.channel_axis - len(out_a) + len(ta.shape)
        if pos < 0 or ta.shape[pos] != out_a[self.channel_axis] or \
                tb.shape[pos] != out_b[self.channel_axis]:
            return False  # the channel axis must be there and not broadcast
        return all(ta.shape[i] == tb.shape[i] for i in range(len(ta.shape)) if i != pos)

    def make_combined_following(self, data, branches, depth, parent_index):
        call = branches[0][depth]
        ndim = len(checked_shape(call))
        args = []
        for i, arg in enumerate(call.args):
            if i == parent_index:
                args.append(data)
                continue
            axis = self.channel_axis - ndim + len(checked_shape(arg))
            args.append(_transform.concatenate([b[depth].args[i] for b in branches], axis))
        return Call(call.op, args, call.attrs, call.type_args)

    def group_outputs(self, data, branches, depth):
        outputs, start = [], 0
        lead = self.channel_axis
        for branch in branches:
            channels = self._out_channels(branch[0])
            outputs.append(_transform.strided_slice(
                data, [0] * lead + [start], [-1] * lead + [channels], [1] * (lead + 1),
                slice_mode="size"))
            start += channels
        return outputs


Op.get("nn.conv2d").set_attr("FCombineParallel", Conv2DParallelCombiner)

__all__ = ["Conv2DAttrs", "conv2d", "contrib_conv2d_nchwc", "nchwc_blocks",
           "is_depthwise_conv2d", "Conv2DParallelCombiner"]


# ---------------------------------------------------------------------------------------------
# TE computes and strategies (irlab/relay/op/strategy/conv.py)
def _register_computes():
    from irlab.relay.op.strategy.conv import register_conv

    register_conv()


_register_computes()
