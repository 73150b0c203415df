"""2-D pooling and local response normalization in TE (TVM's ``topi.nn.pool2d``,
``global_pool``, ``adaptive_pool``, ``lrn``).

Pooling works over the H and W axes of any layout (NCHW, NHWC, NCHW16c...); the other axes pass
through. Max pooling pads with the lowest finite value (``pad_temp``; TVM's ``min_value``, and
the op's reference: a window wholly in the padding gives it, not -inf), or with the nearest
border cell, the same maxima, when every window holds an input cell and its taps are
contiguous. Average pooling pads with zeros and divides by the number of counted taps (a
closed form of the window's position, so the divisor costs no reduction): with
``count_include_pad`` the taps inside the explicitly padded input, without it the taps inside
the input; ceil_mode's extra cells never count.
"""

from __future__ import annotations

from irlab import te
from irlab.runtime.dtype import parse_dtype
from irlab.tir import op as O
from irlab.topi.nn.conv2d import pad4, pad_nd
from irlab.topi.utils import dims


def _spatial(layout):
    dims = [c for c in layout if c.isalpha()]
    return dims.index("H"), dims.index("W")


def _is_float(dtype):
    return parse_dtype(dtype).code in ("float", "bfloat") or str(dtype).startswith(("float",
                                                                                     "bfloat"))


def _acc(dtype):
    """Sum dtype of an average: the dtype for floats, int32 / int64 for integers."""
    if _is_float(dtype):
        return dtype
    return "int64" if parse_dtype(dtype).bits > 32 else "int32"


def _divide(total, count, acc):
    """``total / count`` as TVM's ``div``: true division for floats, truncation for ints."""
    if _is_float(acc):
        return total / O.cast(count, acc)
    return O.truncdiv(total, O.cast(count, acc))


def _tap_count(pos, k, d, lo, hi):
    """How many of the taps ``pos + t * d`` (0 <= t < k) lie in [lo, hi) (an int expression)."""
    # first t with pos + t*d >= lo: ceil((lo - pos) / d), clipped to [0, k]
    first = O.max(O.min(O.floordiv(lo - pos + (d - 1), d), k), 0) if d > 1 else \
        O.max(O.min(lo - pos, k), 0)
    # last t + 1 with pos + t*d < hi: floor((hi - 1 - pos) / d) + 1, clipped to [0, k]
    end = O.max(O.min(O.floordiv(hi - 1 - pos, d) + 1, k), 0) if d > 1 else \
        O.max(O.min(hi - pos, k), 0)
    return O.max(end - first, 0)


def _windows_meet_input(size, out, k, s, d, before):
    """Whether every window of a max pool along one axis (``k`` contiguous taps, ``d`` = 1)
    holds a cell of the input. Then padding with the nearest border cell instead of -inf
    gives the same maxima -- that cell is in the same window -- and the padded read is a
    clamped load with no test (ResNet's 3x3/2 max pool in NCHW16c: 36 comparisons and 9
    selects per output vector fewer)."""
    if d != 1:
        return False  # a clamped cell could fall between two taps
    return before <= k - 1 and (out - 1) * s - before <= size - 1


def pool2d(data, kind, pool_size, strides=(1, 1), dilation=(1, 1), padding=(0, 0),
           layout="NCHW", ceil_mode=False, count_include_pad=False, out_shape=None):
    """Max (``kind="max"``) or average (``"avg"``) pooling over H and W of ``layout``."""
    shape = dims(data)
    ha, wa = _spatial(layout)
    (kh, kw), (sh, sw), (dh, dw) = (tuple(int(v) for v in t) for t in (pool_size, strides,
                                                                          dilation))
    top, left, bottom, right = pad4(padding)
    height, width = shape[ha], shape[wa]
    span_h, span_w = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    if out_shape is None:
        eh, ew = (sh - 1, sw - 1) if ceil_mode else (0, 0)
        out_h = (height + top + bottom - span_h + eh) // sh + 1
        out_w = (width + left + right - span_w + ew) // sw + 1
    else:
        out_h, out_w = int(out_shape[ha]), int(out_shape[wa])
    extra_h = max(0, (out_h - 1) * sh + span_h - (height + top + bottom))
    extra_w = max(0, (out_w - 1) * sw + span_w - (width + left + right))
    before = [0] * len(shape)
    after = [0] * len(shape)
    before[ha], before[wa] = top, left
    after[ha], after[wa] = bottom + extra_h, right + extra_w
    ry = te.reduce_axis((0, kh), name="rv0")
    rx = te.reduce_axis((0, kw), name="rv1")
    out_shape = list(shape)
    out_shape[ha], out_shape[wa] = out_h, out_w
    if kind == "max":
        edge = _windows_meet_input(height, out_h, kh, sh, dh, top) and \
            _windows_meet_input(width, out_w, kw, sw, dw, left)
        padded = pad_nd(data, before, after, O.min_value(data.dtype).value,
                        name="pad_temp", edge=edge)

        def body(*idx):
            src = list(idx)
            src[ha] = idx[ha] * sh + ry * dh
            src[wa] = idx[wa] * sw + rx * dw
            return te.max(padded(*src), axis=[ry, rx])

        return te.compute(tuple(out_shape), body, name="pool_max", tag="pool_max")
    acc = _acc(data.dtype)
    padded = pad_nd(data, before, after, 0, name="pad_temp")

    def sum_body(*idx):
        src = list(idx)
        src[ha] = idx[ha] * sh + ry * dh
        src[wa] = idx[wa] * sw + rx * dw
        v = padded(*src)
        return te.sum(v if v.dtype == acc else O.cast(v, acc), axis=[ry, rx])

    total = te.compute(tuple(out_shape), sum_body, name="pool_sum", tag="pool_sum")
    if count_include_pad:
        h_lo, h_hi, w_lo, w_hi = 0, height + top + bottom, 0, width + left + right
    else:
        h_lo, h_hi, w_lo, w_hi = top, top + height, left, left + width

    def avg_body(*idx):
        rows = _tap_count(idx[ha] * sh, kh, dh, h_lo, h_hi)
        cols = _tap_count(idx[wa] * sw, kw, dw, w_lo, w_hi)
        value = _divide(total(*idx), O.max(rows * cols, 1), acc)
        return value if acc == data.dtype else O.cast(value, data.dtype)

    return te.compute(tuple(out_shape), avg_body, name="pool_avg", tag="elemwise,pool_avg")


