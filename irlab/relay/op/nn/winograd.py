"""Winograd convolution ops (TVM's ``nn.contrib_conv2d_winograd_weight_transform`` and
``nn.contrib_conv2d_winograd_without_weight_transform``), what AlterOpLayout makes of an x86
3x3 stride-1 conv2d (``alter_op_layout_conv2d_cpu``; the algorithm: ``topi.nn.winograd``).

``nn.contrib_conv2d_winograd_weight_transform(w, tile_size)`` turns an OIHW 3x3 kernel into
``U = G w G^T``, shape ``(m + 2, m + 2, O, I)`` for tile size m; FoldConstant computes it once
for a constant kernel. ``nn.contrib_conv2d_winograd_without_weight_transform(data, U)`` is the
convolution given ``U``. irlab runs it on ``NCHW{x}c`` data with ``U`` blocked as ``(m + 2,
m + 2, O / y, I / x, x, y)`` (kernel layout ``HWOI{x}i{y}o``), giving ``NCHW{y}c`` -- the layout of
its ``nn.contrib_conv2d_NCHWc`` neighbours -- where TVM's x86 build has no Winograd.
"""

from __future__ import annotations

import re

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.attrs import Attrs
from irlab.ir.op import NOT_APPLICABLE, OpPattern, register_op
from irlab.ir.type import TensorType
from irlab.relay.op.nn._utils import acc_dtype, check_pair, dtype_or_empty, get_pad_tuple2d, \
    int_pair, padding4
from irlab.relay.op.op_common import make_call, out_array
from irlab.runtime.dtype import to_numpy_dtype


class ConvWinogradWeightTransformAttrs(Attrs):
    """Attributes of ``nn.contrib_conv2d_winograd_weight_transform`` (TVM's)."""

    _type_key = "relay.attrs.ConvWinogradWeightTransformAttrs"
    tile_size: int = 4


