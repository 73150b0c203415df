"""``tvm.topi.testing``: numpy reference implementations of TOPI operators, with TVM's names and
argument conventions, for tests that check a compiled or transformed op against numpy."""

from __future__ import annotations

import numpy as np


def softmax_python(a_np, axis=-1):
    """Softmax along ``axis`` (the last by default), computed stably."""
    shifted = a_np - np.max(a_np, axis=axis, keepdims=True)
    exp = np.exp(shifted)
    return exp / np.sum(exp, axis=axis, keepdims=True)


def log_softmax_python(a_np, axis=-1):
    """Log-softmax along ``axis`` (the last by default)."""
    shifted = a_np - np.max(a_np, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _pad_tuple(padding, kernel):
    """(top, left, bottom, right) of an int, (h, w), (t, l, b, r), "SAME" or "VALID"."""
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return 0, 0, 0, 0
        if padding.upper() == "SAME":
            pad_h, pad_w = kernel[0] - 1, kernel[1] - 1
            return pad_h - pad_h // 2, pad_w - pad_w // 2, pad_h // 2, pad_w // 2
        raise ValueError(f"unknown padding {padding!r}")
    if isinstance(padding, int):
        return (padding,) * 4
    padding = tuple(padding)
    if len(padding) == 2:
        return padding + padding
    if len(padding) == 4:
        return padding
    raise ValueError(f"padding takes 1, 2 or 4 values, got {padding!r}")


def conv2d_nchw_python(a_np, w_np, stride, padding, groups=1):
    """Grouped 2-D convolution, data NCHW and kernel OIHW (``O`` = all groups' filters)."""
    stride_h, stride_w = (stride, stride) if isinstance(stride, int) else stride
    top, left, bottom, right = _pad_tuple(padding, w_np.shape[2:])
    data = np.pad(a_np, ((0, 0), (0, 0), (top, bottom), (left, right)))
    batch, channels, height, width = data.shape
    filters, group_channels, kernel_h, kernel_w = w_np.shape
    out_h = (height - kernel_h) // stride_h + 1
    out_w = (width - kernel_w) // stride_w + 1
    out = np.zeros((batch, filters, out_h, out_w), dtype=a_np.dtype)
    per_group = filters // groups
    for f in range(filters):
        first = (f // per_group) * group_channels
        for dy in range(kernel_h):
            for dx in range(kernel_w):
                window = data[:, first:first + group_channels,
                              dy:dy + stride_h * out_h:stride_h, dx:dx + stride_w * out_w:stride_w]
                out[:, f] += np.einsum("nchw,c->nhw", window, w_np[f, :, dy, dx])
    return out


def conv2d_nhwc_python(a_np, w_np, stride, padding, groups=1):
    """Grouped 2-D convolution, data NHWC and kernel HWIO."""
    a_nchw = a_np.transpose(0, 3, 1, 2)
    w_oihw = w_np.transpose(3, 2, 0, 1)
    return conv2d_nchw_python(a_nchw, w_oihw, stride, padding, groups).transpose(0, 2, 3, 1)


def dense(x, y, bias, use_bias=False, use_relu=False, out_dtype=None):
    """``x @ y.T`` (+ ``bias``, then ReLU if asked), in ``out_dtype`` (``x``'s by default)."""
    dtype = x.dtype if out_dtype is None else out_dtype
    out = np.dot(x.astype(dtype), y.T.astype(dtype))
    if use_bias:
        out = out + bias.astype(dtype)
    if use_relu:
        out = np.maximum(out, 0)
    return out.astype(dtype)


def batch_matmul(x, y, out_dtype=None, trans_x=False, trans_y=True):
    """Batched matrix product (``y`` transposed by default, as ``nn.batch_matmul``); a batch of
    1 on either side broadcasts."""
    dtype = x.dtype if out_dtype is None else out_dtype
    lhs = np.swapaxes(x, 1, 2) if trans_x else x
    rhs = np.swapaxes(y, 1, 2) if trans_y else y
    return np.matmul(lhs.astype(dtype), rhs.astype(dtype)).astype(dtype)


def layer_norm_python(data, gamma, beta, axis, epsilon=1e-5):
    """Layer normalization over ``axis`` (int or tuple), scaled by ``gamma`` and shifted by
    ``beta``."""
    mean = np.mean(data, axis, keepdims=True)
    var = np.var(data, axis, keepdims=True)
    return (data - mean) / np.sqrt(var + epsilon) * gamma + beta
