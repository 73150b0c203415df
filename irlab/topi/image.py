"""Image operators as TE computes (TVM's ``topi.image.resize2d``).

Every output pixel maps its H and W indices to input coordinates (the coordinate
transformation mode), picks taps around them (1 nearest, 2 linear, 4 cubic per axis) with
clamped indices and weights, and sums ``data * weight_h * weight_w`` in float64 (the reference's
arithmetic) before casting to the output dtype.
"""

from __future__ import annotations

from irlab import te
from irlab.errors import IrlabError
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.topi.utils import dims

F64 = "float64"


def _f(value):
    return E.FloatImm(F64, float(value))


def _lt(a, b):
    a, b = O._match_types(a, b)
    return E.LT(a, b)


def _ge(a, b):
    a, b = O._match_types(a, b)
    return E.GE(a, b)


def _gt(a, b):
    a, b = O._match_types(a, b)
    return E.GT(a, b)


def source_coordinate(x, in_n, out_n, mode, start=0.0, end=1.0):
    """The float64 input coordinate output index ``x`` samples (TVM's ``get_inx``)."""
    x = O.cast(x, F64)
    scale = _f(in_n / out_n)
    if mode == "half_pixel":
        return (x + _f(0.5)) * scale - _f(0.5)
    if mode == "pytorch_half_pixel":
        return (x + _f(0.5)) * scale - _f(0.5) if out_n > 1 else _f(0.0)
    if mode == "align_corners":
        return x * _f(in_n - 1) / _f(out_n - 1) if out_n > 1 else _f(0.0)
    if mode == "asymmetric":
        return x * scale
    if mode == "tf_half_pixel_for_nn":
        return (x + _f(0.5)) * scale
    if mode == "tf_crop_and_resize":
        if out_n > 1:
            return _f(start * (in_n - 1)) + x * _f(end - start) * _f(in_n - 1) / _f(out_n - 1)
        return _f(0.5 * (start + end) * (in_n - 1))
    raise IrlabError(f"resize2d: unknown coordinate_transformation_mode {mode!r}")


def _round(x, method):
    if method == "round_prefer_floor":
        return O.ceil(x - _f(0.5))
    if method == "round_prefer_ceil":
        return O.floor(x + _f(0.5))
    if method == "floor":
        return O.floor(x)
    if method == "ceil":
        return O.ceil(x)
    if method == "round":  # half away from zero
        return E.Select(_ge(x, _f(0.0)), O.floor(x + _f(0.5)), O.ceil(x - _f(0.5)))
    raise IrlabError(f"resize2d: unknown rounding_method {method!r}")


def _cubic_near(d, alpha):
    """Keys' cubic kernel for a distance ``d`` in [0, 1]."""
    a = _f(alpha)
    return ((a + _f(2)) * d - (a + _f(3))) * d * d + _f(1)


def _cubic_far(d, alpha):
    """Keys' cubic kernel for a distance ``d`` in [1, 2] (both pieces meet at 1 and vanish
    at 2, so the taps need no select)."""
    a = _f(alpha)
    return ((a * d - _f(5) * a) * d + _f(8) * a) * d - _f(4) * a


def _clamp(index, in_n):
    return O.min(O.max(index, E.IntImm("int32", 0)), E.IntImm("int32", in_n - 1))


class _Lets:
    """Let bindings collected while building a body: each value is computed once."""

    def __init__(self):
        self.items = []

    def bind(self, name, value):
        if isinstance(value, (E.IntImm, E.FloatImm, E.Var)):
            return value
        var = E.Var(name, value.dtype)
        self.items.append((var, value))
        return var

    def wrap(self, body):
        for var, value in reversed(self.items):
            body = E.Let(var, value, body)
        return body


