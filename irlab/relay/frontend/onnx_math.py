"""ONNX converters for math: elementwise and variadic ops, activations, Cast/Clip/Where,
reductions and matrix products (MatMul, Gemm)."""

from __future__ import annotations

import math

import numpy as np

from irlab import relay
from irlab.runtime.dtype import to_numpy_dtype
from irlab.relay.frontend.onnx_common import converter, onnx_dtype
from irlab.relay.op.op_common import broadcast_shapes

# ---------------------------------------------------------------------------------------------
# elementwise: one Relay op per ONNX op
_UNARY = {
    "Relu": relay.nn.relu, "Sigmoid": relay.sigmoid, "Tanh": relay.tanh, "Sqrt": relay.sqrt,
    "Exp": relay.exp, "Log": relay.log, "Erf": relay.erf, "Neg": relay.negative,
    "Abs": relay.abs, "Floor": relay.floor, "Ceil": relay.ceil, "Sign": relay.sign,
    "Sin": relay.sin, "Cos": relay.cos, "Tan": relay.tan, "Atan": relay.atan,
    "Not": relay.logical_not, "IsNaN": relay.isnan,
}
_BINARY = {
    "Add": relay.add, "Sub": relay.subtract, "Mul": relay.multiply, "Div": relay.divide,
    "And": relay.logical_and, "Or": relay.logical_or, "Xor": relay.logical_xor,
    "Equal": relay.equal, "Less": relay.less, "Greater": relay.greater,
    "LessOrEqual": relay.less_equal, "GreaterOrEqual": relay.greater_equal,
}


def _unary(op):
    return lambda node: op(node.input(0))


def _legacy_broadcast(node, rhs):
    """Opsets < 7 broadcast B against A from ``axis`` on (``broadcast=1, axis=k``)."""
    axis = node.attr("axis")
    if not node.attr("broadcast", 0) or axis is None:
        return rhs
    lhs_rank, rhs_shape = node.ndim(0), node.shape(rhs)
    axis = axis + lhs_rank if axis < 0 else axis
    return relay.reshape(rhs, (1,) * axis + rhs_shape + (1,) * (lhs_rank - axis - len(rhs_shape)))


def _binary(op):
    def convert(node):
        return op(node.input(0), _legacy_broadcast(node, node.input(1)))
    return convert


for _onnx_op, _relay_op in _UNARY.items():
    converter(_onnx_op, 1)(_unary(_relay_op))
for _onnx_op, _relay_op in _BINARY.items():
    converter(_onnx_op, 1)(_binary(_relay_op))


@converter("Reciprocal", 1)
def _reciprocal(node):
    return relay.divide(node.const(1.0), node.input(0))


@converter("Pow", 1)
def _pow(node):
    base, exponent = node.input(0), node.input(1)
    if node.dtype(1) != node.dtype(0):
        # ONNX allows mixed types (float base, int exponent...); Relay's power needs one.
        exponent = relay.cast(exponent, node.dtype(0))
    return relay.power(base, exponent)


@converter("Mod", 10)
def _mod(node):
    # fmod=1: C's fmod (sign of the dividend); fmod=0: Python's % (sign of the divisor).
    op = relay.trunc_mod if node.attr("fmod", 0) else relay.floor_mod
    return op(node.input(0), node.input(1))


# ---------------------------------------------------------------------------------------------
# variadic: Sum, Mean, Min, Max fold their (broadcast) inputs pairwise
def _variadic(op, mean=False):
    def convert(node):
        inputs = [x for x in node.inputs if x is not None]
        node.expect(inputs, "needs at least one input")
        out = inputs[0]
        for x in inputs[1:]:
            out = op(out, x)
        if len(inputs) == 1:
            out = relay.copy(out)
        if mean and len(inputs) > 1:
            out = relay.divide(out, node.const(len(inputs)))
        return out
    return convert


