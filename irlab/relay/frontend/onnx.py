"""ONNX frontend: ``from_onnx(model)`` turns an ONNX model into a Relay module, as TVM's
``relay.frontend.from_onnx``.

The importer walks the graph once, in its (topological) node order. Each node goes to the
converter registered for its op type and opset (``onnx_math``, ``onnx_nn``, ``onnx_tensor``);
what the converter builds gets the node's name as its span, so printed programs, type errors and
graph views speak the model's language. Shapes are static: ``Shape`` and everything computed
from shapes and constants only is folded into constants at import time.
"""

from __future__ import annotations

import warnings

from irlab.errors import FrontendError, IrlabError
from irlab.ir.module import IRModule
from irlab.ir.span import Span
from irlab.ir.type import TensorType
from irlab.relay.expr import Call, Constant, Tuple, TupleGetItem, Var
from irlab.relay.frontend import onnx_math, onnx_nn, onnx_tensor  # noqa: F401 - converters
from irlab.relay.frontend.onnx_proto import (DEFAULT_DOMAINS, declared_type, load_model,
                                             model_opset, parse_attributes)
from irlab.relay.frontend.onnx_common import (CONVERTERS, NotStatic, OnnxNode, constant, evaluate,
                                              get_converter, onnx_dtype, tensor_to_array,
                                              type_of, unpack)
from irlab.relay.function import Function
from irlab.runtime.ndarray import array as nd_array

def supported_ops(opset: int = 21) -> list:
    """The ONNX op types ``from_onnx`` converts at ``opset``."""
    return sorted(op for op in CONVERTERS if get_converter(op, opset) is not None)


def from_onnx(model, shape=None, dtype="float32", opset=None, freeze_params=True):
    """Convert an ONNX model into ``(mod, params)``: a Relay module whose ``main`` takes the
    graph inputs (then, unless ``freeze_params``, the initializers) and the initializer values.

    ``model``: an ``onnx.ModelProto`` (or its serialized bytes, or a file path). ``shape``: a
    dict giving the static shape of inputs whose shape is not fixed in the model. ``dtype``: the
    input dtype where the model does not declare one (a str, or a dict by input name).
    ``opset``: overrides the model's opset. ``freeze_params``: embed initializers as constants
    (True, as TVM's default) or keep them as parameters returned in ``params``.
    """
    model = load_model(model)
    declared = model_opset(model)
    if opset is None:
        opset = declared
    elif opset < declared:
        warnings.warn(f"from_onnx: opset {opset} overrides the model's opset {declared}; "
                      f"that may change how operators convert")
    importer = GraphImporter(shape, dtype, freeze_params)
    return importer.from_onnx(model.graph, int(opset))


