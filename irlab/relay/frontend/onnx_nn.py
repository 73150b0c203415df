"""ONNX converters for neural-network layers: convolutions, pooling, normalizations, dropout
and resizing. 1-D convolutions and pools run as 2-D ones over a unit height."""

from __future__ import annotations

import math

import numpy as np

from irlab import relay
from irlab.relay.frontend.onnx_common import converter


# ---------------------------------------------------------------------------------------------
# window geometry shared by Conv, ConvTranspose and the pools
def window_geometry(node, kernel):
    """(strides, dilations) of a windowed op with the kernel's number of spatial axes."""
    spatial = len(kernel)
    strides = list(node.attr("strides") or [1] * spatial)
    dilations = list(node.attr("dilations") or [1] * spatial)
    node.expect(len(strides) == spatial and len(dilations) == spatial,
                f"strides {strides} and dilations {dilations} need {spatial} values")
    return strides, dilations


def explicit_pads(node, sizes, kernel, strides, dilations):
    """ONNX pads [begin..., end...] with auto_pad resolved against the static input sizes."""
    spatial = len(kernel)
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for size, k, s, d in zip(sizes, kernel, strides, dilations):
            total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
            small, large = total // 2, total - total // 2
            # SAME_UPPER puts the odd cell at the end, SAME_LOWER at the beginning.
            begin.append(small if auto_pad == "SAME_UPPER" else large)
            end.append(large if auto_pad == "SAME_UPPER" else small)
        return begin + end
    if auto_pad == "VALID":
        return [0] * (2 * spatial)
    node.expect(auto_pad == "NOTSET", f"unknown auto_pad {auto_pad!r}")
    pads = list(node.attr("pads") or [0] * (2 * spatial))
    node.expect(len(pads) == 2 * spatial, f"pads {pads} need {2 * spatial} values")
    return pads


def _as_2d(node, spatial, x, *rest):
    """1-D windows run as 2-D ones on a unit height: add that axis to x (and weights)."""
    node.expect(spatial in (1, 2), f"{spatial}-D windows are not supported (1-D and 2-D are)")
    if spatial == 2:
        return (x, *rest)
    return tuple(None if t is None else relay.expand_dims(t, 2) for t in (x, *rest))


def _lift(values, fill):
    """A 1-D window parameter as the 2-D one (unit height first)."""
    return [fill] + list(values)


def _padding(pads):
    """ONNX [begin..., end...] over 2 axes as Relay's (top, left, bottom, right)."""
    return (pads[0], pads[1], pads[2], pads[3])


# ---------------------------------------------------------------------------------------------
# convolutions
@converter("Conv", 1)
def _conv(node):
    x, weight, bias = node.input(0), node.input(1), node.input(2)
    w_shape = node.shape(1)
    kernel = list(node.attr("kernel_shape") or w_shape[2:])
    strides, dilations = window_geometry(node, kernel)
    pads = explicit_pads(node, node.shape(0)[2:], kernel, strides, dilations)
    spatial = len(kernel)
    x, weight = _as_2d(node, spatial, x, weight)
    if spatial == 1:
        kernel, strides, dilations = _lift(kernel, 1), _lift(strides, 1), _lift(dilations, 1)
        pads = [0, pads[0], 0, pads[1]]
    out = relay.nn.conv2d(x, weight, strides=strides, padding=_padding(pads),
                          dilation=dilations, groups=node.attr("group", 1),
                          channels=w_shape[0], kernel_size=kernel)
    if spatial == 1:
        out = relay.squeeze(out, [2])
    return out if bias is None else relay.nn.bias_add(out, bias)


@converter("ConvTranspose", 1)
def _conv_transpose(node):
    x, weight, bias = node.input(0), node.input(1), node.input(2)
    in_sizes, w_shape = node.shape(0)[2:], node.shape(1)
    kernel = list(node.attr("kernel_shape") or w_shape[2:])
    strides, dilations = window_geometry(node, kernel)
    spatial, groups = len(kernel), node.attr("group", 1)
    out_pad = list(node.attr("output_padding") or [0] * spatial)
    output_shape = node.attr("output_shape")
    auto_pad = node.attr("auto_pad", "NOTSET")
    if output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        # The padding that makes the requested output size (ONNX's formula); SAME asks for
        # input size * stride.
        target = list(output_shape)[-spatial:] if output_shape is not None else \
            [size * s for size, s in zip(in_sizes, strides)]
        begin, end = [], []
        for size, k, s, d, extra, want in zip(in_sizes, kernel, strides, dilations, out_pad,
                                              target):
            total = s * (size - 1) + extra + (k - 1) * d + 1 - want
            if total < 0:  # a larger output than the natural one: zeros at the end
                out_pad[len(begin)] += -total
                total = 0
            small, large = total // 2, total - total // 2
            if auto_pad == "SAME_UPPER":
                begin.append(small), end.append(large)
            else:
                begin.append(large), end.append(small)
        pads = begin + end
    else:
        pads = explicit_pads(node, in_sizes, kernel, strides, dilations)
    node.expect(min(pads) >= 0, f"the requested output shape {output_shape} needs negative "
                                f"padding {pads}")
    x, weight = _as_2d(node, spatial, x, weight)
    if spatial == 1:
        kernel, strides, dilations = _lift(kernel, 1), _lift(strides, 1), _lift(dilations, 1)
        out_pad, pads = _lift(out_pad, 0), [0, pads[0], 0, pads[1]]
    out = relay.nn.conv2d_transpose(x, weight, strides=strides, padding=_padding(pads),
                                    dilation=dilations, groups=groups,
                                    channels=w_shape[1] * groups, kernel_size=kernel,
                                    output_padding=out_pad)
    if spatial == 1:
        out = relay.squeeze(out, [2])
    return out if bias is None else relay.nn.bias_add(out, bias)