converter("Sum", 1)(_variadic(relay.add))
converter("Mean", 1)(_variadic(relay.add, mean=True))
converter("Max", 1)(_variadic(relay.maximum))
converter("Min", 1)(_variadic(relay.minimum))


# ---------------------------------------------------------------------------------------------
# activations
@converter("LeakyRelu", 1)
def _leaky_relu(node):
    return relay.nn.leaky_relu(node.input(0), alpha=node.attr("alpha", 0.01))


@converter("Elu", 1)
def _elu(node):
    x, alpha = node.input(0), node.attr("alpha", 1.0)
    # alpha * (exp(x) - 1) where x < 0, x elsewhere
    negative = relay.multiply(node.const(alpha), relay.subtract(relay.exp(x), node.const(1.0)))
    return relay.where(relay.less(x, node.const(0.0)), negative, x)


@converter("Selu", 1)
def _selu(node):
    x = node.input(0)
    alpha, gamma = node.attr("alpha", 1.67326319217681884765625), \
        node.attr("gamma", 1.05070102214813232421875)
    negative = relay.multiply(node.const(alpha), relay.subtract(relay.exp(x), node.const(1.0)))
    inner = relay.where(relay.greater(x, node.const(0.0)), x, negative)
    return relay.multiply(node.const(gamma), inner)


@converter("PRelu", 1)
def _prelu(node):
    x, slope = node.input(0), node.input(1)
    return relay.where(relay.less(x, node.const(0.0)), relay.multiply(x, slope), x)


@converter("ThresholdedRelu", 10)
def _thresholded_relu(node):
    x = node.input(0)
    return relay.where(relay.greater(x, node.const(node.attr("alpha", 1.0))), x,
                       relay.zeros_like(x))


@converter("Softplus", 1)
def _softplus(node):
    return relay.log(relay.add(relay.exp(node.input(0)), node.const(1.0)))


@converter("Softsign", 1)
def _softsign(node):
    x = node.input(0)
    return relay.divide(x, relay.add(relay.abs(x), node.const(1.0)))


def hard_sigmoid(node, x, alpha, beta):
    """max(0, min(1, alpha * x + beta)): HardSigmoid, and the gate of HardSwish."""
    return relay.clip(relay.add(relay.multiply(x, node.const(alpha)), node.const(beta)), 0, 1)


@converter("HardSigmoid", 1)
def _hard_sigmoid(node):
    return hard_sigmoid(node, node.input(0), node.attr("alpha", 0.2), node.attr("beta", 0.5))


@converter("HardSwish", 14)
def _hard_swish(node):
    x = node.input(0)
    return relay.multiply(x, hard_sigmoid(node, x, 1.0 / 6, 0.5))


@converter("Gelu", 20)
def _gelu(node):
    x = node.input(0)
    half, one = node.const(0.5), node.const(1.0)
    if node.attr("approximate", "none") == "tanh":
        # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        cube = relay.multiply(relay.multiply(x, x), x)
        inner = relay.add(x, relay.multiply(node.const(0.044715), cube))
        gate = relay.tanh(relay.multiply(node.const(math.sqrt(2 / math.pi)), inner))
    else:  # exact: 0.5 x (1 + erf(x / sqrt(2)))
        gate = relay.erf(relay.multiply(x, node.const(1 / math.sqrt(2))))
    return relay.multiply(relay.multiply(half, x), relay.add(one, gate))


def _softmax(op, since_13):
    def convert(node):
        x, rank = node.input(0), node.ndim(0)
        axis = node.attr("axis", -1 if since_13 else 1)
        axis = axis + rank if axis < 0 else axis
        if since_13 or axis == rank - 1:
            return op(x, axis=axis)
        # Before opset 13 the input is seen as 2-D: [dims before axis] x [axis and after].
        shape = node.shape(0)
        flat = relay.reshape(x, (math.prod(shape[:axis]), math.prod(shape[axis:])))
        return relay.reshape(op(flat, axis=1), shape)
    return convert


