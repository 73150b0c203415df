"""FoldScaleAxis: fold per-channel multiplications into the weights of conv2d and dense.

A per-channel scale applied to a convolution's input or output can be applied to its weight
instead (TVM's fold_scale_axis.cc)::

    conv2d(x * s, w)      == conv2d(x, w * s along I)          # forward folding
    conv2d(x, w) * s      == conv2d(x, w * s along O)          # backward folding

After ``SimplifyInference`` turns batch_norm into ``x * scale + shift`` and ``FoldConstant``
folds the scale, this pass moves the scale into the (constant) weights, and the final
``FoldConstant`` of the ``FoldScaleAxis`` sequence folds ``w * s`` into a new weight.

Each direction runs in two phases. An op takes part when it declares how a scale crosses it
(``TScaleAxisRule``, a ``relay.op.scale_axis.ScaleAxisRule`` set in the op's definition; conv2d
and dense also give their channel axes with ``FScaleAxisChannels``); the tables below implement
each rule once:

- *prepare*: propagate which axes a scale could be folded along (a ``Message``) from the
  consumers (conv2d, dense) through layout-agnostic ops (relu, add, subtract, bias_add);
  ``require_positive`` is set when a relu lies in between, because ``relu(x * s) ==
  relu(x) * s`` holds only for ``s > 0``;
- *transform*: rewrite the program where a multiplication meets a consumer that agreed.

The scale is carried along as ``(value, axes, scale)`` meaning ``value`` scaled by ``scale`` on
``axes``. Only convolutions with plain layouts (permutations of NCHW/OIHW) and groups 1 or
depthwise are folded, as TVM.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from irlab.ir.op import Op
from irlab.relay.expr import Call, Constant, If, Let, Tuple
from irlab.relay.expr_functor import ExprMutator, expr_children, post_order
from irlab.relay.function import Function
from irlab.relay.op import tensor as _tensor
from irlab.relay.op import transform as _transform
from irlab.relay.op.scale_axis import ScaleAxisRule
from irlab.relay.transform import Sequential, function_pass
from irlab.relay.transform.canonicalize import expand_bias_to_match_axis, typed_function


# ---------------------------------------------------------------------------------------------
# messages and shape helpers
class Message(NamedTuple):
    """Axes a scale may be folded along, and whether the scale must be positive."""

    axes: tuple
    require_positive: bool


def intersect(lhs, rhs):
    """Both consumers' demands; ``None`` (no folding possible) wins."""
    if lhs is None or rhs is None:
        return None
    axes = tuple(a for a in lhs.axes if a in rhs.axes)
    return Message(axes, lhs.require_positive or rhs.require_positive)


def _shape(expr):
    return tuple(expr.checked_type.shape)


def match_broadcast_to_left_axes(lhs_shape, rhs_shape, axes, rhs_value=None):
    """Whether ``rhs`` broadcast against ``lhs`` varies only along ``axes`` (and matches lhs
    there). With ``rhs_value``, also return it reshaped to exactly the ``axes`` dims
    (squeezing the unit dims, or repeating a scalar): ``(ok, rhs_value)``."""
    if rhs_value is not None and len(rhs_shape) == 0 and axes:
        # A scalar scale: make it a vector along the axes (TVM's "simple constant" case).
        value = _transform.expand_dims(rhs_value, 0, len(axes))
        for i, axis in enumerate(axes):
            value = _transform.repeat(value, lhs_shape[axis], i)
        return True, value
    if len(lhs_shape) < len(rhs_shape):
        return False, rhs_value
    base = len(lhs_shape) - len(rhs_shape)
    squeeze_axes = []
    for i, dim in enumerate(lhs_shape):
        if i in axes:
            if i < base or rhs_shape[i - base] != dim:
                return False, rhs_value
        elif i >= base:
            if rhs_shape[i - base] != 1:
                return False, rhs_value
            squeeze_axes.append(i - base)
    if rhs_value is not None and squeeze_axes:
        rhs_value = _transform.squeeze(rhs_value, squeeze_axes)
    return True, rhs_value


def reshape_to_match_axis(scale, shape, axes):
    """``scale`` (the ``axes`` dims of ``shape``) reshaped to broadcast against ``shape``."""
    return _transform.reshape(scale, [shape[i] if i in axes else 1 for i in range(len(shape))])


