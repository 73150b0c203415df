"""What the ONNX converters share: the converter table, the node view a converter works on
(inputs, attributes, static types and values), ONNX dtypes and import-time evaluation."""

from __future__ import annotations

import numpy as np

from irlab.errors import FrontendError, IrlabError
from irlab.runtime.dtype import to_numpy_dtype
from irlab.ir.op import Op
from irlab.ir.type import TensorType, TupleType
from irlab.relay.expr import Call, Constant, Tuple, TupleGetItem, TupleWrapper, Var, const
from irlab.relay.type_relation import TypeRelationError, infer_call_type

# ---------------------------------------------------------------------------------------------
# the converter table: op type -> {first opset version -> converter}
CONVERTERS: dict[str, dict[int, object]] = {}


def converter(op_type: str, *versions: int):
    """Register the decorated ``fn(node)`` as the converter of ``op_type`` from each opset
    version in ``versions`` on (until a later registered version takes over)."""
    def register(fn):
        for version in versions or (1,):
            table = CONVERTERS.setdefault(op_type, {})
            if version in table:
                raise IrlabError(f"two ONNX converters for {op_type} version {version}")
            table[version] = fn
        return fn
    return register


def get_converter(op_type: str, opset: int):
    """The converter for ``op_type`` at ``opset`` (the newest version <= opset), or None."""
    table = CONVERTERS.get(op_type)
    if not table:
        return None
    usable = [v for v in table if v <= opset]
    return table[max(usable)] if usable else None


# ---------------------------------------------------------------------------------------------
# ONNX element types (TensorProto.DataType) as irlab dtypes
ONNX_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
               7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64"}


def onnx_dtype(elem_type: int, what: str) -> str:
    """The irlab dtype of an ONNX element type; a FrontendError for the ones irlab lacks."""
    if elem_type in ONNX_DTYPES:
        return ONNX_DTYPES[elem_type]
    try:
        from onnx import TensorProto

        name = TensorProto.DataType.Name(elem_type)
    except (ImportError, ValueError):
        name = str(elem_type)
    raise FrontendError(f"{what}: element type {name} is not supported (irlab has "
                        f"{', '.join(sorted(set(ONNX_DTYPES.values())))})")


def constant(value, span=None):
    """A Relay constant keeping the array's dtype (``relay.const`` narrows 64-bit arrays)."""
    array = np.asarray(value)
    return const(array, array.dtype.name, span=span)


def tensor_to_array(proto, what: str) -> np.ndarray:
    """The numpy value of a TensorProto (an initializer or a tensor attribute)."""
    from onnx import numpy_helper

    dtype = onnx_dtype(proto.data_type, what)
    if proto.data_location == 1:  # TensorProto.EXTERNAL
        raise FrontendError(f"{what}: tensors stored in external files are not supported; "
                            f"load the model with onnx.load(path) first")
    try:
        array = numpy_helper.to_array(proto)
    except Exception as err:  # protobuf/numpy say "cannot reshape array of size ..."
        raise FrontendError(f"{what}: its data does not match its shape {tuple(proto.dims)} "
                            f"and type ({type(err).__name__}: {err})") from None
    return np.asarray(array).astype(to_numpy_dtype(dtype), copy=False)


# ---------------------------------------------------------------------------------------------
# import-time evaluation of expressions whose inputs are all known
class NotStatic(Exception):
    """An expression depends on a graph input: its value is unknown at import time."""

    def __init__(self, var):
        super().__init__(var.name_hint)
        self.var = var


def type_of(expr, memo: dict):
    """The type of ``expr``, computing only the nodes not in ``memo`` with their relations."""
    stack = [expr]
    while stack:
        node = stack[-1]
        if node in memo:
            stack.pop()
            continue
        children = _children(node)
        missing = [c for c in children if c not in memo]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        memo[node] = _node_type(node, memo)
    return memo[expr]


def _children(node):
    if isinstance(node, Call):
        return list(node.args)
    if isinstance(node, Tuple):
        return list(node.fields)
    if isinstance(node, TupleGetItem):
        return [node.tuple_value]
    return []


def _node_type(node, memo):
    if isinstance(node, Var):
        return node.type_annotation
    if isinstance(node, Constant):
        return TensorType(node.data.shape, node.data.dtype)
    if isinstance(node, Tuple):
        return TupleType([memo[f] for f in node.fields])
    if isinstance(node, TupleGetItem):
        return memo[node.tuple_value].fields[node.index]
    if isinstance(node, Call) and isinstance(node.op, Op):
        try:
            return infer_call_type(node.op, [memo[a] for a in node.args], node.attrs)
        except TypeRelationError as err:  # name the Relay op the converter built
            raise TypeRelationError(f"{node.op.name}: {err}") from None
    raise FrontendError(f"internal: cannot type a {type(node).__name__} during import")