# ---------------------------------------------------------------------------------------------
# pooling
def _pool(kind):
    def convert(node):
        x = node.input(0)
        sizes = node.shape(0)[2:]
        kernel = list(node.attr("kernel_shape"))
        strides, dilations = window_geometry(node, kernel)
        pads = explicit_pads(node, sizes, kernel, strides, dilations)
        ceil_mode = bool(node.attr("ceil_mode", 0))
        if ceil_mode:
            ceil_mode = _keeps_last_window(sizes, kernel, strides, dilations, pads)
        spatial = len(kernel)
        (x,) = _as_2d(node, spatial, x)
        if spatial == 1:
            kernel, strides, dilations = _lift(kernel, 1), _lift(strides, 1), _lift(dilations, 1)
            pads = [0, pads[0], 0, pads[1]]
        common = dict(pool_size=kernel, strides=strides, dilation=dilations,
                      padding=_padding(pads), ceil_mode=ceil_mode)
        if kind == "max":
            node.expect(not node.output_used(1), "the Indices output is not supported")
            out = relay.nn.max_pool2d(x, **common)
        else:
            out = relay.nn.avg_pool2d(x, count_include_pad=bool(node.attr("count_include_pad",
                                                                          0)), **common)
        return relay.squeeze(out, [2]) if spatial == 1 else out
    return convert