def reshape_or_expand_to_match_axis(scale, shape, axes):
    if len(axes) > 1:
        return reshape_to_match_axis(scale, shape, axes)
    return expand_bias_to_match_axis(scale, len(shape), axes)


def _copies_values(expr) -> bool:
    """A call whose output elements are its first input's, moved or repeated (reshape,
    transpose...): it keeps the input's signs."""
    if not isinstance(expr, Call) or not isinstance(expr.op, Op):
        return False
    return bool(expr.op.get_attr("TReshapeOp") or expr.op.get_attr("TCopiesValues"))


def is_all_positive_constant(expr) -> bool:
    """A constant (seen through reshapes and transposes) whose every element is > 0
    (TVM's IsAllPositiveConstant)."""
    while _copies_values(expr):
        expr = expr.args[0]
    if not isinstance(expr, Constant):
        return False
    data = np.asarray(expr.data)  # read only: no copy
    return data.dtype.kind in "fiu" and bool(np.all(data > 0))


def _rule(call):
    """The op's ``ScaleAxisRule``, or None when a scale cannot cross it."""
    return call.op.get_attr("TScaleAxisRule") if isinstance(call.op, Op) else None


def _channels(call):
    """A ``WEIGHT`` op's ``ScaleAxes`` for this call, or None when it cannot fold (a grouped
    or split-layout conv2d)."""
    return call.op.get_attr("FScaleAxisChannels")(call)


# ---------------------------------------------------------------------------------------------
# forward folding: multiply before the consumer
class ScaledExpr:
    """``value`` whose dims ``axes`` still have to be multiplied by ``scale``."""

    __slots__ = ("value", "axes", "scale", "shape")

    def __init__(self, value, axes, scale, shape):
        self.value, self.axes, self.scale, self.shape = value, axes, scale, shape

    def realize(self):
        # Only reached if a consumer that agreed to fold the scale then could not (TVM aborts
        # with "outstanding scale"); applying the scale keeps the program correct.
        scale = reshape_or_expand_to_match_axis(self.scale, self.shape, self.axes)
        return _tensor.multiply(self.value, scale)


def _relu_forward_prep(call, message):
    return [None if message is None else Message(message.axes, True)]


def _add_sub_forward_prep(call, message):
    lhs, rhs = _shape(call.args[0]), _shape(call.args[1])
    if message is not None:
        if match_broadcast_to_left_axes(lhs, rhs, message.axes)[0]:
            return [message, None]
        if match_broadcast_to_left_axes(rhs, lhs, message.axes)[0]:
            return [None, message]
    return [None, None]


def _weight_forward_prep(call, message):
    axes = _channels(call)
    return [None if axes is None else Message((axes.data,), False), None]


def _relu_forward_rewrite(call, args, message):
    (data,) = args
    if not isinstance(data, ScaledExpr):
        return None
    return ScaledExpr(Call(call.op, [data.value], call.attrs, call.type_args), data.axes,
                      data.scale, _shape(call))


def _add_sub_forward_rewrite(call, args, message):
    lhs, rhs = args
    if not isinstance(lhs, ScaledExpr) and not isinstance(rhs, ScaledExpr):
        return None
    # The other operand is divided by the scale so that (x*s) + b == (x + b/s) * s.
    scaled, other, scaled_index = (lhs, rhs, 0) if isinstance(lhs, ScaledExpr) else (rhs, lhs, 1)
    if isinstance(other, ScaledExpr):
        return None
    scale = reshape_or_expand_to_match_axis(scaled.scale, _shape(call.args[scaled_index]),
                                            scaled.axes)
    other = _tensor.divide(other, scale)
    new_args = [scaled.value, other] if scaled_index == 0 else [other, scaled.value]
    return ScaledExpr(Call(call.op, new_args, call.attrs, call.type_args), scaled.axes,
                      scaled.scale, _shape(call))


def _multiply_forward_rewrite(call, args, message):
    if message is None or not message.axes:
        return None
    lhs, rhs = args
    if isinstance(lhs, ScaledExpr) or isinstance(rhs, ScaledExpr):
        return None
    lhs_shape, rhs_shape = _shape(call.args[0]), _shape(call.args[1])
    for value, value_shape, scale, scale_shape in ((lhs, lhs_shape, rhs, rhs_shape),
                                                   (rhs, rhs_shape, lhs, lhs_shape)):
        ok, scale = match_broadcast_to_left_axes(value_shape, scale_shape, message.axes, scale)
        if ok and (not message.require_positive or is_all_positive_constant(scale)):
            return ScaledExpr(value, message.axes, scale, _shape(call))
    return None


