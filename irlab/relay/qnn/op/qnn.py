"""QNN operators (TVM's ``relay.qnn.op``): integer tensors whose real value is
``scale * (q - zero_point)``; scales and zero points are (scalar) arguments of the call.

Each op has its relation and a numpy reference with TVM's arithmetic (what its QNN
canonicalization lowers to): ``quantize`` rounds to nearest, ``requantize`` rounds half
upward ("UPWARD"), ``add``/``mul`` requantize to the output scale, ``dense``/``conv2d``
accumulate ``(data - zp) * (kernel - zp)`` in int32. Every op says ``TQnnOp``: FoldConstant
folds them only when asked (``fold_qnn=True``). They have no TE compute: the QNN legalization
that would lower them for ``relay.build`` is not written yet.
"""

from __future__ import annotations

import numpy as np

from irlab.ir.attrs import Attrs
from irlab.ir.op import Op, OpPattern, register_op
from irlab.ir.type import TensorType
from irlab.relay.op.nn.conv import Conv2DAttrs, conv2d as _nn_conv2d
from irlab.relay.op.nn.linear import DenseAttrs, dense as _nn_dense
from irlab.relay.op.op_common import make_call, out_array
from irlab.runtime.dtype import to_numpy_dtype


class QuantizeAttrs(Attrs):
    _type_key = "relay.attrs.QuantizeAttrs"
    out_dtype: str = "int8"
    axis: int = -1


class DequantizeAttrs(Attrs):
    _type_key = "relay.attrs.DequantizeAttrs"
    axis: int = -1
    out_dtype: str = "float32"


class RequantizeAttrs(Attrs):
    _type_key = "relay.attrs.RequantizeAttrs"
    axis: int = -1
    rounding: str = "None"
    compute_dtype: str = "None"
    out_dtype: str = "int8"


class BroadcastAttrs(Attrs):
    """The per-channel axes of ``qnn.add``/``qnn.mul``'s operands."""

    _type_key = "relay.attrs.BroadcastAttrs"
    lhs_axis: int = -1
    rhs_axis: int = -1


# ---------------------------------------------------------------------------------------------
# arithmetic shared by the references
def _saturate(values, dtype):
    info = np.iinfo(to_numpy_dtype(dtype))
    return np.clip(values, info.min, info.max).astype(to_numpy_dtype(dtype))


def _round_upward(values):
    """TVM's "UPWARD" rounding: halves go up."""
    return np.floor(values + 0.5)


def _scalar(value):
    return np.asarray(value, dtype=np.float64)


def _requantize(q, in_scale, in_zero, out_scale, out_zero):
    """``q`` (scale ``in_scale``, zero ``in_zero``) at scale ``out_scale``, zero ``out_zero``,
    rounded upward, not yet saturated."""
    real = (q.astype(np.float64) - _scalar(in_zero)) * (_scalar(in_scale) / _scalar(out_scale))
    return _round_upward(real) + _scalar(out_zero)


# ---------------------------------------------------------------------------------------------
# relations
def _same_shape_rel(dtype_of):
    def rel(ctx):
        data = ctx.tensor(0, "data")
        return TensorType(data.shape, dtype_of(ctx.attrs, data))
    return rel


def _broadcast_rel(ctx):
    lhs, rhs = ctx.tensor(0, "lhs"), ctx.tensor(1, "rhs")
    ctx.expect(lhs.dtype == rhs.dtype, f"operands differ in dtype: {lhs.dtype} vs {rhs.dtype}")
    try:
        shape = np.broadcast_shapes(lhs.shape, rhs.shape)
    except ValueError:
        ctx.fail(f"shapes {lhs.shape} and {rhs.shape} do not broadcast")
    return TensorType(tuple(shape), lhs.dtype)


def _rel_of(op_name, out_dtype):
    """The relation of a float op (nn.dense, nn.conv2d) on the first two arguments, with the
    accumulation dtype as output."""
    def rel(ctx):
        ty = Op.get(op_name).type_rel(ctx)
        return TensorType(ty.shape, ctx.attrs.out_dtype or out_dtype)
    return rel


# ---------------------------------------------------------------------------------------------
# references
def _quantize_reference(inputs, attrs, out_type):
    data, scale, zero = inputs
    q = np.rint(data.astype(np.float64) / _scalar(scale)) + _scalar(zero)
    return out_array(_saturate(q, out_type.dtype), out_type)


def _dequantize_reference(inputs, attrs, out_type):
    data, scale, zero = inputs
    real = (data.astype(np.float64) - _scalar(zero)) * _scalar(scale)
    return out_array(real.astype(to_numpy_dtype(out_type.dtype)), out_type)


def _requantize_reference(inputs, attrs, out_type):
    q = _requantize(*inputs)
    return out_array(_saturate(q, out_type.dtype), out_type)


def _add_reference(inputs, attrs, out_type):
    lhs, rhs, ls, lz, rs, rz, os_, oz = inputs
    total = _requantize(lhs, ls, lz, os_, oz) + _requantize(rhs, rs, rz, os_, oz) - _scalar(oz)
    return out_array(_saturate(total, out_type.dtype), out_type)


def _mul_reference(inputs, attrs, out_type):
    lhs, rhs, ls, lz, rs, rz, os_, oz = inputs
    product = (lhs.astype(np.int64) - np.int64(lz)) * (rhs.astype(np.int64) - np.int64(rz))
    scaled = _requantize(product, _scalar(ls) * _scalar(rs), 0, os_, oz)
    return out_array(_saturate(scaled, out_type.dtype), out_type)


