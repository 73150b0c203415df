"""``nn.conv2d``: grouped 2-D convolution in NCHW/NHWC (kernel OIHW/HWIO...); the output
spatial dims follow the usual formula, symbolic batch included; legalized to
``topi.nn.conv2d.conv2d``."""

from __future__ import annotations

from irlab import topi
from irlab.errors import DiagnosticError
from irlab.ir.op import OpPattern
from irlab.relax.op.attrs import Conv2DAttrs, Conv2DTransposeAttrs
from irlab.relax.op.common import const_int, dims_equal, make_call, simplify_dim, tensor_args
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import TensorStructInfo, as_dim
from irlab.runtime.dtype import normalize_dtype
from irlab.tir import op as tir_op

__all__ = ["conv2d", "pair", "quad_padding", "layout_dims", "spatial_out"]


def pair(value):
    """An int or a 1/2-sequence as a 2-tuple."""
    if isinstance(value, int):
        return (value, value)
    value = tuple(int(v) for v in value)
    return value * 2 if len(value) == 1 else value


def quad_padding(value):
    """Padding as (top, left, bottom, right)."""
    if isinstance(value, int):
        return (value,) * 4
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * 4
    if len(value) == 2:
        return value + value
    return value


def layout_dims(call, sinfo, layout):
    """``{letter: dim}`` of a tensor in ``layout`` (e.g. ``NCHW``)."""
    if len(layout) != sinfo.ndim:
        raise DiagnosticError(f"{call.op.name}: layout {layout} does not fit {sinfo}", call)
    return dict(zip(layout, sinfo.dims))


def spatial_out(size, kernel, stride, dilation, before, after, ceil_mode=False):
    """The output extent of a sliding window along one axis."""
    span = (kernel - 1) * dilation + 1
    extra = stride - 1 if ceil_mode else 0
    return simplify_dim(tir_op.floordiv(size + as_dim(before + after - span + extra),
                                        as_dim(stride)) + as_dim(1))


def _infer(call, bb):
    data, weight = tensor_args(call, 2)
    attrs = call.attrs
    dtype = attrs.out_dtype or data.dtype
    out_layout = attrs.out_layout or attrs.data_layout
    if data.dims is None or weight.dims is None:
        return TensorStructInfo(dtype=dtype, ndim=4)
    d = layout_dims(call, data, attrs.data_layout)
    k = layout_dims(call, weight, attrs.kernel_layout)
    if not dims_equal(simplify_dim(k["I"] * as_dim(attrs.groups)), d["C"]):
        if const_int(k["I"]) is not None and const_int(d["C"]) is not None:
            raise DiagnosticError(f"R.nn.conv2d: {d['C']} input channels do not match the "
                                  f"kernel ({k['I']} x {attrs.groups} groups)", call)
    top, left, bottom, right = attrs.padding
    sizes = {"N": d["N"], "C": k["O"],
             "H": spatial_out(d["H"], const_int(k["H"]), attrs.strides[0], attrs.dilation[0],
                              top, bottom),
             "W": spatial_out(d["W"], const_int(k["W"]), attrs.strides[1], attrs.dilation[1],
                              left, right)}
    return TensorStructInfo([sizes[c] for c in out_layout], dtype)


def _legalize(bb, call):
    a = call.attrs
    return bb.call_te(topi.nn.conv2d.conv2d, call.args[0], call.args[1], a.strides, a.padding,
                      a.dilation, a.groups, a.data_layout, a.kernel_layout,
                      a.out_layout or a.data_layout, call.struct_info.dtype,
                      primfunc_name_hint="conv2d")


register_relax_op("relax.nn.conv2d", _infer, num_inputs=2, attrs_type=Conv2DAttrs,
                  pattern=OpPattern.OUT_ELEMWISE_FUSABLE, legalize=_legalize,
                  description="2-D convolution")


def conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
           data_layout="NCHW", kernel_layout="OIHW", out_layout=None, out_dtype=None):
    """2-D convolution (cross-correlation) of ``data`` with ``weight``."""
    return make_call("relax.nn.conv2d", [data, weight], Conv2DAttrs(
        pair(strides), quad_padding(padding), pair(dilation), int(groups), data_layout,
        kernel_layout, out_layout or data_layout,
        normalize_dtype(out_dtype) if out_dtype else ""))


def _transpose_infer(call, bb):
    data, weight = tensor_args(call, 2)
    a = call.attrs
    dtype = a.out_dtype or data.dtype
    out_layout = a.out_layout or a.data_layout
    if data.dims is None or weight.dims is None:
        return TensorStructInfo(dtype=dtype, ndim=4)
    d = layout_dims(call, data, a.data_layout)
    k = layout_dims(call, weight, a.kernel_layout)
    if not dims_equal(k["I"], d["C"]):
        if const_int(k["I"]) is not None and const_int(d["C"]) is not None:
            raise DiagnosticError(f"R.nn.conv2d_transpose: {d['C']} input channels do not "
                                  f"match the kernel's {k['I']}", call)
    top, left, bottom, right = a.padding

    def out(size, kernel, stride, dilation, extra, before, after):
        return simplify_dim((size - as_dim(1)) * as_dim(stride) + as_dim(
            (const_int(kernel) - 1) * dilation + 1 + extra - before - after))

    sizes = {"N": d["N"], "C": simplify_dim(k["O"] * as_dim(a.groups)),
             "H": out(d["H"], k["H"], a.strides[0], a.dilation[0], a.output_padding[0], top,
                      bottom),
             "W": out(d["W"], k["W"], a.strides[1], a.dilation[1], a.output_padding[1], left,
                      right)}
    return TensorStructInfo([sizes[c] for c in out_layout], dtype)


def _transpose_legalize(bb, call):
    a = call.attrs
    return bb.call_te(topi.nn.conv2d.conv2d_transpose, call.args[0], call.args[1], a.strides,
                      a.padding, a.output_padding, a.dilation, a.groups, a.data_layout,
                      a.kernel_layout, a.out_layout or a.data_layout, call.struct_info.dtype,
                      primfunc_name_hint="conv2d_transpose")


register_relax_op("relax.nn.conv2d_transpose", _transpose_infer, num_inputs=2,
                  attrs_type=Conv2DTransposeAttrs, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
                  legalize=_transpose_legalize, description="2-D transposed convolution")


def conv2d_transpose(data, weight, strides=(1, 1), padding=(0, 0), output_padding=(0, 0),
                     dilation=(1, 1), groups=1, data_layout="NCHW", kernel_layout="IOHW",
                     out_layout=None, out_dtype=None):
    """2-D transposed convolution (the gradient of conv2d w.r.t. its data)."""
    return make_call("relax.nn.conv2d_transpose", [data, weight], Conv2DTransposeAttrs(
        pair(strides), quad_padding(padding), pair(output_padding), pair(dilation),
        int(groups), data_layout, kernel_layout, out_layout or data_layout,
        normalize_dtype(out_dtype) if out_dtype else ""))


__all__ += ["conv2d_transpose"]
