"""2-D convolutions in TE (TVM's ``topi.nn.conv2d`` / ``conv2d_transpose``).

Every compute works on any permutation layout of its letters (NCHW/OIHW, NHWC/HWIO,
NHWC/OHWI...; conv2d's kernel also with its output channels split, ``OIHW16o``): the data and
the weight are read through their layout, the output is written in ``out_layout``. Padding
is its own stage (``pad_temp``, zero outside the input) so a schedule can inline it or compute
it at a tile; the convolution stage is named ``conv2d`` (or ``conv2d_transpose``) and reduces
over (input channel of the group, kernel row, kernel column).
Groups read input channel ``g * (I / G) + rc`` for output channel ``oc`` of group
``g = oc // (O / G)``; depthwise is ``groups == channels`` (one input channel per group).
"""

from __future__ import annotations

from irlab import te
from irlab.errors import IrlabError
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.topi.utils import const_shape, dims


def pad4(padding):
    pad = tuple(int(p) for p in padding)
    if len(pad) == 1:
        return pad * 4
    if len(pad) == 2:
        return pad + pad
    return pad


def _axes(layout):
    """``[(letter, block)]`` of ``layout``: block None for a primal axis (``N``), the factor of
    a sub-axis (``16o`` -> ``("o", 16)``)."""
    from irlab.tir.data_layout import parse_layout

    return parse_layout(layout)


