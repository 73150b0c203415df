"""ONNX -> Relax (``tvm.relax.frontend.onnx.from_onnx``), with dynamic dimensions kept symbolic.

A graph input whose dimension is a name (``dim_param: "batch"``) or left unknown gets a
symbolic ``tir.Var`` (one per name, shared by every input that uses it): the module is
compiled once and runs at every size. The importer walks the nodes in order, emitting one
binding per node into ``main``'s dataflow block with ``BlockBuilder``; struct info (with
symbolic shapes) is deduced as it goes.

Values known at import time are not emitted: initializers used as attributes, ``Constant``
nodes, and the shape arithmetic exporters write (``Shape -> Gather -> Concat -> Reshape``)
are evaluated by the importer -- a shape as a list of PrimExprs, so ``Reshape(x,
Concat(Gather(Shape(x), [0, 1]), [4, 16]))`` becomes ``R.reshape(x, (n, s, 4, 16))`` with
``n`` symbolic. Loading, attributes, dtypes and the convolution window geometry are shared
with the Relay frontend (``irlab.relay.frontend``); the converters are in
``onnx_converters``.
"""

from __future__ import annotations

import numpy as np

from irlab import tir
from irlab.errors import FrontendError
from irlab.relax.block_builder import BlockBuilder
from irlab.relax.expr import Expr, Var, const
from irlab.relax.frontend.onnx_converters import CONVERTERS, Shape
from irlab.relax.struct_info import TensorStructInfo
from irlab.relay.frontend.onnx_common import onnx_dtype, tensor_to_array
from irlab.relay.frontend.onnx_proto import (declared_type, load_model, model_opset,
                                             parse_attributes)

__all__ = ["from_onnx"]


def from_onnx(model, shape_dict=None, dtype_dict="float32", opset=None,
              keep_params_in_input=False, sanitize_input_names=True):
    """An IRModule whose ``main`` computes the ONNX ``model`` (a ModelProto, its bytes or a
    file path). ``shape_dict`` fixes input shapes (a name or None in a shape stays
    symbolic); ``dtype_dict`` gives input dtypes the model leaves out. Initializers become
    constants, or parameters after the inputs with ``keep_params_in_input`` (their values
    then in ``main``'s ``params`` attribute)."""
    model = load_model(model)
    importer = _Importer(shape_dict or {}, dtype_dict, keep_params_in_input)
    return importer.run(model.graph, int(opset or model_opset(model)))


class Node:
    """One ONNX node while it converts: its inputs (Relax values, numpy arrays known at
    import time, or ``Shape`` values), attributes and the builder."""

    def __init__(self, proto, values, bb, opset):
        self.proto = proto
        self.op_type = proto.op_type
        self.name = proto.name or proto.op_type
        self.values = values
        self.bb = bb
        self.opset = opset
        self.attrs = parse_attributes(proto)

    def attr(self, key, default=None):
        return self.attrs.get(key, default)

    def has_input(self, i) -> bool:
        return i < len(self.values) and self.values[i] is not None

    def known(self, i):
        """Input ``i`` as a numpy array or ``Shape`` when known at import time, else None."""
        v = self.values[i] if i < len(self.values) else None
        return v if isinstance(v, (np.ndarray, Shape)) else None

    def ints(self, i) -> list:
        """Input ``i`` as a list of dims (ints or PrimExprs), which must be known."""
        v = self.known(i)
        if v is None:
            self.fail(f"input {i} must be known at import time (a constant or a shape)")
        return list(v.dims) if isinstance(v, Shape) else [int(x) for x in np.ravel(v)]

    def x(self, i) -> Expr:
        """Input ``i`` as a Relax expression (known values become constants)."""
        v = self.values[i] if i < len(self.values) else None
        if v is None:
            self.fail(f"input {i} is required")
        if isinstance(v, Shape):
            if not v.is_static:
                self.fail(f"input {i} is a shape with symbolic dims {v.dims}; it can only "
                          f"be used as a shape (Reshape, Expand), not as a tensor")
            v = np.array([int(d) for d in v.dims], np.int64)
        return const(v) if isinstance(v, np.ndarray) else v

    def shape(self, i) -> list:
        dims = self.x(i).struct_info.dims
        if dims is None:
            self.fail(f"input {i} has an unknown shape")
        return list(dims)

    def dtype(self, i) -> str:
        v = self.values[i]
        return str(v.dtype) if isinstance(v, np.ndarray) else self.x(i).struct_info.dtype

    def emit(self, expr) -> Expr:
        return self.bb.emit(expr)

    def fail(self, message):
        raise FrontendError(f"{self.op_type} node {self.name!r}: {message}")

    def expect(self, condition, message):
        if not condition:
            self.fail(message)