def _weight_forward_rewrite(call, args, message):
    data, weight = args
    if not isinstance(data, ScaledExpr) or isinstance(weight, ScaledExpr):
        return None
    axis = _channels(call).weight_of_data
    scale = expand_bias_to_match_axis(data.scale, len(_shape(call.args[1])), [axis])
    return Call(call.op, [data.value, _tensor.multiply(weight, scale)], call.attrs,
                call.type_args)


FORWARD_PREP = {
    ScaleAxisRule.POSITIVE_HOMOGENEOUS: _relu_forward_prep,
    ScaleAxisRule.ADDITIVE: _add_sub_forward_prep,
    ScaleAxisRule.WEIGHT: _weight_forward_prep,
}
FORWARD_REWRITE = {
    ScaleAxisRule.POSITIVE_HOMOGENEOUS: _relu_forward_rewrite,
    ScaleAxisRule.ADDITIVE: _add_sub_forward_rewrite,
    ScaleAxisRule.SCALE: _multiply_forward_rewrite,
    ScaleAxisRule.WEIGHT: _weight_forward_rewrite,
}


def forward_prepare(func) -> dict:
    """node -> Message: what every consumer of the node lets through (TVM's ForwardPrep).

    Consumers are visited before producers (reverse post-order); a node whose consumers
    disagree, or that feeds a tuple, an ``if`` or an op without a rule, gets ``None``."""
    messages = {}

    def update(node, message):
        messages[node] = intersect(messages[node], message) if node in messages else message

    update(func.body, None)
    for node in reversed(post_order(func)):
        if isinstance(node, Function):
            update(node.body, None)
        elif isinstance(node, Call):
            rule = FORWARD_PREP.get(_rule(node))
            incoming = (rule(node, messages.get(node)) if rule is not None
                        else [None] * len(node.args))
            for arg, message in zip(node.args, incoming):
                update(arg, message)
        elif isinstance(node, (Tuple, If, Let)):
            for child in expr_children(node):
                update(child, None)
    return messages


class _ForwardFolder(ExprMutator):
    """Rewrites calls bottom-up; a rewritten call may stand for a ``ScaledExpr`` (kept in
    ``self.scaled``) that its consumers fold. ``visit`` always returns a plain expression."""

    def __init__(self, messages):
        super().__init__()
        self.messages = messages
        self.scaled = {}  # original call -> ScaledExpr

    def visit_call(self, call):
        rule = FORWARD_REWRITE.get(_rule(call))
        if rule is None:
            return super().visit_call(call)
        plain = [self.visit(arg) for arg in call.args]
        args = [self.scaled.get(arg, new) for arg, new in zip(call.args, plain)]
        result = rule(call, args, self.messages.get(call))
        if result is None:
            if all(a is b for a, b in zip(plain, call.args)):
                return call
            return Call(call.op, plain, call.attrs, call.type_args, call.span)
        if isinstance(result, ScaledExpr):
            self.scaled[call] = result
            return result.realize()
        return result


def ForwardFoldScaleAxis():
    """Fold a multiplication *before* conv2d/dense into the weight's input-channel axis.

    Before::

        %0 = multiply(%x, meta[relay.Constant][0]);     /* scale: (4, 1, 1), all > 0 */
        %1 = nn.relu(%0);
        nn.conv2d(%1, %w, padding=[1, 1, 1, 1])

    After::

        %0 = nn.relu(%x);
        %1 = squeeze(meta[relay.Constant][0], axis=[1, 2]);
        %2 = expand_dims(%1, axis=1, num_newaxis=2);
        %3 = multiply(%w, %2);
        nn.conv2d(%0, %3, padding=[1, 1, 1, 1])
    """

    def transform(func, mod, ctx):
        func = typed_function(func, mod)
        messages = forward_prepare(func)
        if not any(m is not None for m in messages.values()):
            return func
        return _ForwardFolder(messages).visit(func)

    return function_pass(transform, opt_level=3, name="ForwardFoldScaleAxis",
                         required=["InferType"])