for _onnx_op, _relay_op in (("Softmax", relay.nn.softmax), ("LogSoftmax", relay.nn.log_softmax)):
    converter(_onnx_op, 1)(_softmax(_relay_op, False))
    converter(_onnx_op, 13)(_softmax(_relay_op, True))


# ---------------------------------------------------------------------------------------------
# Cast, CastLike, Clip, Where
def _cast_target(node, to):
    if isinstance(to, str):  # opset 1 spelled the type ("FLOAT")
        from onnx import TensorProto

        to = TensorProto.DataType.Value(to.upper())
    return onnx_dtype(to, f"Cast node {node.name!r}")


@converter("Cast", 1)
def _cast(node):
    return relay.cast(node.input(0), _cast_target(node, node.attr("to")))


@converter("CastLike", 15)
def _cast_like(node):
    return relay.cast(node.input(0), node.dtype(1))


def _clip_bounds(node, low, high):
    x, dtype = node.input(0), to_numpy_dtype(node.dtype(0))
    if low is None and high is None:
        return relay.copy(x)
    static = all(b is None or b.ndim == 0 or b.size == 1 for b in (low, high))
    if static:
        lowest, highest = (np.iinfo(dtype).min, np.iinfo(dtype).max) if dtype.kind in "iu" \
            else (-np.inf, np.inf)
        a_min = lowest if low is None else low.item()
        a_max = highest if high is None else high.item()
        if a_min <= a_max:
            return relay.clip(x, a_min, a_max)
    # min > max: ONNX's result is max everywhere, which max-then-min gives.
    if low is not None:
        x = relay.maximum(x, node.const(low))
    if high is not None:
        x = relay.minimum(x, node.const(high))
    return x


@converter("Clip", 1)
def _clip_v1(node):
    low, high = node.attr("min"), node.attr("max")
    return _clip_bounds(node, None if low is None else np.asarray(low),
                        None if high is None else np.asarray(high))


@converter("Clip", 11)
def _clip_v11(node):
    out = node.input(0)
    low, high = node.input(1), node.input(2)
    static = [node.try_value(i) for i in (1, 2)]
    if all(v is not None or node.input(i) is None for v, i in zip(static, (1, 2))):
        return _clip_bounds(node, *static)
    # bounds computed from graph inputs: elementwise maximum/minimum
    if low is not None:
        out = relay.maximum(out, low)
    if high is not None:
        out = relay.minimum(out, high)
    return out


@converter("Where", 9)
def _where(node):
    return relay.where(node.input(0), node.input(1), node.input(2))


# ---------------------------------------------------------------------------------------------
# reductions
def _reduce_axes(node, from_input):
    """The axes to reduce (None: all), or "noop" when noop_with_empty_axes keeps the input."""
    axes = node.value_or(1, None) if from_input else node.attr("axes")
    if axes is not None and len(axes) == 0:
        axes = None
    if axes is None and node.attr("noop_with_empty_axes", 0):
        return "noop"
    return None if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)]


def _reduction(build):
    def make(from_input):
        def convert(node):
            axes = _reduce_axes(node, from_input)
            if axes == "noop":
                return relay.copy(node.input(0))
            return build(node, node.input(0), axes, bool(node.attr("keepdims", 1)))
        return convert
    return make


def _simple(op):
    return _reduction(lambda node, x, axes, keep: op(x, axis=axes, keepdims=keep))


def _square_sum(node, x, axes, keep):
    return relay.sum(relay.multiply(x, x), axis=axes, keepdims=keep)


