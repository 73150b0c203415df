"""SimplifyInference: lower training-only and normalization ops to plain arithmetic for inference.

Rules (TVM's simplify_inference.cc):

- ``nn.batch_norm(x, gamma, beta, mean, var)[0]`` => ``x * scale + shift`` with
  ``scale = 1 / sqrt(var + eps) * gamma`` and ``shift = -mean * scale + beta`` laid along the
  channel axis with ``expand_dims`` (``center``/``scale`` attrs drop ``beta``/``gamma``);
- ``nn.dropout(x)[0]`` => ``x``;
- ``nn.layer_norm(x, gamma, beta)`` => ``(x - mean) / sqrt(variance + eps) * gamma + beta``
  with the statistics over ``axis``; ``nn.instance_norm`` likewise, with the statistics over
  every axis but the batch and channel ones.

Only field 0 of batch_norm/dropout is rewritten: the other fields (moving statistics, mask)
keep the original call, exactly as TVM.
"""

from __future__ import annotations

from irlab.errors import OpNotRegisteredError
from irlab.ir.op import Op
from irlab.relay.expr import Call, const
from irlab.relay.expr_functor import ExprMutator
from irlab.relay.op import reduce as _reduce
from irlab.relay.op import tensor as _tensor
from irlab.relay.transform import function_pass
from irlab.relay.transform.canonicalize import expand_bias_to_match_axis, typed_function


def _normalized_axis(axis, ndim):
    return axis + ndim if axis < 0 else axis


def batch_norm_to_arithmetic(attrs, data, gamma, beta, moving_mean, moving_var, data_type):
    """The inference form of batch_norm, with TVM's exact expression shape."""
    eps = const(float(attrs.epsilon), data_type.dtype)
    scale = _tensor.divide(const(1.0, data_type.dtype), _tensor.sqrt(_tensor.add(moving_var, eps)))
    if attrs.scale:
        scale = _tensor.multiply(scale, gamma)
    shift = _tensor.multiply(_tensor.negative(moving_mean), scale)
    if attrs.center:
        shift = _tensor.add(shift, beta)
    ndim = len(data_type.shape)
    axis = _normalized_axis(attrs.axis, ndim)
    scale = expand_bias_to_match_axis(scale, ndim, [axis])
    shift = expand_bias_to_match_axis(shift, ndim, [axis])
    return _tensor.add(_tensor.multiply(data, scale), shift)


def _normalize(attrs, data, gamma, beta, data_type, reduced_axes):
    """``(x - mean) / sqrt(var + eps)`` over ``reduced_axes``, then gamma and beta along
    ``attrs.axis`` (the expression shape of TVM's LayerNorm/InstanceNormToInferUnpack)."""
    eps = const(float(attrs.epsilon), data_type.dtype)
    mean = _reduce.mean(data, reduced_axes, keepdims=True)
    var = _reduce.variance(data, reduced_axes, keepdims=True, with_mean=mean)
    denom = _tensor.sqrt(_tensor.add(var, eps))
    out = _tensor.divide(_tensor.subtract(data, mean), denom)
    ndim = len(data_type.shape)
    axis = _normalized_axis(attrs.axis, ndim)
    if attrs.scale:
        out = _tensor.multiply(out, expand_bias_to_match_axis(gamma, ndim, [axis]))
    if attrs.center:
        out = _tensor.add(out, expand_bias_to_match_axis(beta, ndim, [axis]))
    return out


def layer_norm_to_arithmetic(attrs, data, gamma, beta, data_type):
    """The primitive-op form of layer_norm (mean and biased variance over ``axis``)."""
    return _normalize(attrs, data, gamma, beta, data_type, [attrs.axis])


def instance_norm_to_arithmetic(attrs, data, gamma, beta, data_type):
    """The primitive-op form of instance_norm (statistics per sample and channel)."""
    ndim = len(data_type.shape)
    axis = _normalized_axis(attrs.axis, ndim)
    return _normalize(attrs, data, gamma, beta, data_type,
                      [i for i in range(1, ndim) if i != axis])


# Ops lowered wherever they are called: op name -> f(attrs, *args, type of args[0]). Ops not
# registered in this build of irlab are skipped.
CALL_LOWERINGS = {
    "nn.layer_norm": layer_norm_to_arithmetic,
    "nn.instance_norm": instance_norm_to_arithmetic,
}


def _registered_lowerings():
    table = {}
    for name, lower in CALL_LOWERINGS.items():
        try:
            table[Op.get(name)] = lower
        except OpNotRegisteredError:
            continue
    return table


class _InferenceSimplifier(ExprMutator):
    _BATCH_NORM = Op.get("nn.batch_norm")
    _DROPOUT = Op.get("nn.dropout")

    def __init__(self):
        super().__init__()
        self.lowerings = _registered_lowerings()
        # new batch_norm data argument -> type of the original one (new nodes are untyped)
        self.data_types = {}

    def visit_call(self, call):
        new = super().visit_call(call)
        if call.op is self._BATCH_NORM:
            self.data_types[new.args[0]] = call.args[0].checked_type
            return new
        lower = self.lowerings.get(call.op) if isinstance(call.op, Op) else None
        if lower is not None:
            return lower(new.attrs, *new.args, call.args[0].checked_type)
        return new

    def visit_tuple_getitem(self, item):
        new = super().visit_tuple_getitem(item)
        if new.index != 0 or not isinstance(new.tuple_value, Call):
            return new
        call = new.tuple_value
        if call.op is self._BATCH_NORM:
            return batch_norm_to_arithmetic(call.attrs, *call.args,
                                            self.data_types[call.args[0]])
        if call.op is self._DROPOUT:
            return call.args[0]
        return new


def SimplifyInference():
    """Replace batch_norm, dropout, layer_norm and instance_norm by inference-time arithmetic.

    Before::

        %0 = nn.batch_norm(%x, %gamma, %beta, %mean, %var);   /* %x: (1, 16, 8, 8) */
        %0.0

    After::

        %0 = add(%var, 1e-05f);
        %1 = sqrt(%0);
        %2 = divide(1f, %1);
        %3 = multiply(%2, %gamma);
        %4 = expand_dims(%3, axis=1, num_newaxis=2);
        %5 = negative(%mean);
        %6 = multiply(%5, %3);
        %7 = add(%6, %beta);
        %8 = multiply(%x, %4);
        %9 = expand_dims(%7, axis=1, num_newaxis=2);
        add(%8, %9)
    """

    def transform(func, mod, ctx):
        return _InferenceSimplifier().visit(typed_function(func, mod))

    return function_pass(transform, opt_level=0, name="SimplifyInference",
                         required=["InferType"])


__all__ = ["SimplifyInference", "batch_norm_to_arithmetic", "layer_norm_to_arithmetic",
           "instance_norm_to_arithmetic", "CALL_LOWERINGS"]