class Conv2DWinogradAttrs(Attrs):
    """Attributes of ``nn.contrib_conv2d_winograd_without_weight_transform`` (TVM's
    ``relay.attrs.Conv2DWinogradAttrs``, fields in its order)."""

    _type_key = "relay.attrs.Conv2DWinogradAttrs"
    tile_size: int = 4
    strides: tuple = (1, 1)
    padding: tuple = (0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    channels: int = None
    kernel_size: tuple = None
    data_layout: str = "NCHW16c"
    kernel_layout: str = "HWOI16i16o"
    out_layout: str = ""
    out_dtype: str = ""


def _matrices(tile_size):
    from irlab.topi.nn.winograd import winograd_matrices

    return [np.array(m, dtype="float64") for m in winograd_matrices(tile_size)]


def _tile_size(ctx, attrs, op):
    from irlab.topi.nn.winograd import TILE_SIZES

    ctx.expect(attrs.tile_size in TILE_SIZES,
               f"{op}: tile_size must be one of {TILE_SIZES}, got {attrs.tile_size!r}")
    return attrs.tile_size


# ---------------------------------------------------------------------------------------------
# nn.contrib_conv2d_winograd_weight_transform
def _weight_transform_rel(ctx):
    op = "contrib_conv2d_winograd_weight_transform"
    m = _tile_size(ctx, ctx.attrs, op)
    weight = ctx.tensor(0, "weight")
    ctx.expect(weight.ndim == 4 and weight.shape[2:] == (3, 3),
               f"{op} takes an OIHW 3x3 kernel, got shape {weight.shape}")
    return TensorType((m + 2, m + 2) + tuple(weight.shape[:2]), weight.dtype)


def _weight_transform_reference(inputs, attrs, out_type):
    _, g, _ = _matrices(attrs.tile_size)
    # one GEMM: U[eps, nu] = sum_ab G[eps, a] G[nu, b] w[a, b], i.e. kron(G, G) @ w.flat
    # (np.einsum of the three operands took 0.45 s for ResNet-18's kernels)
    out_ch, in_ch = inputs[0].shape[:2]
    alpha = g.shape[0]
    flat = inputs[0].reshape(out_ch * in_ch, 9).astype("float64")
    full = (np.kron(g, g) @ flat.T).astype(to_numpy_dtype(out_type.dtype))
    return full.reshape(alpha, alpha, out_ch, in_ch)


register_op("nn.contrib_conv2d_winograd_weight_transform", num_inputs=1,
            arguments=[("weight", "Tensor", "The OIHW 3x3 kernel.")],
            attrs_type=ConvWinogradWeightTransformAttrs, type_rel=_weight_transform_rel,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, reference=_weight_transform_reference,
            support_level=10,
            description="The Winograd transform G w G^T of a 3x3 kernel: (m + 2, m + 2, O, I).",
            ).set_attrs(FInferCorrectLayout=NOT_APPLICABLE)


def contrib_conv2d_winograd_weight_transform(weight, tile_size):
    """``U = G w G^T`` of an OIHW 3x3 kernel for F(tile_size, 3): shape ``(tile_size + 2,
    tile_size + 2, O, I)`` (TVM's ``relay.nn.contrib_conv2d_winograd_weight_transform``)."""
    return make_call("nn.contrib_conv2d_winograd_weight_transform", [weight],
                     ConvWinogradWeightTransformAttrs(tile_size=int(tile_size)))


# ---------------------------------------------------------------------------------------------
# nn.contrib_conv2d_winograd_without_weight_transform
_NCHWC = re.compile(r"^NCHW(\d+)c$")
_KERNEL = re.compile(r"^HWOI(\d+)i(\d+)o$")


def winograd_blocks(attrs) -> tuple:
    """``(x, y)`` of the layouts ``NCHW{x}c`` / ``HWOI{x}i{y}o`` / ``NCHW{y}c``; raises
    IrlabError naming the layout that is not of that form."""
    op = "contrib_conv2d_winograd_without_weight_transform"
    data = _NCHWC.match(attrs.data_layout)
    out = _NCHWC.match(attrs.out_layout or attrs.data_layout)
    kernel = _KERNEL.match(attrs.kernel_layout)
    for match, what, value, form in ((data, "data_layout", attrs.data_layout, "NCHW16c"),
                                     (out, "out_layout", attrs.out_layout, "NCHW16c"),
                                     (kernel, "kernel_layout", attrs.kernel_layout,
                                      "HWOI16i16o")):
        if match is None:
            raise IrlabError(f"{op}: {what} {value!r} is not of the form {form} (irlab runs "
                             f"Winograd on channel-blocked layouts)")
    x, y = int(data.group(1)), int(out.group(1))
    if (int(kernel.group(1)), int(kernel.group(2))) != (x, y):
        out_layout = attrs.out_layout or attrs.data_layout
        raise IrlabError(f"{op}: kernel_layout {attrs.kernel_layout} does not match data_layout "
                         f"{attrs.data_layout} and out_layout {out_layout} (expected "
                         f"HWOI{x}i{y}o)")
    return x, y


def _winograd_rel(ctx):
    op = "contrib_conv2d_winograd_without_weight_transform"
    attrs = ctx.attrs
    try:
        x, y = winograd_blocks(attrs)
    except IrlabError as err:
        ctx.fail(str(err))
    m = _tile_size(ctx, attrs, op)
    data = ctx.tensor(0, "data")
    weight = ctx.tensor(1, "weight")
    ctx.expect(attrs.groups == 1, f"{op} has one group, got groups={attrs.groups}")
    ctx.expect(check_pair(attrs.strides, "strides", ctx) == (1, 1)
               and check_pair(attrs.dilation, "dilation", ctx) == (1, 1),
               f"{op} is a stride-1, dilation-1 convolution, got strides={attrs.strides} "
               f"dilation={attrs.dilation}")
    ctx.expect(data.ndim == 5 and data.shape[4] == x,
               f"{op} expects 5-D data (N, C/{x}, H, W, {x}) for data_layout "
               f"{attrs.data_layout}, got shape {data.shape}")
    alpha = m + 2
    ctx.expect(weight.ndim == 6 and weight.shape[:2] == (alpha, alpha)
               and weight.shape[4:] == (x, y),
               f"{op} expects the transformed kernel ({alpha}, {alpha}, O/{y}, C/{x}, {x}, {y}) "
               f"of F({m}, 3) for kernel_layout {attrs.kernel_layout}, got shape {weight.shape}")
    ctx.expect(weight.shape[3] == data.shape[1],
               f"input channels differ: data {data.shape} has {data.shape[1] * x} but the kernel "
               f"{weight.shape} expects {weight.shape[3] * x}")
    top, left, bottom, right = padding4(attrs.padding, ctx)
    out_h, out_w = data.shape[2] + top + bottom - 2, data.shape[3] + left + right - 2
    ctx.expect(out_h >= 1 and out_w >= 1,
               f"{op}: the padded input {out_h + 2}x{out_w + 2} is smaller than the 3x3 kernel")
    return TensorType((data.shape[0], weight.shape[2], out_h, out_w, y),
                      attrs.out_dtype or data.dtype)


def _winograd_reference(inputs, attrs, out_type):
    """The same algorithm in float64 numpy: tiles of the zero-padded input, ``V = B^T d B``,
    ``M = sum_c V U``, ``Y = A^T M A``, cropped to the output."""
    data, u = inputs
    bt, _, at = _matrices(attrs.tile_size)
    m = attrs.tile_size
    alpha = m + 2
    top, left, bottom, right = get_pad_tuple2d(attrs.padding)
    n, c_chunks, h, w, x = data.shape
    out_h, out_w = h + top + bottom - 2, w + left + right - 2
    tiles_h, tiles_w = -(-out_h // m), -(-out_w // m)
    acc = acc_dtype(to_numpy_dtype(out_type.dtype))
    padded = np.zeros((n, c_chunks, tiles_h * m + 2, tiles_w * m + 2, x), dtype="float64")
    rows, cols = min(h, tiles_h * m + 2 - top), min(w, tiles_w * m + 2 - left)
    padded[:, :, top:top + rows, left:left + cols] = data[:, :, :rows, :cols]
    d = np.empty((n, c_chunks, tiles_h, tiles_w, alpha, alpha, x), dtype="float64")
    for a in range(alpha):
        for b in range(alpha):
            d[:, :, :, :, a, b] = padded[:, :, a:a + tiles_h * m:m, b:b + tiles_w * m:m]
    v = np.einsum("ea,nctsabx,fb->efntscx", bt, d, bt).reshape(
        alpha, alpha, n, tiles_h, tiles_w, c_chunks * x)
    kernel = u.astype("float64").transpose(0, 1, 3, 4, 2, 5).reshape(
        alpha, alpha, c_chunks * x, -1, u.shape[5])
    mm = np.einsum("efntsc,efcky->efntsky", v, kernel)
    y = np.einsum("ie,efntsky,jf->nktisjy", at, mm, at).reshape(
        n, kernel.shape[3], tiles_h * m, tiles_w * m, u.shape[5])
    return out_array(y[:, :, :out_h, :out_w].astype(acc), out_type)


def _winograd_layout(attrs, new_in, old_in, types):
    """FInferCorrectLayout: the data and output in the attrs' blocked layouts; the kernel as it
    comes (it is the transformed constant AlterOpLayout made, whose layout is its own)."""
    given = (new_in or old_in or [None, None])[1]
    return ([attrs.data_layout, given or attrs.kernel_layout],
            [attrs.out_layout or attrs.data_layout], attrs)


register_op("nn.contrib_conv2d_winograd_without_weight_transform", num_inputs=2,
            arguments=[("data", "Tensor", "The input tensor, NCHW{x}c."),
                       ("weight", "Tensor", "The transformed kernel, HWOI{x}i{y}o.")],
            attrs_type=Conv2DWinogradAttrs, type_rel=_winograd_rel,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, reference=_winograd_reference,
            support_level=10,
            description="3x3 stride-1 conv2d by Winograd F(m, 3) given the transformed kernel "
                        "(NCHW{x}c data, HWOI{x}i{y}o kernel, NCHW{y}c output), as "
                        "AlterOpLayout makes x86 3x3 convolutions.",
            ).set_attrs(FInferCorrectLayout=_winograd_layout)


def contrib_conv2d_winograd_without_weight_transform(
        data, weight, tile_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
        channels=None, kernel_size=None, data_layout="NCHW16c", kernel_layout="HWOI16i16o",
        out_layout="", out_dtype=""):
    """3x3 stride-1 conv2d by Winograd F(tile_size, 3) with an already transformed kernel
    (TVM's ``relay.nn.contrib_conv2d_winograd_without_weight_transform``; irlab takes
    ``NCHW{x}c`` data and the blocked kernel ``HWOI{x}i{y}o``)."""
    return make_call("nn.contrib_conv2d_winograd_without_weight_transform", [data, weight],
                     Conv2DWinogradAttrs(
                         tile_size=int(tile_size), strides=int_pair(strides, "strides"),
                         padding=get_pad_tuple2d(padding),
                         dilation=int_pair(dilation, "dilation"), groups=int(groups),
                         channels=None if channels is None else int(channels),
                         kernel_size=None if kernel_size is None else int_pair(kernel_size,
                                                                               "kernel_size"),
                         data_layout=str(data_layout), kernel_layout=str(kernel_layout),
                         out_layout=str(out_layout or ""), out_dtype=dtype_or_empty(out_dtype)))


# ---------------------------------------------------------------------------------------------
# TE computes and strategies (irlab/relay/op/strategy/conv.py)
def _register_computes():
    from irlab.relay.op.strategy.conv import register_winograd

    register_winograd()


_register_computes()

__all__ = ["ConvWinogradWeightTransformAttrs", "Conv2DWinogradAttrs", "winograd_blocks",
           "contrib_conv2d_winograd_weight_transform",
           "contrib_conv2d_winograd_without_weight_transform"]