# ---------------------------------------------------------------------------------------------
# backward folding: multiply after the producer
def _relu_backward_prep(call, incoming):
    return None if incoming[0] is None else Message(incoming[0].axes, True)


def _add_sub_backward_prep(call, incoming):
    lhs, rhs = _shape(call.args[0]), _shape(call.args[1])
    if incoming[0] is not None and match_broadcast_to_left_axes(lhs, rhs, incoming[0].axes)[0]:
        return incoming[0]
    if incoming[1] is not None and match_broadcast_to_left_axes(rhs, lhs, incoming[1].axes)[0]:
        return incoming[1]
    if (incoming[0] is not None and incoming[1] is not None
            and incoming[0].axes == incoming[1].axes and lhs == rhs):
        return incoming[0]  # the sum of two scalable values
    return None


def _weight_backward_prep(call, incoming):
    axes = _channels(call)
    return None if axes is None else Message((axes.output,), False)


def _bias_add_backward_prep(call, incoming):
    message = incoming[0]
    ndim = len(_shape(call.args[0]))
    axis = call.attrs.axis + ndim if call.attrs.axis < 0 else call.attrs.axis
    if message is not None and message.axes == (axis,):
        return message
    return None


def _relu_backward_transform(folder, call, message, scale):
    if message is None:
        return folder.normal(call)
    data = folder.transform(call.args[0], message, scale)
    return Call(call.op, [data], call.attrs, call.type_args)


def _add_sub_backward_transform(folder, call, message, scale):
    if message is None:
        return folder.normal(call)
    lhs_message, rhs_message = folder.message(call.args[0]), folder.message(call.args[1])
    if lhs_message is not None and rhs_message is not None:
        lhs = folder.transform(call.args[0], message, scale)
        rhs = folder.transform(call.args[1], message, scale)
        return Call(call.op, [lhs, rhs], call.attrs, call.type_args)
    # (a + b) * s == a' + b * s, where a' folds the scale.
    index = 0 if lhs_message is not None else 1
    scaled = folder.transform(call.args[index], message, scale)
    other = folder.transform(call.args[1 - index], None, None)
    factor = reshape_or_expand_to_match_axis(scale, _shape(call.args[index]), message.axes)
    other = _tensor.multiply(other, factor)
    args = [scaled, other] if index == 0 else [other, scaled]
    return Call(call.op, args, call.attrs, call.type_args)


def _multiply_backward_transform(folder, call, message, scale):
    lhs_shape, rhs_shape = _shape(call.args[0]), _shape(call.args[1])
    for index in (0, 1):
        arg_message = folder.message(call.args[index])
        if arg_message is None or not arg_message.axes:
            continue
        value_shape, scale_shape = (lhs_shape, rhs_shape) if index == 0 else (rhs_shape,
                                                                              lhs_shape)
        # The scale side is not rewritten: it holds nothing to fold.
        ok, factor = match_broadcast_to_left_axes(value_shape, scale_shape, arg_message.axes,
                                                  call.args[1 - index])
        if ok and (not arg_message.require_positive or is_all_positive_constant(factor)):
            return folder.transform(call.args[index], arg_message, factor)
        break  # TVM tries the lhs message, else the rhs one, not both
    return folder.normal(call)


def _weight_backward_transform(folder, call, message, scale):
    if message is None:
        return folder.normal(call)
    axis = _channels(call).weight_of_output
    data = folder.transform(call.args[0], None, None)
    weight = folder.transform(call.args[1], None, None)
    factor = expand_bias_to_match_axis(scale, len(_shape(call.args[1])), [axis])
    return Call(call.op, [data, _tensor.multiply(weight, factor)], call.attrs, call.type_args)


def _bias_add_backward_transform(folder, call, message, scale):
    if message is None:
        return folder.normal(call)
    data = folder.transform(call.args[0], message, scale)
    bias = _tensor.multiply(folder.transform(call.args[1], None, None), scale)
    return Call(call.op, [data, bias], call.attrs, call.type_args)