def _keeps_last_window(sizes, kernel, strides, dilations, pads):
    """ceil_mode, unless it would add a last window that starts in the end padding: ONNX drops
    such a window, so plain floor mode gives its output size."""
    spatial = len(kernel)
    for i, (size, k, s, d) in enumerate(zip(sizes, kernel, strides, dilations)):
        padded = size + pads[i] + pads[i + spatial]
        count = -(-(padded - (k - 1) * d - 1) // s) + 1
        if (count - 1) * s >= size + pads[i]:
            return False
    return True


converter("MaxPool", 1)(_pool("max"))
converter("AveragePool", 1)(_pool("avg"))


def _global_pool(kind):
    def convert(node):
        x, rank = node.input(0), node.ndim(0)
        if rank == 4:
            op = relay.nn.global_max_pool2d if kind == "max" else relay.nn.global_avg_pool2d
            return op(x)
        op = relay.max if kind == "max" else relay.mean
        return op(x, axis=list(range(2, rank)), keepdims=True)
    return convert


converter("GlobalMaxPool", 1)(_global_pool("max"))
converter("GlobalAveragePool", 1)(_global_pool("avg"))


# ---------------------------------------------------------------------------------------------
# normalizations
@converter("BatchNormalization", 1)
def _batch_norm(node):
    node.expect(not node.attr("training_mode", 0),
                "training mode (normalizing with the batch's statistics) is not supported")
    for i in range(1, node.num_outputs):
        node.expect(not node.output_used(i), f"output {i} (training statistics) is not "
                                             f"supported")
    x, scale, bias, mean, var = (node.input(i) for i in range(5))
    return relay.nn.batch_norm(x, scale, bias, mean, var, axis=1,
                               epsilon=node.attr("epsilon", 1e-5))[0]


@converter("InstanceNormalization", 1)
def _instance_norm(node):
    return relay.nn.instance_norm(node.input(0), node.input(1), node.input(2), axis=1,
                                  epsilon=node.attr("epsilon", 1e-5))


@converter("LRN", 1)
def _lrn(node):
    return relay.nn.lrn(node.input(0), size=node.attr("size"), axis=1,
                        bias=node.attr("bias", 1.0), alpha=node.attr("alpha", 1e-4),
                        beta=node.attr("beta", 0.75))


@converter("LayerNormalization", 17)
def _layer_norm(node):
    x, scale, bias = node.input(0), node.input(1), node.input(2)
    shape = node.shape(0)
    rank = len(shape)
    axis = node.attr("axis", -1)
    axis = axis + rank if axis < 0 else axis
    eps = node.attr("epsilon", 1e-5)
    last = (shape[-1],)
    simple = (axis == rank - 1 and node.shape(1) == last
              and (bias is None or node.shape(2) == last)
              and not node.output_used(1) and not node.output_used(2))
    if simple:  # Relay's own layer_norm: one node, as TVM emits
        beta = bias if bias is not None else node.const(np.zeros(last))
        return relay.nn.layer_norm(x, scale, beta, axis=-1, epsilon=eps,
                                   center=bias is not None)
    # Several axes or statistics outputs: spell out mean, variance and the inverse deviation.
    axes = list(range(axis, rank))
    mean = relay.mean(x, axes, keepdims=True)
    centered = relay.subtract(x, mean)
    var = relay.mean(relay.multiply(centered, centered), axes, keepdims=True)
    inv_std = relay.rsqrt(relay.add(var, node.const(eps)))
    out = relay.multiply(relay.multiply(centered, inv_std), scale)
    if bias is not None:
        out = relay.add(out, bias)
    return [out, mean, inv_std]


# ---------------------------------------------------------------------------------------------
# dropout (inference: identity)
def _dropout(node, ratio, training):
    node.expect(not training or ratio == 0,
                "training mode (random dropping) is not supported; set training_mode=False")
    x = node.input(0)
    out = relay.nn.dropout(x, rate=float(ratio))
    mask = relay.ones(node.shape(0), "bool") if node.output_used(1) else None
    return [out, mask]


converter("Dropout", 1)(lambda node: _dropout(node, node.attr("ratio", 0.5),
                                              not node.attr("is_test", 1)
                                              if node.opset < 7 else False))


@converter("Dropout", 12)
def _dropout_v12(node):
    ratio = node.value_or(1, np.asarray(0.5))
    training = node.value_or(2, np.asarray(False))
    return _dropout(node, float(np.asarray(ratio).reshape(())), bool(training))


# ---------------------------------------------------------------------------------------------
# resizing
_RESIZE_METHODS = {"nearest": "nearest_neighbor", "linear": "linear", "bilinear": "linear",
                   "cubic": "cubic"}


def _resize(node, out_shape, coordinate_mode, rounding, roi=None):
    shape = node.shape(0)
    node.expect(len(shape) == 4 and tuple(out_shape[:2]) == tuple(shape[:2]),
                f"only the last two axes of a 4-D NCHW tensor can be resized (input {shape}, "
                f"output {tuple(out_shape)})")
    mode = node.attr("mode", "nearest")
    node.expect(mode in _RESIZE_METHODS, f"unknown mode {mode!r}")
    node.expect(not node.attr("antialias", 0), "antialias is not supported")
    node.expect(coordinate_mode != "half_pixel_symmetric",
                "coordinate_transformation_mode 'half_pixel_symmetric' is not supported")
    method = _RESIZE_METHODS[mode]
    return relay.image.resize2d(
        node.input(0), out_shape[2:], roi=roi, layout="NCHW", method=method,
        coordinate_transformation_mode=coordinate_mode,
        rounding_method=rounding if method == "nearest_neighbor" else "",
        cubic_alpha=node.attr("cubic_coeff_a", -0.75),
        cubic_exclude=node.attr("exclude_outside", 0),
        extrapolation_value=node.attr("extrapolation_value", 0.0))


def _scaled(shape, scales):
    return [int(math.floor(d * s)) for d, s in zip(shape, scales)]


@converter("Upsample", 7)
def _upsample(node):
    scales = node.attr("scales") if node.opset < 9 else node.value(1, "scales")
    out_shape = _scaled(node.shape(0), np.asarray(scales).reshape(-1))
    return _resize(node, out_shape, "asymmetric", "floor")


@converter("Resize", 10)
def _resize_v10(node):
    out_shape = _scaled(node.shape(0), node.value(1, "scales").reshape(-1))
    return _resize(node, out_shape, "asymmetric", "floor")


@converter("Resize", 11)
def _resize_v11(node):
    shape = node.shape(0)
    rank = len(shape)
    axes = [a + rank if a < 0 else a for a in (node.attr("axes") or range(rank))]
    mode = node.attr("coordinate_transformation_mode", "half_pixel")
    scales, sizes = node.value_or(2, None), node.value_or(3, None)
    roi = node.value_or(1, None) if mode == "tf_crop_and_resize" else None
    out_shape = list(shape)
    if sizes is not None and sizes.size:
        sizes = [int(v) for v in sizes.reshape(-1)]
        policy = node.attr("keep_aspect_ratio_policy", "stretch")
        if policy != "stretch":
            pick = min if policy == "not_larger" else max
            scale = pick(s / shape[a] for a, s in zip(axes, sizes))
            sizes = [int(math.floor(shape[a] * scale + 0.5)) for a in axes]
        for a, s in zip(axes, sizes):
            out_shape[a] = s
    else:
        node.expect(scales is not None and scales.size, "needs scales or sizes")
        for a, s in zip(axes, scales.reshape(-1)):
            out_shape[a] = int(math.floor(shape[a] * s))
    box = None
    if mode == "tf_crop_and_resize":
        node.expect(roi is not None, "tf_crop_and_resize needs a static roi")
        starts, ends = [0.0] * rank, [1.0] * rank
        half = len(roi) // 2
        for i, a in enumerate(axes):
            starts[a], ends[a] = float(roi[i]), float(roi[i + half])
        box = (starts[2], starts[3], ends[2], ends[3])
    return _resize(node, out_shape, mode, node.attr("nearest_mode", "round_prefer_floor"), box)
