"""The ONNX op converters of the Relax frontend: ``fn(node) -> value(s)``.

A value is a Relax expression (emitted with ``node.emit``), a numpy array (known at import
time: folded, never emitted) or a ``Shape`` (a 1-D int64 tensor of dims that may be symbolic,
what ``Shape`` nodes make). Each converter folds when its inputs are known and emits a Relax
op otherwise.
"""

from __future__ import annotations

import numpy as np

from irlab import tir
from irlab.relax import op as R
from irlab.relax.expr import TupleGetItem, const
from irlab.relay.frontend.onnx_common import onnx_dtype, tensor_to_array
from irlab.relay.frontend.onnx_nn import explicit_pads, window_geometry

CONVERTERS: dict = {}


def converter(*op_types):
    def register(fn):
        for op_type in op_types:
            CONVERTERS[op_type] = fn
        return fn
    return register


class Shape:
    """A shape as an import-time value: ``dims`` (ints or int64 PrimExprs); ``scalar`` for one
    dim picked out by a scalar Gather."""

    __slots__ = ("dims", "scalar")

    def __init__(self, dims, scalar=False):
        self.dims = tuple(dims)
        self.scalar = scalar

    @property
    def is_static(self) -> bool:
        return all(isinstance(d, (int, np.integer)) for d in self.dims)

    def __repr__(self):
        return f"Shape({list(self.dims)}{', scalar' if self.scalar else ''})"


def _as_shape(value):
    """A known int value (numpy or Shape) as a Shape, or None."""
    if isinstance(value, Shape):
        return value
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu" and value.ndim <= 1:
        return Shape([int(v) for v in np.ravel(value)], scalar=value.ndim == 0)
    return None


def _dim(d):
    """A dim as Python int when constant."""
    if isinstance(d, tir.IntImm):
        return int(d.value)
    return int(d) if isinstance(d, (int, np.integer)) else d


def _prod(dims):
    out = 1
    for d in dims:
        out = out * d if not (isinstance(out, int) and out == 1) else d
    return _dim(out)


# ---------------------------------------------------------------------------------------------
# elementwise
_BINARY = {"Add": (R.add, np.add), "Sub": (R.subtract, np.subtract),
           "Mul": (R.multiply, np.multiply), "Div": (R.divide, None),
           "Pow": (R.power, np.power)}


