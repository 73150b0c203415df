"""ONNX converters for tensor plumbing: constants and shapes (folded at import time), reshaping,
slicing, gathering, concatenation, splitting, padding and tiling."""

from __future__ import annotations

import math

import numpy as np

from irlab import relay
from irlab.relay.frontend.onnx_common import constant, converter, tensor_to_array
from irlab.relay.op.op_common import broadcast_shapes


def _axis(node, axis, rank):
    node.expect(-rank <= axis < max(rank, 1), f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _ints(values):
    return [int(v) for v in np.asarray(values).reshape(-1)]


# ---------------------------------------------------------------------------------------------
# constants and shapes: their values are known at import time
@converter("Constant", 1)
def _constant(node):
    for key in ("value_float", "value_int", "value_floats", "value_ints"):
        if key in node.attrs:
            dtype = "float32" if "float" in key else "int64"
            return constant(np.asarray(node.attrs[key], dtype=dtype))
    if "value" in node.attrs:
        return constant(tensor_to_array(node.attrs["value"], f"Constant node {node.name!r}"))
    node.fail(f"only tensor, float and int constants are supported (attributes: "
              f"{sorted(node.attrs)})")


@converter("ConstantOfShape", 9)
def _constant_of_shape(node):
    shape = _ints(node.value(0, "the shape"))
    fill = node.attr("value")
    fill = np.zeros(1, np.float32) if fill is None else tensor_to_array(fill, node.name)
    return constant(np.full(shape, fill.reshape(-1)[0], dtype=fill.dtype))


@converter("Shape", 1)
def _shape(node):
    shape = node.shape(0)
    # start/end (opset 15) slice the shape with Python's clamping rules.
    shape = shape[node.attr("start", 0):node.attr("end", len(shape))]
    return constant(np.asarray(shape, dtype=np.int64).reshape(len(shape)))


@converter("Size", 1)
def _size(node):
    return constant(np.asarray(math.prod(node.shape(0)), dtype=np.int64))


@converter("Range", 11)
def _range(node):
    start, limit, delta = (node.value(i).item() for i in range(3))
    return constant(np.arange(start, limit, delta, dtype=node.dtype(0)))


@converter("Identity", 1)
def _identity(node):
    return relay.copy(node.input(0))


# ---------------------------------------------------------------------------------------------
# reshaping
@converter("Reshape", 1)
def _reshape_v1(node):
    return relay.reshape(node.input(0), node.attr("shape"))


@converter("Reshape", 5)
def _reshape(node):
    shape = _ints(node.value(1, "the target shape"))
    return relay.reshape(node.input(0), shape, allowzero=bool(node.attr("allowzero", 0)))


@converter("Flatten", 1)
def _flatten(node):
    shape = node.shape(0)
    axis = node.attr("axis", 1)
    axis = axis + len(shape) if axis < 0 else axis  # axis may equal the rank: (n, 1)
    node.expect(0 <= axis <= len(shape), f"axis {node.attr('axis')} is out of range")
    if axis == 1 and len(shape) >= 2:
        return relay.nn.batch_flatten(node.input(0))  # as TVM
    return relay.reshape(node.input(0), (math.prod(shape[:axis]), math.prod(shape[axis:])))


@converter("Transpose", 1)
def _transpose(node):
    perm = node.attr("perm")
    return relay.transpose(node.input(0), None if perm is None else list(perm))


def _squeeze(node, axes):
    rank = node.ndim(0)
    if axes is None:
        return relay.squeeze(node.input(0))
    return relay.squeeze(node.input(0), [_axis(node, a, rank) for a in _ints(axes)])


def _unsqueeze(node, axes):
    node.expect(axes is not None, "needs axes")
    axes = _ints(axes)
    rank = node.ndim(0) + len(axes)
    axes = sorted(_axis(node, a, rank) for a in axes)
    node.expect(len(set(axes)) == len(axes), f"axes {axes} repeat an axis")
    out = node.input(0)
    for axis in axes:  # ascending: each axis is a position in the final shape
        out = relay.expand_dims(out, axis)
    return out


converter("Squeeze", 1)(lambda node: _squeeze(node, node.attr("axes")))
converter("Squeeze", 13)(lambda node: _squeeze(node, node.value_or(1, None)))
converter("Unsqueeze", 1)(lambda node: _unsqueeze(node, node.attr("axes")))
converter("Unsqueeze", 13)(lambda node: _unsqueeze(node, node.value_or(1, None)))


@converter("Expand", 8)
def _expand(node):
    target = tuple(_ints(node.value(1, "the shape")))
    shape = broadcast_shapes(node.shape(0), target, _Fail(node))  # ONNX broadcasts both ways
    return relay.broadcast_to(node.input(0), shape)


class _Fail:
    def __init__(self, node):
        self.node = node

    def fail(self, message):
        self.node.fail(message)


@converter("Tile", 6)
def _tile(node):
    return relay.tile(node.input(0), _ints(node.value(1, "repeats")))


# ---------------------------------------------------------------------------------------------
# joining and splitting
@converter("Concat", 1)
def _concat(node):
    inputs = [x for x in node.inputs if x is not None]
    return relay.concatenate(inputs, axis=node.attr("axis", 1))


def _split(node, sizes):
    x, shape = node.input(0), node.shape(0)
    axis = _axis(node, node.attr("axis", 0), len(shape))
    dim = shape[axis]
    if sizes is None:
        count = node.attr("num_outputs", node.num_outputs)
        chunk = -(-dim // count)  # the last piece is smaller when count does not divide dim
        sizes = [chunk] * (count - 1) + [dim - chunk * (count - 1)]
    sizes = _ints(sizes)
    node.expect(sum(sizes) == dim and min(sizes) >= 0,
                f"split sizes {sizes} do not add up to the axis size {dim}")
    offsets = np.cumsum([0] + sizes).tolist()
    if 0 in sizes:  # Relay's split needs increasing indices: empty pieces are slices
        return [relay.strided_slice(x, [b], [e], axes=[axis])
                for b, e in zip(offsets[:-1], offsets[1:])]
    sections = len(sizes) if len(set(sizes)) == 1 else offsets[1:-1]
    return relay.split(x, sections, axis=axis)


converter("Split", 1)(lambda node: _split(node, node.attr("split")))
converter("Split", 13)(lambda node: _split(node, node.value_or(1, None)))


# ---------------------------------------------------------------------------------------------
# slicing and gathering
def _slice(node, starts, ends, axes, steps):
    rank = node.ndim(0)
    starts, ends = _ints(starts), _ints(ends)
    axes = list(range(len(starts))) if axes is None else [_axis(node, a, rank)
                                                           for a in _ints(axes)]
    steps = [1] * len(starts) if steps is None else _ints(steps)
    node.expect(len(starts) == len(ends) == len(axes) == len(steps),
                f"starts {starts}, ends {ends}, axes {axes} and steps {steps} differ in length")
    return relay.strided_slice(node.input(0), starts, ends, strides=steps, axes=axes)


@converter("Slice", 1)
def _slice_v1(node):
    return _slice(node, node.attr("starts"), node.attr("ends"), node.attr("axes"), None)


@converter("Slice", 10)
def _slice_v10(node):
    return _slice(node, node.value(1, "starts"), node.value(2, "ends"), node.value_or(3, None),
                  node.value_or(4, None))


@converter("Gather", 1)
def _gather(node):
    data, indices = node.input(0), node.input(1)
    axis = _axis(node, node.attr("axis", 0), node.ndim(0))
    known = node.try_value(1)
    if known is None:  # indices computed at run time: negative ones wrap
        return relay.take(data, indices, axis=axis, mode="wrap")
    dim = node.shape(0)[axis]
    if (known < 0).any():  # fold the negative-index fix into the constant, as TVM does
        indices = constant(np.where(known < 0, known + dim, known).astype(known.dtype))
    return relay.take(data, indices, axis=axis)


# ---------------------------------------------------------------------------------------------
# padding
def _pad(node, pads, mode, value):
    x, shape = node.input(0), node.shape(0)
    rank = len(shape)
    pads = _ints(pads)
    node.expect(len(pads) == 2 * rank, f"pads {pads} must have 2 x rank = {2 * rank} values")
    before, after = pads[:rank], pads[rank:]
    grow = [(max(b, 0), max(a, 0)) for b, a in zip(before, after)]
    if mode == "wrap":
        out = _wrap_pad(x, shape, grow)
    elif any(b or a for b, a in grow):
        node.expect(mode in ("constant", "reflect", "edge"), f"unknown pad mode {mode!r}")
        fill = value if value is not None else node.const(0)
        out = relay.nn.pad(x, grow, pad_value=fill, pad_mode=mode)
    else:
        out = x
    if min(pads) < 0:  # negative pads crop
        padded = [d + b + a for d, (b, a) in zip(shape, grow)]
        begin = [max(-b, 0) for b in before]
        end = [d - max(-a, 0) for d, a in zip(padded, after)]
        out = relay.strided_slice(out, begin, end)
    return out if out is not x else relay.copy(x)


def _wrap_pad(x, shape, grow):
    """Circular padding: each axis gets its own last cells before and first cells after."""
    for axis, (before, after) in enumerate(grow):
        pieces = []
        if before:
            pieces.append(relay.strided_slice(x, [shape[axis] - before], [shape[axis]],
                                              axes=[axis]))
        pieces.append(x)
        if after:
            pieces.append(relay.strided_slice(x, [0], [after], axes=[axis]))
        if len(pieces) > 1:
            x = relay.concatenate(pieces, axis)
    return x


def _pad_value(node, value):
    return None if value is None else constant(np.asarray(value).reshape(()).astype(
        node.dtype(0)))


@converter("Pad", 1)
def _pad_v1(node):
    pads = node.attr("pads", node.attr("paddings"))
    return _pad(node, pads, node.attr("mode", "constant"), _pad_value(node, node.attr("value")))


@converter("Pad", 11)
def _pad_v11(node):
    pads = _ints(node.value(1, "pads"))
    rank = node.ndim(0)
    axes = node.value_or(3, None)  # opset 18: pads given for these axes only
    if axes is not None:
        axes = [_axis(node, a, rank) for a in _ints(axes)]
        full = [0] * (2 * rank)
        for i, axis in enumerate(axes):
            full[axis], full[axis + rank] = pads[i], pads[i + len(axes)]
        pads = full
    value = node.input(2)
    if value is not None:
        known = node.try_value(2)
        value = _pad_value(node, known) if known is not None else relay.reshape(value, ())
    return _pad(node, pads, node.attr("mode", "constant"), value)