class _Importer:
    def __init__(self, shape_dict, dtype_dict, keep_params_in_input):
        self.shape_dict = dict(shape_dict)
        self.dtype_dict = dtype_dict
        self.keep_params = keep_params_in_input
        self.values: dict = {}   # ONNX value name -> Relax expr | np.ndarray | Shape
        self.sym: dict = {}      # dim_param name -> tir.Var
        self.params: list = []   # Relax Vars of main, in order
        self.param_values: list = []

    def run(self, graph, opset):
        self._check_supported(graph, opset)
        initializers = {t.name: tensor_to_array(t, f"initializer {t.name!r}")
                        for t in graph.initializer}
        self.params = [self._input(info) for info in graph.input
                       if info.name not in initializers]
        for name, array in initializers.items():
            if self.keep_params and array.ndim > 0:
                var = Var(name, TensorStructInfo(list(array.shape), str(array.dtype)))
                self.params.append(var)
                self.param_values.append(array)
                self.values[name] = var
            else:
                self.values[name] = array
        bb = BlockBuilder()
        with bb.function("main", self.params):
            with bb.dataflow():
                for proto in graph.node:
                    self._convert(proto, bb, opset)
                outputs = [self._output(info, bb) for info in graph.output]
                out = bb.emit_output(outputs[0] if len(outputs) == 1 else
                                     bb.normalize(_tuple(outputs)))
            bb.emit_func_output(out)
        mod = bb.get()
        if self.keep_params:
            from irlab.runtime.ndarray import array as nd_array

            mod["main"] = mod["main"].with_attr("params",
                                                [nd_array(v) for v in self.param_values])
        return mod

    def _check_supported(self, graph, opset):
        missing = sorted({p.op_type for p in graph.node if p.op_type not in CONVERTERS})
        if missing:
            raise FrontendError(f"{len(missing)} ONNX operator type(s) of this model are not "
                                f"supported by irlab's Relax ONNX frontend: "
                                f"{', '.join(missing)} (opset {opset})")

    def _dim(self, d, input_name, axis):
        if isinstance(d, (int, np.integer)) and d >= 0:
            return int(d)
        name = d if isinstance(d, str) and d else f"{input_name}_dim{axis}"
        if name not in self.sym:
            self.sym[name] = tir.Var(name, "int64")
        return self.sym[name]

    def _input(self, info) -> Var:
        if not info.type.HasField("tensor_type"):
            raise FrontendError(f"graph input {info.name!r}: only tensor inputs are supported")
        tensor_type = info.type.tensor_type
        if info.name in self.shape_dict:
            dims = list(self.shape_dict[info.name])
        else:
            dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                    for d in tensor_type.shape.dim]
        dims = [self._dim(d, info.name, k) for k, d in enumerate(dims)]
        _, elem = declared_type(info)
        dtype = (self.dtype_dict.get(info.name) if isinstance(self.dtype_dict, dict) else
                 self.dtype_dict) if not elem else onnx_dtype(elem, f"input {info.name!r}")
        var = Var(info.name, TensorStructInfo(dims, dtype or "float32"))
        self.values[info.name] = var
        return var

    def _convert(self, proto, bb, opset):
        inputs = [self.values.get(n) if n else None for n in proto.input]
        for n, v in zip(proto.input, inputs):
            if n and v is None:
                raise FrontendError(f"{proto.op_type} node {proto.name!r}: input {n!r} is "
                                    f"not produced by any earlier node, input or initializer")
        node = Node(proto, inputs, bb, opset)
        result = CONVERTERS[proto.op_type](node)
        results = list(result) if isinstance(result, (list, tuple)) else [result]
        for name, value in zip(proto.output, results):
            if name:
                self.values[name] = value

    def _output(self, info, bb):
        if info.name not in self.values:
            raise FrontendError(f"graph output {info.name!r} is not produced by any node")
        value = self.values[info.name]
        if isinstance(value, Shape):
            value = np.array([int(d) for d in value.dims], np.int64)
        return const(value) if isinstance(value, np.ndarray) else value


def _tuple(fields):
    from irlab.relax.expr import Tuple

    return Tuple(fields)