@converter(*_BINARY)
def _binary(node):
    a, b = node.known(0), node.known(1)
    relax_op, fold = _BINARY[node.op_type]
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if node.op_type == "Div":
            return (a // b if a.dtype.kind in "iu" else a / b).astype(a.dtype)
        return fold(a, b).astype(a.dtype)
    sa, sb = _as_shape(a), _as_shape(b)
    if sa is not None and sb is not None and (isinstance(a, Shape) or isinstance(b, Shape)):
        return _shape_arith(node.op_type, sa, sb)
    return node.emit(relax_op(node.x(0), node.x(1)))


def _shape_arith(op_type, a, b):
    n = max(len(a.dims), len(b.dims))
    da = a.dims * n if len(a.dims) == 1 else a.dims
    db = b.dims * n if len(b.dims) == 1 else b.dims
    ops = {"Add": lambda x, y: x + y, "Sub": lambda x, y: x - y, "Mul": lambda x, y: x * y,
           "Div": lambda x, y: x // y if isinstance(x, int) and isinstance(y, int)
           else tir.floordiv(x, y)}
    return Shape([_dim(ops[op_type](x, y)) for x, y in zip(da, db)],
                 scalar=a.scalar and b.scalar)


_UNARY = {"Relu": R.nn.relu, "Sigmoid": R.sigmoid, "Tanh": R.tanh, "Exp": R.exp, "Log": R.log,
          "Sqrt": R.sqrt, "Erf": R.erf, "Neg": R.negative, "Abs": R.abs, "Floor": R.floor,
          "Ceil": R.ceil}


@converter(*_UNARY)
def _unary(node):
    return node.emit(_UNARY[node.op_type](node.x(0)))


@converter("Gelu")
def _gelu(node):
    node.expect(node.attr("approximate", "none") == "none", "only approximate='none'")
    return node.emit(R.nn.gelu(node.x(0)))


@converter("Reciprocal")
def _reciprocal(node):
    return node.emit(R.divide(const(1.0, node.dtype(0)), node.x(0)))


@converter("Identity", "Dropout")
def _identity(node):
    return node.values[0]


@converter("Cast")
def _cast(node):
    dtype = onnx_dtype(node.attr("to"), f"Cast node {node.name!r}")
    value = node.known(0)
    if isinstance(value, np.ndarray):
        return value.astype(dtype)
    if isinstance(value, Shape):
        return value
    return node.emit(R.astype(node.x(0), dtype))


# ---------------------------------------------------------------------------------------------
# constants and shapes
@converter("Constant")
def _constant(node):
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in node.attrs:
            value = node.attrs[key]
            if key == "value":
                return tensor_to_array(value, f"Constant node {node.name!r}")
            return np.asarray(value, np.float32 if "float" in key else np.int64)
    node.fail("only value/value_float(s)/value_int(s) constants are supported")


@converter("Shape")
def _shape(node):
    dims = [_dim(d) for d in node.shape(0)]
    start, end = node.attr("start", 0), node.attr("end", len(dims))
    return Shape(dims[start:end])


@converter("Gather")
def _gather(node):
    axis = node.attr("axis", 0)
    data, indices = node.known(0), node.known(1)
    shape = _as_shape(data) if isinstance(data, Shape) else None
    if isinstance(indices, np.ndarray) and (shape is not None or isinstance(data, np.ndarray)):
        if shape is not None:
            picked = [shape.dims[int(i)] for i in np.ravel(indices)]
            return Shape(picked, scalar=indices.ndim == 0)
        return np.take(data, indices, axis=axis)
    return node.emit(R.take(node.x(0), node.x(1), axis=axis))


@converter("Concat")
def _concat(node):
    axis = node.attr("axis")
    values = [node.known(i) for i in range(len(node.values))]
    if all(isinstance(v, np.ndarray) for v in values):
        return np.concatenate(values, axis=axis)
    shapes = [_as_shape(v) for v in values]
    if all(s is not None for s in shapes) and any(isinstance(v, Shape) for v in values):
        return Shape([d for s in shapes for d in s.dims])
    return node.emit(R.concat([node.x(i) for i in range(len(node.values))], axis=axis))


def _axes(node, index=1):
    """Axes from the attribute (older opsets) or the second input (newer ones)."""
    if node.has_input(index):
        return node.ints(index)
    return list(node.attr("axes") or [])


@converter("Unsqueeze")
def _unsqueeze(node):
    axes = _axes(node)
    value = node.known(0)
    if isinstance(value, Shape) and value.scalar and axes in ([0], [-1]):
        return Shape(value.dims)
    if isinstance(value, np.ndarray):
        return np.expand_dims(value, axes)
    return node.emit(R.expand_dims(node.x(0), axes))


@converter("Squeeze")
def _squeeze(node):
    axes = _axes(node) or None
    value = node.known(0)
    if isinstance(value, np.ndarray):
        return np.squeeze(value, tuple(axes) if axes else None)
    return node.emit(R.squeeze(node.x(0), axes))


# ---------------------------------------------------------------------------------------------
# layout
@converter("Reshape")
def _reshape(node):
    dims_in = node.shape(0)
    target = node.ints(1)
    out = []
    for k, d in enumerate(target):
        if isinstance(d, int) and d == 0 and not node.attr("allowzero", 0):
            d = _dim(dims_in[k])
        out.append(d)
    if any(isinstance(d, int) and d == -1 for d in out):
        known = _prod([d for d in out if not (isinstance(d, int) and d == -1)])
        total = _prod([_dim(d) for d in dims_in])
        missing = total // known if isinstance(total, int) and isinstance(known, int) \
            else _dim(tir.floordiv(total, known))
        out = [missing if isinstance(d, int) and d == -1 else d for d in out]
    return node.emit(R.reshape(node.x(0), out))


@converter("Flatten")
def _flatten(node):
    dims = [_dim(d) for d in node.shape(0)]
    axis = node.attr("axis", 1) % max(len(dims), 1)
    return node.emit(R.reshape(node.x(0), [_prod(dims[:axis]), _prod(dims[axis:])]))


@converter("Transpose")
def _transpose(node):
    perm = node.attr("perm")
    return node.emit(R.permute_dims(node.x(0), list(perm) if perm else None))


# ---------------------------------------------------------------------------------------------
# linear algebra and normalization
@converter("MatMul")
def _matmul(node):
    return node.emit(R.matmul(node.x(0), node.x(1)))


@converter("Gemm")
def _gemm(node):
    a, b = node.x(0), node.x(1)
    if node.attr("transA", 0):
        a = node.emit(R.permute_dims(a, [1, 0]))
    if node.attr("transB", 0):
        b = node.emit(R.permute_dims(b, [1, 0]))
    y = node.emit(R.matmul(a, b))
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    if alpha != 1.0:
        y = node.emit(R.multiply(y, const(alpha, node.dtype(0))))
    if node.has_input(2):
        c = node.x(2)
        if beta != 1.0:
            c = node.emit(R.multiply(c, const(beta, node.dtype(0))))
        y = node.emit(R.add(y, c))
    return y


@converter("Softmax", "LogSoftmax")
def _softmax(node):
    default = -1 if node.opset >= 13 else 1
    fn = R.nn.softmax if node.op_type == "Softmax" else R.nn.log_softmax
    return node.emit(fn(node.x(0), axis=node.attr("axis", default)))


@converter("LayerNormalization")
def _layer_norm(node):
    ndim = len(node.shape(0))
    axis = node.attr("axis", -1) % ndim
    gamma = node.x(1)
    beta = node.x(2) if node.has_input(2) else R.zeros(node.shape(1), node.dtype(0))
    return node.emit(R.nn.layer_norm(node.x(0), gamma, beta, axes=list(range(axis, ndim)),
                                     epsilon=node.attr("epsilon", 1e-5)))


@converter("BatchNormalization")
def _batch_norm(node):
    out = node.emit(R.nn.batch_norm(*[node.x(i) for i in range(5)], axis=1,
                                    epsilon=node.attr("epsilon", 1e-5)))
    return node.emit(TupleGetItem(out, 0))


_REDUCE = {"ReduceMean": R.mean, "ReduceSum": R.sum, "ReduceMax": R.max, "ReduceMin": R.min}


@converter(*_REDUCE)
def _reduce(node):
    axes = list(node.attr("axes") or []) if node.op_type != "ReduceSum" or node.opset < 13 \
        else (node.ints(1) if node.has_input(1) else [])
    if not axes and node.op_type != "ReduceSum" and node.opset >= 18 and node.has_input(1):
        axes = node.ints(1)
    return node.emit(_REDUCE[node.op_type](node.x(0), axis=axes or None,
                                           keepdims=bool(node.attr("keepdims", 1))))


# ---------------------------------------------------------------------------------------------
# convolution and pooling (2-D, NCHW)
def _geometry(node, kernel):
    strides, dilations = window_geometry(node, kernel)
    sizes = [_dim(d) for d in node.shape(0)[2:]]
    if node.attr("auto_pad", "NOTSET") in ("SAME_UPPER", "SAME_LOWER"):
        node.expect(all(isinstance(s, int) for s in sizes),
                    "auto_pad SAME needs static spatial sizes")
    pads = explicit_pads(node, sizes, kernel, strides, dilations)
    node.expect(len(kernel) == 2, f"{len(kernel)}-D windows are not supported (2-D are)")
    return strides, dilations, (pads[0], pads[1], pads[2], pads[3])


@converter("Conv")
def _conv(node):
    kernel = list(node.attr("kernel_shape") or [_dim(d) for d in node.shape(1)[2:]])
    strides, dilations, padding = _geometry(node, kernel)
    y = node.emit(R.nn.conv2d(node.x(0), node.x(1), strides=strides, padding=padding,
                              dilation=dilations, groups=node.attr("group", 1)))
    if node.has_input(2):
        bias = node.x(2)
        y = node.emit(R.add(y, node.emit(R.reshape(bias, [1, _dim(node.shape(2)[0]), 1, 1]))))
    return y


@converter("MaxPool", "AveragePool")
def _pool(node):
    kernel = list(node.attr("kernel_shape"))
    strides, dilations, padding = _geometry(node, kernel)
    ceil = bool(node.attr("ceil_mode", 0))
    if node.op_type == "MaxPool":
        return node.emit(R.nn.max_pool2d(node.x(0), kernel, strides, padding, dilations,
                                         ceil_mode=ceil))
    return node.emit(R.nn.avg_pool2d(node.x(0), kernel, strides, padding, dilations,
                                     ceil_mode=ceil,
                                     count_include_pad=bool(node.attr("count_include_pad", 0))))


@converter("GlobalAveragePool")
def _global_avg_pool(node):
    return node.emit(R.nn.adaptive_avg_pool2d(node.x(0), (1, 1)))