_REDUCTIONS = {
    "ReduceSum": _simple(relay.sum), "ReduceMean": _simple(relay.mean),
    "ReduceMax": _simple(relay.max), "ReduceMin": _simple(relay.min),
    "ReduceProd": _simple(relay.prod), "ReduceLogSumExp": _simple(relay.logsumexp),
    "ReduceSumSquare": _reduction(_square_sum),
    "ReduceL1": _reduction(lambda n, x, a, k: relay.sum(relay.abs(x), axis=a, keepdims=k)),
    "ReduceL2": _reduction(lambda n, x, a, k: relay.sqrt(_square_sum(n, x, a, k))),
    "ReduceLogSum": _reduction(lambda n, x, a, k: relay.log(relay.sum(x, axis=a, keepdims=k))),
}
for _onnx_op, _make in _REDUCTIONS.items():
    # Axes moved from an attribute to an input: ReduceSum at opset 13, the others at 18.
    converter(_onnx_op, 1)(_make(False))
    converter(_onnx_op, 13 if _onnx_op == "ReduceSum" else 18)(_make(True))


def _arg_reduce(op):
    def convert(node):
        out = op(node.input(0), axis=node.attr("axis", 0), keepdims=bool(node.attr("keepdims", 1)),
                 select_last_index=bool(node.attr("select_last_index", 0)))
        return relay.cast(out, "int64")  # Relay's arg-reductions give int32, ONNX's int64
    return convert


converter("ArgMax", 1)(_arg_reduce(relay.argmax))
converter("ArgMin", 1)(_arg_reduce(relay.argmin))


# ---------------------------------------------------------------------------------------------
# matrix products
@converter("MatMul", 1)
def _matmul(node):
    a, b = node.input(0), node.input(1)
    a_shape, b_shape = node.shape(0), node.shape(1)
    node.expect(a_shape and b_shape, "MatMul of a scalar")
    a_vector, b_vector = len(a_shape) == 1, len(b_shape) == 1
    if a_vector:  # numpy's rule: a vector is a row on the left, a column on the right
        a, a_shape = relay.expand_dims(a, 0), (1,) + a_shape
    if b_vector:
        b, b_shape = relay.expand_dims(b, 1), b_shape + (1,)
    if len(b_shape) == 2:
        out = relay.nn.dense(a, relay.transpose(b, (1, 0)))
        out_shape = a_shape[:-1] + b_shape[-1:]
    else:
        batch = broadcast_shapes(a_shape[:-2], b_shape[:-2], _Raise(node))
        (m, k), n = a_shape[-2:], b_shape[-1]
        if a_shape[:-2] != batch:
            a = relay.broadcast_to(a, batch + (m, k))
        if b_shape[:-2] != batch:
            b = relay.broadcast_to(b, batch + (k, n))
        a3, b3 = relay.reshape(a, (-1, m, k)), relay.reshape(b, (-1, k, n))
        # TVM's default: an "NT" batch_matmul of a and the transposed b.
        out = relay.nn.batch_matmul(a3, relay.transpose(b3, (0, 2, 1)))
        out_shape = batch + (m, n)
        out = relay.reshape(out, out_shape)
    if a_vector or b_vector:
        keep = [d for i, d in enumerate(out_shape)
                if not (a_vector and i == len(out_shape) - 2)
                and not (b_vector and i == len(out_shape) - 1)]
        out = relay.reshape(out, keep)
    return out


class _Raise:
    """A relation context stand-in that reports through the node."""

    def __init__(self, node):
        self.node = node

    def fail(self, message):
        self.node.fail(message)


@converter("Gemm", 1)
def _gemm(node):
    a, b, c = node.input(0), node.input(1), node.input(2)
    node.expect(node.ndim(0) == 2 and node.ndim(1) == 2,
                f"A and B must be matrices, got shapes {node.shape(0)} and {node.shape(1)}")
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    if node.attr("transA", 0):
        a = relay.transpose(a, (1, 0))
    if not node.attr("transB", 0):
        b = relay.transpose(b, (1, 0))  # dense wants B as (N, K)
    if alpha != 1.0:
        a = relay.multiply(a, node.const(alpha))
    out = relay.nn.dense(a, b)
    if c is None:
        return out
    if beta != 1.0:
        c = relay.multiply(c, node.const(beta))
    return relay.add(out, c)