def global_pool(data, kind, layout="NCHW"):
    """Max or average over the whole H and W (they become 1)."""
    shape = dims(data)
    ha, wa = _spatial(layout)
    ry = te.reduce_axis((0, shape[ha]), name="rv0")
    rx = te.reduce_axis((0, shape[wa]), name="rv1")
    out_shape = list(shape)
    out_shape[ha] = out_shape[wa] = 1

    def src(idx):
        s = list(idx)
        s[ha], s[wa] = ry, rx
        return data(*s)

    if kind == "max":
        return te.compute(tuple(out_shape), lambda *i: te.max(src(i), axis=[ry, rx]),
                          name="adaptive_pool_max", tag="global_pool_max")
    acc = _acc(data.dtype)
    total = te.compute(tuple(out_shape), lambda *i: te.sum(
        src(i) if data.dtype == acc else O.cast(src(i), acc), axis=[ry, rx]),
        name="adaptive_pool_sum", tag="global_pool_sum")
    count = shape[ha] * shape[wa]

    def avg(*i):
        v = _divide(total(*i), O.const(count, "int32"), acc)
        return v if acc == data.dtype else O.cast(v, data.dtype)

    return te.compute(tuple(out_shape), avg, name="adaptive_pool_avg", tag="elemwise")


def adaptive_pool(data, kind, output_size=(), layout="NCHW"):
    """Pooling to ``output_size``: window i covers [floor(i*in/out), ceil((i+1)*in/out))."""
    shape = dims(data)
    ha, wa = _spatial(layout)
    height, width = shape[ha], shape[wa]
    size = tuple(output_size or ())
    if not size:
        out_h, out_w = height, width
    elif len(size) == 1:
        out_h = out_w = int(size[0])
    else:
        out_h, out_w = int(size[0]), int(size[1])
    if (out_h, out_w) == (1, 1):
        return global_pool(data, kind, layout)

    def max_window(n_in, n_out):
        return max(-(-(i + 1) * n_in // n_out) - i * n_in // n_out for i in range(n_out))

    kh, kw = max_window(height, out_h), max_window(width, out_w)
    ry = te.reduce_axis((0, kh), name="rv0")
    rx = te.reduce_axis((0, kw), name="rv1")
    out_shape = list(shape)
    out_shape[ha], out_shape[wa] = out_h, out_w

    def bounds(i, n_in, n_out):
        start = O.floordiv(i * n_in, n_out)
        end = O.floordiv((i + 1) * n_in + (n_out - 1), n_out)
        return start, end

    def window(idx):
        hs, he = bounds(idx[ha], height, out_h)
        ws, we = bounds(idx[wa], width, out_w)
        s = list(idx)
        s[ha], s[wa] = hs + ry, ws + rx
        cond = O.all(hs + ry < he, ws + rx < we)
        return s, cond, (he - hs) * (we - ws)

    if kind == "max":
        def body(*idx):
            s, cond, _ = window(idx)
            return te.max(data(*s), axis=[ry, rx], where=cond)

        return te.compute(tuple(out_shape), body, name="adaptive_pool_max",
                          tag="adaptive_pool_max")
    acc = _acc(data.dtype)

    def sum_body(*idx):
        s, cond, _ = window(idx)
        v = data(*s)
        return te.sum(v if v.dtype == acc else O.cast(v, acc), axis=[ry, rx], where=cond)

    total = te.compute(tuple(out_shape), sum_body, name="adaptive_pool_sum",
                       tag="adaptive_pool_sum")

    def avg(*idx):
        _, _, count = window(idx)
        v = _divide(total(*idx), count, acc)
        return v if acc == data.dtype else O.cast(v, data.dtype)

    return te.compute(tuple(out_shape), avg, name="adaptive_pool_avg", tag="elemwise")


def lrn(data, size, axis=1, alpha=1e-4, beta=0.75, bias=2.0):
    """Local response normalization across ``axis``: ``data / (bias + alpha / size *
    sum of squares over channels [c - size // 2, c - size // 2 + size)) ** beta``."""
    shape = dims(data)
    axis = axis % len(shape)
    half = size // 2
    before = [0] * len(shape)
    after = [0] * len(shape)
    before[axis], after[axis] = half, size - 1 - half
    padded = pad_nd(data, before, after, 0, name="pad_data")
    rk = te.reduce_axis((0, size), name="rxk")

    def sqr(*idx):
        s = list(idx)
        s[axis] = idx[axis] + rk
        v = padded(*s)
        return te.sum(v * v, axis=rk)

    sqr_sum = te.compute(tuple(shape), sqr, name="sqr_sum", tag="lrn_sqr_sum")
    dtype = data.dtype

    def norm(*idx):
        scale = O.const(bias, dtype) + O.const(alpha / size, dtype) * sqr_sum(*idx)
        return data(*idx) / O.pow(scale, O.const(beta, dtype))

    return te.compute(tuple(shape), norm, name="lrn", tag="elemwise,lrn")


__all__ = ["pool2d", "global_pool", "adaptive_pool", "lrn"]