# ---------------------------------------------------------------------------------------------
# the importer
class GraphImporter:
    """Converts one ONNX graph (TVM's ``GraphProto``); ``from_onnx`` is its entry point."""

    def __init__(self, shape=None, dtype="float32", freeze_params=True):
        self._shape = dict(shape or {})
        self._dtype = dtype
        self._freeze_params = freeze_params
        self._tensors = {}      # ONNX value name -> Relay expression
        self._static = set()    # names whose value is known at import time (folded)
        self._initializers = {}  # name -> numpy value of every initializer
        self._param_vars = {}   # name -> Var, when initializers stay parameters
        self._inputs = []       # Vars of the graph inputs, in order
        self._types = {}        # expression -> type (shared memo of type_of)
        self._values = {}       # expression -> numpy value (memo of evaluate)
        self._name_counts = {}
        self.opset = None

    # -- the graph ----------------------------------------------------------------------------
    def from_onnx(self, graph, opset: int):
        self.opset = opset
        self._check_supported(graph)
        self._parse_initializers(graph)
        self._parse_inputs(graph)
        for proto in graph.node:
            self._convert_node(proto)
        outputs = [self._output(info) for info in graph.output]
        body = outputs[0] if len(outputs) == 1 else Tuple(outputs)
        params = list(self._inputs)
        if not self._freeze_params:
            used = _free_var_set(body)
            params += [v for v in self._param_vars.values() if v in used]
        func = Function(params, body)
        from irlab.relay.transform import InferType

        try:
            mod = InferType()(IRModule.from_expr(func))
        except IrlabError as err:
            raise FrontendError(f"the imported graph does not type-check: {err}") from None
        values = {} if self._freeze_params else {
            p.name_hint: nd_array(self._initializers[p.name_hint]) for p in params[
                len(self._inputs):]}
        return mod, values

    def _check_supported(self, graph):
        """Every unsupported op type of the graph, with its nodes, in one error."""
        missing = {}
        for index, proto in enumerate(graph.node):
            if proto.domain in DEFAULT_DOMAINS and get_converter(proto.op_type, self.opset):
                continue
            key = proto.op_type if proto.domain in DEFAULT_DOMAINS else \
                f"{proto.domain}.{proto.op_type}"
            missing.setdefault(key, []).append(proto.name or f"#{index}")
        if not missing:
            return
        lines = [f"  {op} (opset {self.opset}): {', '.join(repr(n) for n in nodes)}"
                 for op, nodes in sorted(missing.items())]
        error = FrontendError(f"{len(missing)} ONNX operator type(s) of this model are not "
                              f"supported by irlab's ONNX frontend:\n" + "\n".join(lines))
        error.unsupported = missing
        raise error

    def _parse_initializers(self, graph):
        if graph.sparse_initializer:
            raise FrontendError("sparse initializers are not supported")
        for tensor in graph.initializer:
            if not tensor.name:
                raise FrontendError("an initializer has no name")
            array = tensor_to_array(tensor, f"initializer {tensor.name!r}")
            self._initializers[tensor.name] = array
            span = Span(tensor.name, 0, 0)
            if self._freeze_params:
                expr = constant(array, span=span)
            else:
                expr = Var(tensor.name, TensorType(array.shape, array.dtype.name), span)
                self._param_vars[tensor.name] = expr
            self._tensors[tensor.name] = expr
            self.type_of(expr)  # typed = known: node spans never overwrite it

    def _parse_inputs(self, graph):
        names = [info.name for info in graph.input]
        unknown = [n for n in self._shape if n not in names]
        if unknown:
            raise FrontendError(f"shape= names inputs the graph does not have: {unknown} "
                                f"(graph inputs: {names})")
        for info in graph.input:
            if info.name in self._initializers:
                continue  # old models list their initializers among the inputs too
            if not info.type.HasField("tensor_type"):
                kind = info.type.WhichOneof("value") or "untyped"
                raise FrontendError(f"graph input {info.name!r} is a {kind} value: only tensor "
                                    f"inputs are supported")
            dims, elem_type = declared_type(info)
            if info.name in self._shape:
                dims = tuple(int(d) for d in self._shape[info.name])
            if dims is None or any(d is None for d in dims):
                raise FrontendError(
                    f"graph input {info.name!r} has dynamic dimensions {_show_dims(info)}: "
                    f"irlab imports static shapes only, give them with "
                    f"from_onnx(model, shape={{{info.name!r}: (...)}})")
            dtype = self._dtype.get(info.name) if isinstance(self._dtype, dict) else None
            if dtype is None:
                dtype = onnx_dtype(elem_type, f"graph input {info.name!r}") if elem_type else \
                    (self._dtype if isinstance(self._dtype, str) else "float32")
            var = Var(info.name, TensorType(dims, dtype))
            self._inputs.append(var)
            self._tensors[info.name] = var
            self.type_of(var)

    def _output(self, info):
        if info.name not in self._tensors:
            raise FrontendError(f"graph output {info.name!r} is not produced by any node, "
                                f"input or initializer")
        expr = self._tensors[info.name]
        dims, elem_type = declared_type(info)
        ty = self.type_of(expr)
        declared = [] if dims is None else list(dims)
        if dims is not None and (len(dims) != len(ty.shape) or any(
                d is not None and d != s for d, s in zip(dims, ty.shape))):
            raise FrontendError(f"inconsistent model: graph output {info.name!r} is declared "
                                f"with shape {tuple(declared)} but the graph computes shape "
                                f"{ty.shape}")
        if elem_type and onnx_dtype(elem_type, f"graph output {info.name!r}") != ty.dtype:
            raise FrontendError(f"inconsistent model: graph output {info.name!r} is declared "
                                f"{onnx_dtype(elem_type, info.name)} but the graph computes "
                                f"{ty.dtype}")
        return expr

    # -- one node ---------------------------------------------------------------------------
    def _node_name(self, proto) -> str:
        if proto.name:
            return proto.name
        # TVM's naming of anonymous nodes: <op type>_<index among nodes of that type>
        count = self._name_counts.get(proto.op_type, 0)
        self._name_counts[proto.op_type] = count + 1
        return f"{proto.op_type}_{count}"

    def _convert_node(self, proto):
        name = self._node_name(proto)
        inputs = []
        for i, value_name in enumerate(proto.input):
            if value_name == "":
                inputs.append(None)
            elif value_name in self._tensors:
                inputs.append(self._tensors[value_name])
            else:
                raise FrontendError(
                    f"{proto.op_type} node {name!r}: input {i} {value_name!r} is not a graph "
                    f"input, an initializer or the output of an earlier node (missing "
                    f"initializer, or nodes out of order?)")
        node = OnnxNode(proto, name, inputs, parse_attributes(proto), self.opset, self)
        convert = get_converter(proto.op_type, self.opset)
        try:
            result = convert(node)
        except FrontendError:
            raise
        except Exception as err:  # a malformed node: say which, not where in the importer
            detail = str(err) if isinstance(err, IrlabError) else \
                f"cannot be converted ({type(err).__name__}: {err})"
            _raise_for(node, detail, err)
        outputs = unpack(result, len(proto.output))
        outputs = self._finish(node, outputs)
        for i, (value_name, expr) in enumerate(zip(proto.output, outputs)):
            if value_name == "":
                continue
            if expr is None:
                node.fail(f"output {i} ({value_name!r}) is not supported")
            self._tensors[value_name] = expr

    def _finish(self, node, outputs):
        """Give the node's new expressions its span, type them, fold import-time values."""
        span = Span(node.name, 0, 0)
        rebuilt = {}
        outputs = [None if e is None else _with_span(e, span, self._types, rebuilt)
                   for e in outputs]
        for expr in outputs:
            if expr is not None:
                self.type_of(expr, node)
        new_constants = {id(e) for e in rebuilt.values() if isinstance(e, Constant)}
        # A node computing on import-time values only (Shape, constants...) is folded.
        fold = all(name in self._static for name in node.proto.input if name)
        for i, expr in enumerate(outputs):
            if expr is None or not node.output_used(i):
                continue
            if not fold and id(expr) not in new_constants:
                continue
            if not isinstance(expr, Constant):
                value = self.static_value(expr, node, f"output {i}")
                expr = outputs[i] = constant(value, span=span)
                self.type_of(expr, node)
            self._static.add(node.proto.output[i])
        return outputs

    # -- services for converters --------------------------------------------------------------
    def type_of(self, expr, node=None):
        try:
            return type_of(expr, self._types)
        except FrontendError:
            raise
        except IrlabError as err:
            if node is None:
                raise FrontendError(str(err)) from None
            _raise_for(node, str(err), err)

    def static_value(self, expr, node, what, required=True):
        """The import-time value of ``expr``; if unknown, fails (or is None if not required)."""
        if isinstance(expr, Constant):
            return expr.data.numpy()
        params = {} if self._freeze_params else self._initializers
        try:
            return evaluate(expr, self._types, self._values, params)
        except NotStatic as err:
            if not required:
                return None
            error = FrontendError(
                f"{node.op_type} node {node.name!r}: {what} must be known at import time "
                f"(irlab imports static shapes only), but it depends on the graph input "
                f"{err.var.name_hint!r}; make that input an initializer")
            error.graph_input = err.var.name_hint  # lets callers bind it and retry
            raise error from None


