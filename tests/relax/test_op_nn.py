"""nn.conv2d, pooling, batch_norm, layer_norm: struct info (static and symbolic batch) and
legalized numerics against numpy."""

import numpy as np
import pytest

from irlab import relax
from irlab.errors import DiagnosticError
from irlab.topi.testing import conv2d_nchw_python
from op_testing import check_batches, check_numeric, dims_of, out_sinfo, rand, sym, tensor

R = relax.op


def test_conv2d_struct_info():
    n = sym("n")
    s = out_sinfo(lambda x, w: R.nn.conv2d(x, w, strides=2, padding=1),
                  [tensor([n, 3, 9, 9]), tensor([8, 3, 3, 3])])
    assert dims_of(s) == [n, 8, 5, 5]
    s = out_sinfo(lambda x, w: R.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="HWIO"),
                  [tensor([n, 7, 7, 4]), tensor([3, 3, 4, 6])])
    assert dims_of(s) == [n, 5, 5, 6]
    with pytest.raises(DiagnosticError, match="input channels"):
        out_sinfo(R.nn.conv2d, [tensor([1, 3, 5, 5]), tensor([8, 4, 3, 3])])


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("stride, padding, groups", [(1, 0, 1), (2, 1, 1), (1, 1, 2)])
def test_conv2d_numeric(batch, stride, padding, groups):
    n = sym("n")
    x = rand((batch, 4, 7, 7), seed=1)
    w = rand((6, 4 // groups, 3, 3), seed=2)
    ref = conv2d_nchw_python(x, w, stride, padding, groups)
    check_numeric(lambda a, b: R.nn.conv2d(a, b, stride, padding, groups=groups),
                  [tensor([n, 4, 7, 7]), tensor(list(w.shape))], [x, w], ref,
                  rtol=1e-4, atol=1e-4)


def _pool_ref(x, k, s, p, kind):
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=np.nan)
    oh = (x.shape[2] + 2 * p - k) // s + 1
    ow = (x.shape[3] + 2 * p - k) // s + 1
    out = np.zeros(x.shape[:2] + (oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s:i * s + k, j * s:j * s + k]
            out[:, :, i, j] = np.nanmax(win, axis=(2, 3)) if kind == "max" \
                else np.nanmean(win, axis=(2, 3))
    return out


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("batch", [1, 3])
def test_pool2d(kind, batch):
    n = sym("n")
    make = R.nn.max_pool2d if kind == "max" else R.nn.avg_pool2d
    s = out_sinfo(lambda v: make(v, 3, 2, 1), [tensor([n, 2, 8, 8])])
    assert dims_of(s) == [n, 2, 4, 4]
    x = rand((batch, 2, 8, 8), seed=3)
    check_numeric(lambda v: make(v, 3, 2, 1), [tensor([n, 2, 8, 8])], [x],
                  _pool_ref(x, 3, 2, 1, kind))


def test_adaptive_avg_pool2d():
    n = sym("n")
    s = out_sinfo(lambda v: R.nn.adaptive_avg_pool2d(v, 1), [tensor([n, 3, 6, 6])])
    assert dims_of(s) == [n, 3, 1, 1]
    def arrays(b):
        return [rand((b, 3, 6, 6), seed=4)]

    check_batches(lambda v: R.nn.adaptive_avg_pool2d(v, (1, 1)), [tensor([n, 3, 6, 6])],
                  arrays, lambda x: x.mean(axis=(2, 3), keepdims=True))
    check_batches(lambda v: R.nn.adaptive_avg_pool2d(v, 2), [tensor([n, 3, 6, 6])], arrays,
                  lambda x: x.reshape(len(x), 3, 2, 3, 2, 3).mean(axis=(3, 5)))


def test_batch_norm():
    n = sym("n")
    params = [tensor([3])] * 4
    s = out_sinfo(R.nn.batch_norm, [tensor([n, 3, 4, 4])] + params)
    assert isinstance(s, relax.TupleStructInfo) and dims_of(s.fields[0]) == [n, 3, 4, 4]
    with pytest.raises(DiagnosticError, match="gamma"):
        out_sinfo(R.nn.batch_norm, [tensor([n, 3, 4, 4]), tensor([4])] + params[:3])
    g, b, m = rand((3,), seed=6), rand((3,), seed=7), rand((3,), seed=8)
    v = np.abs(rand((3,), seed=9)) + 0.5
    c = (slice(None), None, None)
    check_batches(lambda *a: relax.TupleGetItem(R.nn.batch_norm(*a), 0),
                  [tensor([n, 3, 4, 4])] + params,
                  lambda k: [rand((k, 3, 4, 4), seed=5), g, b, m, v],
                  lambda x, *_: (x - m[c]) / np.sqrt(v[c] + 1e-5) * g[c] + b[c],
                  rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("axes", [(-1,), (1, 2)])
def test_layer_norm(axes):
    n = sym("n")
    norm_shape = [(2, 4, 6)[a] for a in sorted(a % 3 for a in axes)]
    g, b = rand(norm_shape, seed=11), rand(norm_shape, seed=12)

    def reference(x, g, b):
        mean = x.mean(axis=tuple(axes), keepdims=True)
        var = x.var(axis=tuple(axes), keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * g + b

    check_batches(lambda a, c, d: R.nn.layer_norm(a, c, d, axes),
                  [tensor([n, 4, 6]), tensor(norm_shape), tensor(norm_shape)],
                  lambda k: [rand((k, 4, 6), seed=10), g, b], reference, rtol=1e-4, atol=1e-4)


def _conv2d_transpose_ref(x, w, stride, pad):
    """Scatter each input pixel times the kernel (IOHW), then crop the padding."""
    n, cin, h, wd = x.shape
    _, cout, kh, kw = w.shape
    full = np.zeros((n, cout, (h - 1) * stride + kh, (wd - 1) * stride + kw), "float32")
    for i in range(h):
        for j in range(wd):
            full[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] += np.einsum(
                "nc,cokl->nokl", x[:, :, i, j], w)
    return full[:, :, pad:full.shape[2] - pad, pad:full.shape[3] - pad]


def test_conv2d_transpose():
    n = sym("n")
    s = out_sinfo(lambda a, b: R.nn.conv2d_transpose(a, b, 2, 1),
                  [tensor([n, 3, 4, 4]), tensor([3, 2, 3, 3])])
    assert dims_of(s) == [n, 2, 7, 7]
    w = rand((3, 2, 3, 3), seed=21)
    check_batches(lambda a, b: R.nn.conv2d_transpose(a, b, 2, 1),
                  [tensor([n, 3, 4, 4]), tensor([3, 2, 3, 3])],
                  lambda k: [rand((k, 3, 4, 4), seed=20), w],
                  lambda a, b: _conv2d_transpose_ref(a, b, 2, 1), rtol=1e-4, atol=1e-4,
                  batches=(1, 2))


def test_resize2d():
    n = sym("n")
    s = out_sinfo(lambda v: R.image.resize2d(v, (8, 6)), [tensor([n, 2, 4, 3])])
    assert dims_of(s) == [n, 2, 8, 6]
    check_batches(lambda v: R.image.resize2d(v, (8, 6), method="nearest_neighbor",
                                             coordinate_transformation_mode="asymmetric",
                                             rounding_method="floor"),
                  [tensor([n, 2, 4, 3])], lambda k: [rand((k, 2, 4, 3), seed=22)],
                  lambda x: x.repeat(2, axis=2).repeat(2, axis=3), batches=(1, 3))

    def align_corners(x):
        def axis(size_in, size_out):
            pos = np.arange(size_out) * (size_in - 1) / (size_out - 1)
            lo = np.floor(pos).astype(int)
            hi = np.minimum(lo + 1, size_in - 1)
            return lo, hi, (pos - lo).astype("float32")

        hl, hh, hf = axis(x.shape[2], 7)
        wl, wh, wf = axis(x.shape[3], 5)
        rows = x[:, :, hl] * (1 - hf)[:, None] + x[:, :, hh] * hf[:, None]
        return rows[..., wl] * (1 - wf) + rows[..., wh] * wf

    check_batches(lambda v: R.image.resize2d(v, (7, 5),
                                             coordinate_transformation_mode="align_corners"),
                  [tensor([n, 2, 4, 3])], lambda k: [rand((k, 2, 4, 3), seed=23)],
                  align_corners, rtol=1e-5, atol=1e-5, batches=(1, 3))