def axis_taps(x, in_n, out_n, method, mode, rounding, alpha, exclude, start, end, lets=None,
              tag="x"):
    """``([(int32 index, float64 weight)], outside)`` resampling one axis at output index
    ``x``; ``outside`` is a bool expression (or None) for tf_crop_and_resize. Intermediate
    values are bound in ``lets`` (a ``_Lets``) when given."""
    lets = lets or _Lets()
    coord = lets.bind(f"coord_{tag}", source_coordinate(x, in_n, out_n, mode, start, end))
    outside = None
    if mode == "tf_crop_and_resize":
        outside = O.logical_or(_lt(coord, _f(0)), _gt(coord, _f(in_n - 1)))
    if method == "nearest_neighbor":
        rounding = rounding or ("round" if mode == "align_corners" else "floor")
        index = O.cast(_round(coord, rounding), "int32")
        return [(_clamp(index, in_n), None)], outside
    base = O.floor(coord)
    frac = lets.bind(f"frac_{tag}", coord - base)
    ibase = lets.bind(f"base_{tag}", O.cast(base, "int32"))
    if method == "linear":
        return [(_clamp(ibase, in_n), _f(1) - frac),
                (_clamp(ibase + E.IntImm("int32", 1), in_n), frac)], outside
    if method != "cubic":
        raise IrlabError(f"resize2d: unknown method {method!r}")
    taps = []
    # frac is in [0, 1): the taps -1, 0, 1, 2 are at distances 1 + frac, frac, 1 - frac and
    # 2 - frac, i.e. on the far, near, near and far pieces of the kernel
    kernels = (_cubic_far, _cubic_near, _cubic_near, _cubic_far)
    dists = (_f(1) + frac, frac, _f(1) - frac, _f(2) - frac)
    for k, kernel, dist in zip(range(-1, 3), kernels, dists):
        raw = ibase + E.IntImm("int32", k) if k else ibase
        w = kernel(dist, alpha)
        if exclude:
            w = E.Select(O.logical_or(_lt(raw, E.IntImm("int32", 0)),
                                      _gt(raw, E.IntImm("int32", in_n - 1))), _f(0), w)
        taps.append((_clamp(raw, in_n), lets.bind(f"w{k + 1}_{tag}", w)))
    if exclude:
        total = taps[0][1]
        for _, w in taps[1:]:
            total = total + w
        total = lets.bind(f"wsum_{tag}", total)
        taps = [(i, lets.bind(f"wn{k}_{tag}", w / total)) for k, (i, w) in enumerate(taps)]
    return taps, outside


def _balanced_sum(terms):
    """The sum of ``terms`` as a balanced tree: a shallow expression keeps the TIR passes,
    which revisit every subtree at each level, fast."""
    while len(terms) > 1:
        terms = [terms[k] + terms[k + 1] if k + 1 < len(terms) else terms[k]
                 for k in range(0, len(terms), 2)]
    return terms[0]


def resize2d(data, size, roi=(0.0, 0.0, 0.0, 0.0), layout="NCHW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="",
             cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None,
             name="T_resize2d"):
    """``data`` resampled to ``size`` = (height, width) on the H and W axes of ``layout``."""
    from irlab.tir.data_layout import spatial_axes_of

    ishape = dims(data)  # the batch and channels may be symbolic; H and W are not
    h_axis, w_axis = spatial_axes_of(layout)
    out_dtype = out_dtype or data.dtype
    oshape = list(ishape)
    oshape[h_axis], oshape[w_axis] = int(size[0]), int(size[1])
    roi = tuple(float(v) for v in roi)
    kw = dict(method=method, mode=coordinate_transformation_mode, rounding=rounding_method,
              alpha=float(cubic_alpha), exclude=int(cubic_exclude))
    is_int = not out_dtype.startswith(("float", "bfloat"))

    def body(*i):
        lets = _Lets()
        htaps, hout = axis_taps(i[h_axis], ishape[h_axis], oshape[h_axis], start=roi[0],
                                end=roi[2], lets=lets, tag="h", **kw)
        wtaps, wout = axis_taps(i[w_axis], ishape[w_axis], oshape[w_axis], start=roi[1],
                                end=roi[3], lets=lets, tag="w", **kw)
        terms = []
        for hi, hw in htaps:
            for wi, ww in wtaps:
                idx = list(i)
                idx[h_axis], idx[w_axis] = hi, wi
                v = data(*idx)
                if method == "nearest_neighbor":
                    terms.append(v)
                    continue
                terms.append(O.cast(v, F64) * (hw * ww) if hw is not None else O.cast(v, F64))
        total = _balanced_sum(terms)
        if method != "nearest_neighbor":
            if is_int:
                total = O.round(total)
            total = O.cast(total, out_dtype)
        else:
            total = O.cast(total, out_dtype)
        outs = [c for c in (hout, wout) if c is not None]
        if outs:
            cond = outs[0] if len(outs) == 1 else O.logical_or(*outs)
            total = E.Select(cond, O.const(extrapolation_value, out_dtype), total)
        return lets.wrap(total)

    return te.compute(tuple(oshape), body, name=name, tag="injective")


__all__ = ["resize2d", "source_coordinate", "axis_taps"]