def evaluate(expr, types: dict, values: dict, params: dict):
    """The numpy value of ``expr`` (with the ops' reference implementations); ``params`` holds
    the values of variables that are known (initializers), anything else raises NotStatic."""
    stack = [expr]
    while stack:
        node = stack[-1]
        if node in values:
            stack.pop()
            continue
        missing = [c for c in _children(node) if c not in values]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        if isinstance(node, Var):
            if node.name_hint not in params:
                raise NotStatic(node)
            values[node] = params[node.name_hint]
        elif isinstance(node, Constant):
            values[node] = node.data.numpy()
        elif isinstance(node, Tuple):
            values[node] = tuple(values[f] for f in node.fields)
        elif isinstance(node, TupleGetItem):
            values[node] = values[node.tuple_value][node.index]
        else:
            out_type = type_of(node, types)
            result = node.op.reference([values[a] for a in node.args], node.attrs, out_type)
            if isinstance(out_type, TupleType):
                values[node] = tuple(np.asarray(r) for r in result)
            else:
                values[node] = np.asarray(result).astype(to_numpy_dtype(out_type.dtype),
                                                         copy=False)
    return values[expr]


# ---------------------------------------------------------------------------------------------
# the view of one node that a converter works on
class OnnxNode:
    """One ONNX node during conversion: ``inputs`` (Relay expressions, None for an omitted
    optional input), ``attrs`` (parsed attributes), ``opset``, ``name`` and helpers that read
    static types and import-time values through the importer."""

    def __init__(self, proto, name, inputs, attrs, opset, importer):
        self.proto = proto
        self.op_type = proto.op_type
        self.name = name
        self.inputs = list(inputs)
        self.attrs = attrs
        self.opset = opset
        self.num_outputs = len(proto.output)
        self._importer = importer

    def __repr__(self):
        return f"<ONNX node {self.name!r} ({self.op_type})>"

    # -- attributes and inputs ----------------------------------------------------------------
    def attr(self, key, default=None):
        return self.attrs.get(key, default)

    def input(self, i):
        """Input ``i``, or None when it is omitted (past the end or named "")."""
        return self.inputs[i] if i < len(self.inputs) else None

    def has_input(self, i) -> bool:
        return self.input(i) is not None

    def output_used(self, i) -> bool:
        """Whether output ``i`` is requested (optional outputs are named "" or left off)."""
        return i < len(self.proto.output) and self.proto.output[i] != ""

    # -- static facts ----------------------------------------------------------------------
    def type(self, i_or_expr) -> TensorType:
        expr = self.input(i_or_expr) if isinstance(i_or_expr, int) else i_or_expr
        if expr is None:
            self.fail(f"input {i_or_expr} is required")
        return self._importer.type_of(expr, self)

    def shape(self, i_or_expr) -> tuple:
        return tuple(self.type(i_or_expr).shape)

    def dtype(self, i_or_expr) -> str:
        return self.type(i_or_expr).dtype

    def ndim(self, i_or_expr) -> int:
        return len(self.shape(i_or_expr))

    def value(self, i, what=None) -> np.ndarray:
        """The value of input ``i``, which must be known at import time (static shapes)."""
        expr = self.input(i)
        if expr is None:
            self.fail(f"input {i} is required")
        return self._importer.static_value(expr, self, what or f"input {i}")

    def value_or(self, i, default):
        """The static value of optional input ``i``, or ``default`` when it is omitted."""
        return default if self.input(i) is None else self.value(i)

    def try_value(self, i):
        """The value of input ``i`` if it is known at import time, else None."""
        expr = self.input(i)
        return None if expr is None else self._importer.static_value(expr, self, "", False)

    def const(self, value, dtype=None):
        """A Relay constant; its dtype defaults to input 0's (ONNX ops keep the data's dtype)."""
        return constant(np.asarray(value, dtype=to_numpy_dtype(dtype or self.dtype(0))))

    def fail(self, message):
        raise FrontendError(f"{self.op_type} node {self.name!r}: {message}")

    def expect(self, condition, message):
        if not condition:
            self.fail(message)


def unpack(result, num: int):
    """A converter's result as a list of ``num`` expressions (None for absent outputs)."""
    if isinstance(result, TupleWrapper):
        return [result[i] for i in range(len(result))][:num] + [None] * (num - len(result))
    if isinstance(result, (list, tuple)) and not isinstance(result, Tuple):
        items = list(result)
        return items[:num] + [None] * (num - len(items))
    return [result] + [None] * (num - 1)
