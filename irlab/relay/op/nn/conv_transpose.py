"""``nn.conv2d_transpose``: the gradient of conv2d with respect to its input ("deconvolution"),
with strides, asymmetric padding, output_padding, dilation and groups, NCHW data and an IOHW
weight (TVM's defaults)."""

from __future__ import annotations

import numpy as np

from irlab.ir.attrs import Attrs
from irlab.runtime.dtype import to_numpy_dtype
from irlab.ir.op import NOT_APPLICABLE, OpPattern, register_op
from irlab.ir.type import TensorType
from irlab.relay.op.nn._utils import (acc_dtype, check_pair, dtype_or_empty, get_pad_tuple2d,
                                      int_pair, layout_axes, padding4)
from irlab.relay.op.op_common import make_call, out_array


class Conv2DTransposeAttrs(Attrs):
    """Attributes of ``nn.conv2d_transpose`` (TVM's ``relay.attrs.Conv2DTransposeAttrs``, fields
    in its order). The weight is (in channels, out channels / groups, KH, KW) in ``IOHW``."""

    _type_key = "relay.attrs.Conv2DTransposeAttrs"
    channels: int = None
    kernel_size: tuple = None
    strides: tuple = (1, 1)
    padding: tuple = (0, 0)
    output_padding: tuple = (0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    data_layout: str = "NCHW"
    kernel_layout: str = "IOHW"
    out_layout: str = ""
    out_dtype: str = ""


def _conv2d_transpose_rel(ctx):
    attrs = ctx.attrs
    data = ctx.tensor(0, "data")
    ctx.expect(data.ndim == 4, f"conv2d_transpose expects 4-D data, got shape {data.shape}")
    dlay = layout_axes(attrs.data_layout, "NCHW", "data_layout", ctx)
    klay = layout_axes(attrs.kernel_layout, "OIHW", "kernel_layout", ctx)
    out_layout = attrs.out_layout or attrs.data_layout
    layout_axes(out_layout, "NCHW", "out_layout", ctx)
    strides = check_pair(attrs.strides, "strides", ctx)
    dilation = check_pair(attrs.dilation, "dilation", ctx)
    out_pad = check_pair(attrs.output_padding, "output_padding", ctx, minimum=0)
    top, left, bottom, right = padding4(attrs.padding, ctx)
    groups = attrs.groups
    ctx.expect(isinstance(groups, int) and groups >= 1, f"groups must be >= 1, got {groups}")
    for s, p, d in zip(strides, out_pad, dilation):
        # TVM's rule: an output_padding must be smaller than the stride or the dilation.
        ctx.expect(p < s or p < d, f"output_padding {out_pad} must be smaller than the "
                                   f"strides {strides} or the dilation {dilation}")
    batch, in_ch = data.shape[dlay["N"]], data.shape[dlay["C"]]
    ctx.expect(in_ch % groups == 0,
               f"input channels ({in_ch}, shape {data.shape}) are not divisible by "
               f"groups={groups}")
    if not ctx.known(1) and attrs.channels is not None and attrs.kernel_size is not None:
        kernel_size = check_pair(attrs.kernel_size, "kernel_size", ctx)
        ctx.expect(attrs.channels % groups == 0,
                   f"channels={attrs.channels} must be a multiple of groups={groups}")
        # "I" names the data's channels, "O" the output channels of one group (IOHW).
        oihw = {"I": in_ch, "O": attrs.channels // groups, "H": kernel_size[0],
                "W": kernel_size[1]}
        ctx.assign(1, TensorType(tuple(oihw[c] for c in attrs.kernel_layout), data.dtype))
    weight = ctx.tensor(1, "weight")
    ctx.expect(weight.ndim == 4, f"conv2d_transpose expects a 4-D weight, got {weight.shape}")
    w_in, w_out = weight.shape[klay["I"]], weight.shape[klay["O"]]
    kernel = (weight.shape[klay["H"]], weight.shape[klay["W"]])
    ctx.expect(w_in == in_ch,
               f"input channels differ: data has {in_ch} (shape {data.shape}) but the weight "
               f"has {w_in} (shape {weight.shape}, layout {attrs.kernel_layout})")
    out_ch = w_out * groups
    if attrs.channels is not None:
        ctx.expect(attrs.channels == out_ch,
                   f"channels={attrs.channels} but the weight gives {out_ch} output channels")
    if attrs.kernel_size is not None:
        ctx.expect(tuple(attrs.kernel_size) == kernel,
                   f"kernel_size={tuple(attrs.kernel_size)} but the weight's kernel is {kernel}")
    out_hw = []
    for size, k, d, s, p, pad in ((data.shape[dlay["H"]], kernel[0], dilation[0], strides[0],
                                   out_pad[0], top + bottom),
                                  (data.shape[dlay["W"]], kernel[1], dilation[1], strides[1],
                                   out_pad[1], left + right)):
        out = (size - 1) * s + (k - 1) * d + 1 + p - pad
        ctx.expect(out >= 1, f"the padding {attrs.padding} leaves an empty output")
        out_hw.append(out)
    nchw = {"N": batch, "C": out_ch, "H": out_hw[0], "W": out_hw[1]}
    return TensorType(tuple(nchw[c] for c in out_layout), attrs.out_dtype or data.dtype)


def conv2d_transpose_nchw(data, weight, strides, padding, output_padding, dilation, groups):
    """Transposed convolution of NCHW ``data`` with an IOHW ``weight``: every input pixel
    scatters its kernel-weighted values onto the (strided, dilated) output grid."""
    batch, in_ch, height, width = data.shape
    _, group_out, kh, kw = weight.shape
    group_in = in_ch // groups
    (sh, sw), (dh, dw) = strides, dilation
    full_h = (height - 1) * sh + (kh - 1) * dh + 1 + output_padding[0]
    full_w = (width - 1) * sw + (kw - 1) * dw + 1 + output_padding[1]
    full = np.zeros((batch, groups, group_out, full_h, full_w), dtype=data.dtype)
    x = data.reshape(batch, groups, group_in, height, width)
    w = weight.reshape(groups, group_in, group_out, kh, kw)
    for a in range(kh):
        for b in range(kw):
            # (N, G, Cin/G, H, W) x (G, Cin/G, Cout/G) -> (N, G, Cout/G, H, W)
            tap = np.einsum("ngchw,gco->ngohw", x, w[:, :, :, a, b])
            full[:, :, :, a * dh:a * dh + (height - 1) * sh + 1:sh,
                 b * dw:b * dw + (width - 1) * sw + 1:sw] += tap
    top, left, bottom, right = padding
    out = full[:, :, :, top:full_h - bottom, left:full_w - right]
    return out.reshape(batch, groups * group_out, out.shape[3], out.shape[4])


def _conv2d_transpose_reference(inputs, attrs, out_type):
    data, weight = inputs
    acc = acc_dtype(to_numpy_dtype(out_type.dtype))
    x = data.transpose([attrs.data_layout.index(c) for c in "NCHW"]).astype(acc)
    w = weight.transpose([attrs.kernel_layout.index(c) for c in "IOHW"]).astype(acc)
    pad = tuple(attrs.padding)
    pad = pad * 4 if len(pad) == 1 else (pad + pad if len(pad) == 2 else pad)
    out = conv2d_transpose_nchw(x, w, attrs.strides, pad, attrs.output_padding, attrs.dilation,
                                attrs.groups)
    out_layout = attrs.out_layout or attrs.data_layout
    return out_array(out.transpose(["NCHW".index(c) for c in out_layout]), out_type)


register_op("nn.conv2d_transpose", num_inputs=2,
            arguments=[("data", "Tensor", "The input tensor."),
                       ("weight", "Tensor", "The weight tensor.")],
            attrs_type=Conv2DTransposeAttrs, type_rel=_conv2d_transpose_rel,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, reference=_conv2d_transpose_reference,
            support_level=2, description="Transposed 2-D convolution (deconvolution).",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)


def conv2d_transpose(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                     channels=None, kernel_size=None, data_layout="NCHW", kernel_layout="IOHW",
                     out_layout="", output_padding=(0, 0), out_dtype=""):
    """Transposed 2-D convolution; padding becomes (top, left, bottom, right) and is removed
    from the full output, output_padding adds rows/columns at the bottom/right."""
    attrs = Conv2DTransposeAttrs(
        channels=None if channels is None else int(channels),
        kernel_size=int_pair(kernel_size, "kernel_size"), strides=int_pair(strides, "strides"),
        padding=get_pad_tuple2d(padding),
        output_padding=int_pair(output_padding, "output_padding"),
        dilation=int_pair(dilation, "dilation"), groups=int(groups),
        data_layout=str(data_layout), kernel_layout=str(kernel_layout),
        out_layout=str(out_layout or ""), out_dtype=dtype_or_empty(out_dtype))
    return make_call("nn.conv2d_transpose", [data, weight], attrs)


__all__ = ["Conv2DTransposeAttrs", "conv2d_transpose"]


# ---------------------------------------------------------------------------------------------
# TE computes and strategies (irlab/relay/op/strategy/conv.py)
def _register_computes():
    from irlab.relay.op.strategy.conv import register_conv_transpose

    register_conv_transpose()


_register_computes()