def _reader(tensor, layout, letters):
    """``read(**{letter: index})`` loads ``tensor`` (in ``layout``) at the named indices of the
    primal axes ``letters``; a split axis (``OIHW16o``) is read at ``[o // 16, ..., o % 16]``."""
    axes = _axes(layout)
    blocks = {a.upper(): f for a, f in axes if f is not None}

    def read(**idx):
        index = []
        for a, f in axes:
            if f is not None:
                index.append(idx[a.upper()] % f)
            elif a in blocks:
                index.append(idx[a] // blocks[a])
            else:
                index.append(idx[a])
        return tensor(*index)
    return read


def _shape_of(tensor, layout):
    """The extent of each primal axis of ``tensor`` (a split axis counts its blocks)."""
    shape = dims(tensor)
    axes = _axes(layout)
    blocks = {a.upper(): f for a, f in axes if f is not None}
    return {a: d * blocks.get(a, 1) for (a, f), d in zip(axes, shape) if f is None}


def pad_nd(data, before, after, value=0.0, name="pad_temp", edge=False):
    """``data`` padded by ``before`` / ``after`` cells per axis with ``value`` (negative
    ``before`` crops), or with ``edge=True`` by repeating the nearest border cell (the clamped
    read alone, no test: what a max pool may read instead of -inf, see ``pool2d``). Axes
    without padding are read as they are."""
    shape = dims(data)
    out_shape = tuple(s + b + a for s, b, a in zip(shape, before, after))
    if all(b == 0 and a == 0 for b, a in zip(before, after)):
        return data
    fill = O.const(value, data.dtype)

    def body(*idx):
        conds, src = [], []
        for i, s, b, a in zip(idx, shape, before, after):
            if b == 0 and a == 0:
                src.append(i)
                continue
            j = i - b if b else i
            if b > 0:
                conds.append(j >= 0)
                j = O.max(j, 0)
            if a > 0 or b < 0:
                conds.append(i - b < s)
                j = O.min(j, s - 1)
            src.append(j)
        if not conds or edge:
            return data(*src)
        # a Select of a clamped (always in bounds) load: vectorizable, unlike if_then_else
        return E.Select(O.all(*conds), data(*src), fill)

    return te.compute(out_shape, body, name=name, tag="injective,pad")


def conv2d(data, kernel, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
           data_layout="NCHW", kernel_layout="OIHW", out_layout="", out_dtype=None):
    """Grouped 2-D convolution (cross-correlation) in any permutation layouts."""
    out_layout = out_layout or data_layout
    out_dtype = out_dtype or data.dtype
    sh, sw = (int(s) for s in strides)
    dh, dw = (int(d) for d in dilation)
    top, left, bottom, right = pad4(padding)
    ds = _shape_of(data, data_layout)
    ks = _shape_of(kernel, kernel_layout)
    batch, height, width = ds["N"], ds["H"], ds["W"]
    out_ch, group_in, kh, kw = ks["O"], ks["I"], ks["H"], ks["W"]
    group_out = out_ch // groups
    out_h = (height + top + bottom - ((kh - 1) * dh + 1)) // sh + 1
    out_w = (width + left + right - ((kw - 1) * dw + 1)) // sw + 1
    before = [{"H": top, "W": left}.get(c, 0) for c in data_layout]
    after = [{"H": bottom, "W": right}.get(c, 0) for c in data_layout]
    padded = pad_nd(data, before, after, 0.0, name="pad_temp")
    rd = _reader(padded, data_layout, "NCHW")
    rk = _reader(kernel, kernel_layout, "OIHW")
    rc = te.reduce_axis((0, group_in), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    sizes = {"N": batch, "C": out_ch, "H": out_h, "W": out_w}

    def body(*idx):
        i = dict(zip(out_layout, idx))
        n, oc, y, x = i["N"], i["C"], i["H"], i["W"]
        if groups == 1:
            ic = rc
        elif group_in == 1:
            ic = oc // group_out if group_out > 1 else oc
        else:
            ic = (oc // group_out) * group_in + rc if group_out > 1 else oc * group_in + rc
        a = rd(N=n, C=ic, H=y * sh + ry * dh, W=x * sw + rx * dw)
        b = rk(O=oc, I=rc, H=ry, W=rx)
        if a.dtype != out_dtype:
            a, b = O.cast(a, out_dtype), O.cast(b, out_dtype)
        return te.sum(a * b, axis=[rc, ry, rx])

    return te.compute(tuple(sizes[c] for c in out_layout), body, name="conv2d",
                      tag=f"conv2d_{data_layout.lower()}",
                      attrs={"layout_free_placeholders": [kernel]})


def conv2d_NCHWc(data, kernel, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                 layout="NCHW16c", out_layout="NCHW16c", out_dtype=None):
    """conv2d in the channel-blocked layouts of TVM's x86 ``conv2d_NCHWc``: data
    ``NCHW{x}c`` ``(N, C // x, H, W, x)``, kernel ``OIHW{x}i{y}o`` ``(O // y, C // x, KH, KW, x,
    y)``, output ``NCHW{y}c`` ``(N, O // y, OH, OW, y)`` (one group). A block of ``y`` output
    channels is contiguous in the output and in the weight, so a schedule vectorizes it and
    stores whole vectors; the input channels are reduced as ``(rco, ry, rx, rci)``.

    Reading ``NCHW16c`` as ``(N, C // 16, H, W, 16)``: channel ``c`` of pixel ``(h, w)`` is
    element ``[n, c // 16, h, w, c % 16]``."""
    from irlab.tir.data_layout import parse_layout

    out_dtype = out_dtype or data.dtype
    sh, sw = (int(s) for s in strides)
    dh, dw = (int(d) for d in dilation)
    top, left, bottom, right = pad4(padding)
    for name, value, want in (("layout", layout, "NCHWc"), ("out_layout", out_layout, "NCHWc")):
        if "".join(a for a, _ in parse_layout(value)) != want:
            raise IrlabError(f"conv2d_NCHWc: {name} {value!r} is not NCHW{{x}}c")
    batch, ic_chunks, height, width, ic_bn = const_shape(data)
    oc_chunks, k_chunks, kh, kw, k_icb, oc_bn = const_shape(kernel)
    if (k_chunks, k_icb) != (ic_chunks, ic_bn):
        raise IrlabError(f"conv2d_NCHWc: kernel {const_shape(kernel)} does not match the "
                         f"input channel blocks of data {const_shape(data)}")
    out_h = (height + top + bottom - ((kh - 1) * dh + 1)) // sh + 1
    out_w = (width + left + right - ((kw - 1) * dw + 1)) // sw + 1
    padded = pad_nd(data, [0, 0, top, left, 0], [0, 0, bottom, right, 0], 0.0, name="pad_temp")
    rco = te.reduce_axis((0, ic_chunks), name="rco")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    rci = te.reduce_axis((0, ic_bn), name="rci")

    def body(n, oco, y, x, oci):
        a = padded[n, rco, y * sh + ry * dh, x * sw + rx * dw, rci]
        b = kernel[oco, rco, ry, rx, rci, oci]
        if a.dtype != out_dtype:
            a, b = O.cast(a, out_dtype), O.cast(b, out_dtype)
        return te.sum(a * b, axis=[rco, ry, rx, rci])

    return te.compute((batch, oc_chunks, out_h, out_w, oc_bn), body, name="conv2d_NCHWc",
                      tag="conv2d_NCHWc", attrs={"layout_free_placeholders": [kernel]})


def conv2d_nchw_im2col(data, kernel, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                       out_dtype=None, bn=64):
    """NCHW/OIHW conv2d (one group) as im2col + GEMM: the im2col matrix is built directly in
    GEMM panels ``col[q // bn, (c, ky, kx), q % bn]`` over the pixels ``q`` of all images (zero
    past the last one), ``gemm[oc, q] = kernel[oc, :] @ col[:, q]``, and the output reads
    ``conv2d[n, oc, y, x] = gemm[oc, (n * OH + y) * OW + x]``. Faster than the direct schedule
    when images are small (few pixels to amortize packing the weight)."""
    out_dtype = out_dtype or data.dtype
    sh, sw = (int(v) for v in strides)
    dh, dw = (int(v) for v in dilation)
    top, left, bottom, right = pad4(padding)
    batch, in_ch, height, width = const_shape(data)
    out_ch, group_in, kh, kw = const_shape(kernel)
    out_h = (height + top + bottom - ((kh - 1) * dh + 1)) // sh + 1
    out_w = (width + left + right - ((kw - 1) * dw + 1)) // sw + 1
    npix = batch * out_h * out_w
    panels = -(-npix // bn)
    padded = pad_nd(data, [0, 0, top, left], [0, 0, bottom, right], 0.0, name="pad_temp")
    taps = kh * kw

    def col_body(qo, r, qi):
        q = O.min(qo * bn + qi, npix - 1)  # clamped: the lanes past the end read pixel 0..
        n, rest = q // (out_h * out_w), q % (out_h * out_w)
        y, x = rest // out_w, rest % out_w
        c, t = r // taps, r % taps
        value = padded[n, c, y * sh + (t // kw) * dh, x * sw + (t % kw) * dw]
        return E.Select(qo * bn + qi < npix, value, O.const(0, data.dtype))

    col = te.compute((panels, in_ch * taps, bn), col_body, name="col",
                     tag="conv2d_im2col_col")
    rc = te.reduce_axis((0, in_ch), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")

    def gemm_body(o, q):
        a = kernel[o, rc, ry, rx]
        b = col[q // bn, (rc * kh + ry) * kw + rx, q % bn]
        if a.dtype != out_dtype:
            a, b = O.cast(a, out_dtype), O.cast(b, out_dtype)
        return te.sum(a * b, axis=[rc, ry, rx])

    gemm = te.compute((out_ch, panels * bn), gemm_body, name="gemm", tag="conv2d_im2col_gemm")
    return te.compute((batch, out_ch, out_h, out_w),
                      lambda n, o, y, x: gemm[o, (n * out_h + y) * out_w + x], name="conv2d",
                      tag="conv2d_im2col_out")


def conv2d_nchw(data, kernel, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                out_dtype=None):
    return conv2d(data, kernel, strides, padding, dilation, groups, "NCHW", "OIHW",
                  out_dtype=out_dtype)


def conv2d_nhwc(data, kernel, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                out_dtype=None):
    return conv2d(data, kernel, strides, padding, dilation, groups, "NHWC", "HWIO",
                  out_dtype=out_dtype)


def conv2d_transpose(data, kernel, strides=(1, 1), padding=(0, 0), output_padding=(0, 0),
                     dilation=(1, 1), groups=1, data_layout="NCHW", kernel_layout="IOHW",
                     out_layout="", out_dtype=None):
    """Transposed convolution: the data dilated by the strides and padded by
    ``(k - 1) * d - pad`` (``dilate_pad``), convolved with the flipped kernel."""
    out_layout = out_layout or data_layout
    out_dtype = out_dtype or data.dtype
    sh, sw = (int(s) for s in strides)
    dh, dw = (int(d) for d in dilation)
    oph, opw = (int(p) for p in output_padding)
    top, left, bottom, right = pad4(padding)
    ds = _shape_of(data, data_layout)
    ks = _shape_of(kernel, kernel_layout)
    batch, in_ch, height, width = ds["N"], ds["C"], ds["H"], ds["W"]
    group_out, kh, kw = ks["O"], ks["H"], ks["W"]
    group_in = in_ch // groups
    out_ch = group_out * groups
    out_h = (height - 1) * sh + (kh - 1) * dh + 1 + oph - top - bottom
    out_w = (width - 1) * sw + (kw - 1) * dw + 1 + opw - left - right
    pad_h, pad_w = (kh - 1) * dh - top, (kw - 1) * dw - left  # may be negative (a crop)
    full_h, full_w = out_h + (kh - 1) * dh, out_w + (kw - 1) * dw
    rd = _reader(data, data_layout, "NCHW")
    zero = O.const(0, data.dtype)

    def dilate_body(n, c, i, j):
        # position (i, j) of the dilated, padded data in (N, C, H, W) order
        y, x = i - pad_h, j - pad_w
        conds = []
        for v, s, extent in ((y, sh, height), (x, sw, width)):
            conds += [v >= 0, v < (extent - 1) * s + 1]
            if s > 1:
                conds.append(O.floormod(v, s) == 0)
        yy = O.floordiv(y, sh) if sh > 1 else y
        xx = O.floordiv(x, sw) if sw > 1 else x
        src = rd(N=n, C=c, H=O.min(O.max(yy, 0), height - 1), W=O.min(O.max(xx, 0), width - 1))
        return E.Select(O.all(*conds), src, zero)

    dilated = te.compute((batch, in_ch, full_h, full_w), dilate_body, name="data_dilate_pad",
                         tag="injective,pad")
    rk = _reader(kernel, kernel_layout, "IOHW")
    rc = te.reduce_axis((0, group_in), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    sizes = {"N": batch, "C": out_ch, "H": out_h, "W": out_w}

    def body(*idx):
        i = dict(zip(out_layout, idx))
        n, oc, y, x = i["N"], i["C"], i["H"], i["W"]
        if groups == 1:
            ic, o = rc, oc
        else:
            ic, o = (oc // group_out) * group_in + rc, oc % group_out
        a = dilated(n, ic, y + ry * dh, x + rx * dw)
        b = rk(I=ic, O=o, H=kh - 1 - ry, W=kw - 1 - rx)
        if a.dtype != out_dtype:
            a, b = O.cast(a, out_dtype), O.cast(b, out_dtype)
        return te.sum(a * b, axis=[rc, ry, rx])

    return te.compute(tuple(sizes[c] for c in out_layout), body, name="conv2d_transpose",
                      tag="conv2d_transpose")


__all__ = ["conv2d", "conv2d_NCHWc", "conv2d_nchw", "conv2d_nchw_im2col", "conv2d_nhwc",
           "conv2d_transpose",
           "pad_nd", "pad4"]