def _integer_reference(op_name):
    """dense / conv2d: the float op's reference on zero-point-shifted int32 operands."""
    def reference(inputs, attrs, out_type):
        data, kernel, data_zero, kernel_zero = inputs[:4]
        shifted = [(data.astype(np.int64) - np.int64(data_zero)).astype(np.int32),
                   (kernel.astype(np.int64) - np.int64(kernel_zero)).astype(np.int32)]
        return Op.get(op_name).reference(shifted, attrs, out_type)
    return reference


# ---------------------------------------------------------------------------------------------
# registration
def _register(name, arguments, attrs_type, rel, reference, description):
    register_op(name, num_inputs=len(arguments),
                arguments=[(a, "Tensor", f"The {a.replace('_', ' ')}.") for a in arguments],
                attrs_type=attrs_type, type_rel=rel, pattern=OpPattern.OPAQUE,
                reference=reference, support_level=11, description=description,
                ).set_attrs(TQnnOp=True)


_SCALES = ["lhs_scale", "lhs_zero_point", "rhs_scale", "rhs_zero_point", "output_scale",
           "output_zero_point"]
_register("qnn.quantize", ["data", "output_scale", "output_zero_point"], QuantizeAttrs,
          _same_shape_rel(lambda attrs, data: attrs.out_dtype), _quantize_reference,
          "Quantize a float tensor: round(data / scale) + zero_point, saturated.")
_register("qnn.dequantize", ["data", "input_scale", "input_zero_point"], DequantizeAttrs,
          _same_shape_rel(lambda attrs, data: attrs.out_dtype), _dequantize_reference,
          "The real values of a quantized tensor: scale * (data - zero_point).")
_register("qnn.requantize", ["data", "input_scale", "input_zero_point", "output_scale",
                             "output_zero_point"], RequantizeAttrs,
          _same_shape_rel(lambda attrs, data: attrs.out_dtype), _requantize_reference,
          "A quantized tensor at another scale and zero point.")
_register("qnn.add", ["lhs", "rhs"] + _SCALES, BroadcastAttrs, _broadcast_rel, _add_reference,
          "Quantized addition: both operands requantized to the output scale, then added.")
_register("qnn.mul", ["lhs", "rhs"] + _SCALES, BroadcastAttrs, _broadcast_rel, _mul_reference,
          "Quantized multiplication, requantized to the output scale.")
_register("qnn.dense", ["data", "weight", "input_zero_point", "kernel_zero_point",
                        "input_scale", "kernel_scale"], DenseAttrs,
          _rel_of("nn.dense", "int32"), _integer_reference("nn.dense"),
          "Quantized dense: (data - zp) @ (weight - zp).T accumulated in int32.")
_register("qnn.conv2d", ["data", "weight", "input_zero_point", "kernel_zero_point",
                         "input_scale", "kernel_scale"], Conv2DAttrs,
          _rel_of("nn.conv2d", "int32"), _integer_reference("nn.conv2d"),
          "Quantized 2-D convolution of zero-point-shifted operands, accumulated in int32.")


# ---------------------------------------------------------------------------------------------
# constructors (TVM's signatures)
def quantize(data, output_scale, output_zero_point, axis=-1, out_dtype="int8"):
    return make_call("qnn.quantize", [data, output_scale, output_zero_point],
                     QuantizeAttrs(out_dtype=str(out_dtype), axis=int(axis)))


def dequantize(data, input_scale, input_zero_point, axis=-1, out_dtype="float32"):
    return make_call("qnn.dequantize", [data, input_scale, input_zero_point],
                     DequantizeAttrs(axis=int(axis), out_dtype=str(out_dtype)))


def requantize(data, input_scale, input_zero_point, output_scale, output_zero_point, axis=-1,
               rounding="None", compute_dtype="None", out_dtype="int8"):
    return make_call("qnn.requantize", [data, input_scale, input_zero_point, output_scale,
                                        output_zero_point],
                     RequantizeAttrs(axis=int(axis), rounding=str(rounding),
                                     compute_dtype=str(compute_dtype), out_dtype=str(out_dtype)))


def add(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale,
        output_zero_point, lhs_axis=-1, rhs_axis=-1):
    return make_call("qnn.add", [lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale,
                                 rhs_zero_point, output_scale, output_zero_point],
                     BroadcastAttrs(lhs_axis=int(lhs_axis), rhs_axis=int(rhs_axis)))


def mul(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale,
        output_zero_point, lhs_axis=-1, rhs_axis=-1):
    return make_call("qnn.mul", [lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale,
                                 rhs_zero_point, output_scale, output_zero_point],
                     BroadcastAttrs(lhs_axis=int(lhs_axis), rhs_axis=int(rhs_axis)))


def dense(data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale, units,
          out_dtype="int32"):
    attrs = _nn_dense(data, weight, units, out_dtype).attrs
    return make_call("qnn.dense", [data, weight, input_zero_point, kernel_zero_point,
                                   input_scale, kernel_scale], attrs)


def conv2d(data, kernel, input_zero_point, kernel_zero_point, input_scale, kernel_scale,
           kernel_size, channels, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
           data_layout="NCHW", kernel_layout="OIHW", out_layout="", out_dtype="int32"):
    attrs = _nn_conv2d(data, kernel, strides, padding, dilation, groups, channels, kernel_size,
                       data_layout, kernel_layout, out_layout, out_dtype).attrs
    return make_call("qnn.conv2d", [data, kernel, input_zero_point, kernel_zero_point,
                                    input_scale, kernel_scale], attrs)
