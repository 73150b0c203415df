"""``nn.batch_norm`` (inference form: the moving statistics; a tuple of the output and the
moving mean and variance) and ``nn.layer_norm`` (over ``axes``); legalized to TOPI's norms."""

from __future__ import annotations

from irlab import topi
from irlab.errors import DiagnosticError
from irlab.ir.op import OpPattern
from irlab.relax.op.attrs import BatchNormAttrs, LayerNormAttrs
from irlab.relax.op.common import (const_int, dims_equal, make_call, normalize_axes,
                                   normalize_axis, tensor_args)
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import TupleStructInfo

__all__ = ["batch_norm", "layer_norm"]


def _check_param(call, name, sinfo, dims):
    if sinfo.dims is None:
        return
    if len(sinfo.dims) != len(dims) or not all(
            dims_equal(a, b) or const_int(a) is None or const_int(b) is None
            for a, b in zip(sinfo.dims, dims)):
        raise DiagnosticError(f"{call.op.name}: {name} {sinfo} does not match the normalized "
                              f"dims {list(dims)}", call)


def _batch_norm_infer(call, bb):
    data, gamma, beta, mean, var = tensor_args(call, 5)
    if data.dims is not None:
        axis = normalize_axis(call, call.attrs.axis, data.ndim)
        for name, p in (("gamma", gamma), ("beta", beta), ("moving_mean", mean),
                        ("moving_var", var)):
            _check_param(call, name, p, [data.dims[axis]])
    return TupleStructInfo([data, mean, var])


def _batch_norm_legalize(bb, call):
    a = call.attrs
    axis = normalize_axis(call, a.axis, call.args[0].struct_info.ndim)
    return bb.call_te(topi.nn.norm.batch_norm, *call.args, axis, a.epsilon, a.center, a.scale,
                      primfunc_name_hint="batch_norm")


register_relax_op("relax.nn.batch_norm", _batch_norm_infer, num_inputs=5,
                  attrs_type=BatchNormAttrs, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
                  legalize=_batch_norm_legalize,
                  description="(normalized data, moving mean, moving var)")


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5, center=True,
               scale=True, momentum=0.1):
    """Batch normalization with the moving statistics (inference)."""
    return make_call("relax.nn.batch_norm", [data, gamma, beta, moving_mean, moving_var],
                     BatchNormAttrs(int(axis), float(epsilon), bool(center), bool(scale),
                                    float(momentum)))


def _layer_norm_infer(call, bb):
    data, gamma, beta = tensor_args(call, 3)
    if data.dims is not None:
        axes = normalize_axes(call, call.attrs.axes, data.ndim)
        for name, p in (("gamma", gamma), ("beta", beta)):
            _check_param(call, name, p, [data.dims[a] for a in sorted(axes)])
    return data


def _layer_norm_legalize(bb, call):
    a = call.attrs
    axes = normalize_axes(call, a.axes, call.args[0].struct_info.ndim)
    return bb.call_te(topi.nn.norm.layer_norm, *call.args, axes, a.epsilon, a.center, a.scale,
                      primfunc_name_hint="layer_norm")


register_relax_op("relax.nn.layer_norm", _layer_norm_infer, num_inputs=3,
                  attrs_type=LayerNormAttrs, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
                  legalize=_layer_norm_legalize, description="normalization over axes")


def layer_norm(data, gamma, beta, axes=-1, epsilon=1e-5, center=True, scale=True):
    """Layer normalization over ``axes`` (``gamma`` / ``beta`` have those axes' shape)."""
    if isinstance(axes, int):
        axes = (axes,)
    return make_call("relax.nn.layer_norm", [data, gamma, beta],
                     LayerNormAttrs(tuple(int(a) for a in axes), float(epsilon), bool(center),
                                    bool(scale)))