BACKWARD_PREP = {
    ScaleAxisRule.POSITIVE_HOMOGENEOUS: _relu_backward_prep,
    ScaleAxisRule.ADDITIVE: _add_sub_backward_prep,
    ScaleAxisRule.BIAS_ADD: _bias_add_backward_prep,
    ScaleAxisRule.WEIGHT: _weight_backward_prep,
}
BACKWARD_TRANSFORM = {
    ScaleAxisRule.POSITIVE_HOMOGENEOUS: _relu_backward_transform,
    ScaleAxisRule.ADDITIVE: _add_sub_backward_transform,
    ScaleAxisRule.SCALE: _multiply_backward_transform,
    ScaleAxisRule.BIAS_ADD: _bias_add_backward_transform,
    ScaleAxisRule.WEIGHT: _weight_backward_transform,
}


def reference_counts(func) -> dict:
    """How many parents reference each node (the root counts as referenced once)."""
    counts = {func: 1}
    for node in post_order(func):
        for child in expr_children(node):
            counts[child] = counts.get(child, 0) + 1
    return counts


def backward_prepare(func) -> dict:
    """node -> Message: the axes along which a scale applied to the node's value could be
    pushed into its producers (TVM's BackwardPrep). Only single-use nodes take part: a scale
    cannot be pushed into a value that someone else reads unscaled."""
    counts = reference_counts(func)
    messages = {}
    for node in post_order(func):
        if not isinstance(node, Call) or not isinstance(node.op, Op):
            continue
        rule = BACKWARD_PREP.get(_rule(node))
        if rule is None or counts.get(node, 0) != 1:
            continue
        message = rule(node, [messages.get(arg) for arg in node.args])
        if message is not None:
            messages[node] = message
    return messages


class _BackwardFolder(ExprMutator):
    """Pushes scales down into producers: ``transform(expr, message, scale)`` returns ``expr``
    computing its value times ``scale`` along ``message.axes``."""

    def __init__(self, messages):
        super().__init__()
        self.messages = messages

    def message(self, expr):
        return self.messages.get(expr)

    def visit_call(self, call):
        return self.transform(call, None, None)

    def normal(self, call):
        return super().visit_call(call)

    def transform(self, expr, message, scale):
        if not isinstance(expr, Call):
            return self.visit(expr)  # only calls can absorb a scale (prep guarantees it)
        if message is None and expr in self.memo_map:
            return self.memo_map[expr]
        rule = BACKWARD_TRANSFORM.get(_rule(expr))
        result = rule(self, expr, message, scale) if rule is not None else self.normal(expr)
        self.memo_map[expr] = result
        return result


def BackwardFoldScaleAxis():
    """Fold a multiplication *after* conv2d/dense into the weight's output-channel axis.

    Before::

        %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
        %1 = add(%0, %b);                                /* %b: (8, 1, 1) */
        %2 = nn.relu(%1);
        multiply(%2, meta[relay.Constant][0])            /* scale: (8, 1, 1), all > 0 */

    After::

        %0 = squeeze(meta[relay.Constant][0], axis=[1, 2]);
        %1 = expand_dims(%0, axis=1, num_newaxis=3);
        %2 = multiply(%w, %1);
        %3 = nn.conv2d(%x, %2, padding=[1, 1, 1, 1]);
        %4 = expand_dims(%0, axis=1, num_newaxis=2);
        %5 = multiply(%b, %4);
        %6 = add(%3, %5);
        nn.relu(%6)
    """

    def transform(func, mod, ctx):
        func = typed_function(func, mod)
        messages = backward_prepare(func)
        if not messages:
            return func
        return _BackwardFolder(messages).visit(func)

    return function_pass(transform, opt_level=3, name="BackwardFoldScaleAxis",
                         required=["InferType"])


def FoldScaleAxis():
    """``BackwardFoldScaleAxis``, ``ForwardFoldScaleAxis`` then ``FoldConstant``, as one
    Sequential named "FoldScaleAxis" (so the scaled weights become constants again)."""
    from irlab.relay.transform.fold_constant import FoldConstant

    return Sequential([BackwardFoldScaleAxis(), ForwardFoldScaleAxis(), FoldConstant()],
                      opt_level=0, name="FoldScaleAxis")


__all__ = ["FoldScaleAxis", "ForwardFoldScaleAxis", "BackwardFoldScaleAxis", "Message",
           "match_broadcast_to_left_axes", "is_all_positive_constant", "forward_prepare",
           "backward_prepare"]