def _raise_for(node, detail, cause):
    """The node's FrontendError, without the importer's internals chained to it (the original
    exception stays reachable as ``error.cause``)."""
    error = FrontendError(f"{node.op_type} node {node.name!r}: {detail}")
    error.cause = cause
    raise error from None


def _show_dims(info) -> str:
    dims = [d.dim_param or "?" if not d.HasField("dim_value") else d.dim_value
            for d in info.type.tensor_type.shape.dim]
    return "(" + ", ".join(str(d) for d in dims) + ")" if dims else "(unknown rank)"


def _free_var_set(expr) -> set:
    seen, found, stack = set(), set(), [expr]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, Var):
            found.add(node)
        elif isinstance(node, Call):
            stack.extend(node.args)
        elif isinstance(node, Tuple):
            stack.extend(node.fields)
        elif isinstance(node, TupleGetItem):
            stack.append(node.tuple_value)
    return found


def _with_span(expr, span, known, memo):
    """``expr`` with ``span`` on every node the converter created (those not typed yet)."""
    if expr in known or isinstance(expr, Var):
        return expr
    if expr in memo:
        return memo[expr]
    if isinstance(expr, Constant):
        new = Constant(expr.data, span=span)
    elif isinstance(expr, Call):
        args = [_with_span(a, span, known, memo) for a in expr.args]
        new = Call(expr.op, args, expr.attrs, expr.type_args, span=span)
    elif isinstance(expr, Tuple):
        new = Tuple([_with_span(f, span, known, memo) for f in expr.fields], span=span)
    elif isinstance(expr, TupleGetItem):
        new = TupleGetItem(_with_span(expr.tuple_value, span, known, memo), expr.index,
                           span=span)
    else:
        raise FrontendError(f"internal: a converter built a {type(expr).__name__}")
    memo[expr] = new
    return new


__all__ = ["from_onnx", "supported_ops", "GraphImporter"]
