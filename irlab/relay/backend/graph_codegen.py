"""Graph codegen: the fused ``@main`` becomes TVM's graph JSON, its kernels and its params
(TVM's ``graph_executor_codegen.cc``).

* ``@main``'s parameters become ``"null"`` nodes named after them; constants become params
  named ``p0, p1, ...`` (``"null"`` nodes too, their values in ``params``).
* A call of a ``Primitive`` function becomes a ``"tvm_op"`` node calling the PrimFunc LowerTE
  made for it (``TECompiler``: one PrimFunc per distinct function). A function with
  ``Compiler="<name>"`` (BYOC) calls the symbol its external codegen ``relay.ext.<name>``
  made instead (``ExternalCodegen``). A function FuseOps marked
  ``relay.reshape_only`` (its calls are all ``TReshapeOp``s: reshape, squeeze,
  expand_dims...) becomes ``"__nop"``: no kernel, its output shares the input's storage.
* Tuples are lists of entries; ``TupleGetItem`` picks one. ``heads`` are the outputs.
* ``attrs.shape``/``dltype``/``storage_id`` list every entry (``node_row_ptr`` order);
  storage ids come from ``plan_memory``.
"""

from __future__ import annotations

import json

from irlab.errors import IrlabError
from irlab.ir.op import Op
from irlab.ir.type import TensorType, flatten_tuple_type
from irlab.relay import expr as R
from irlab.relay.backend.external_codegen import ExternalCodegen, compiler_of
from irlab.relay.backend.graph_plan_memory import plan_memory
from irlab.relay.backend.te_compiler import TECompiler
from irlab.relay.expr_functor import DeepSafeMemoVisitor, post_order
from irlab.relay.function import Function, is_primitive, is_reshape_only
from irlab.runtime.ndarray import array



def _tensor_types(ty) -> list:
    """The tensor types of a value of type ``ty`` (a tuple's fields, flattened)."""
    types = flatten_tuple_type(ty)
    for leaf in types:
        if not isinstance(leaf, TensorType):
            raise IrlabError(f"graph codegen: {leaf} is not a tensor type")
    return types


def _constant_uses(main) -> dict:
    """How many call arguments each Constant of ``main`` is (by identity; fused functions'
    bodies are not entered)."""
    uses = {}
    for e in post_order(main.body, into_functions=False):
        if isinstance(e, R.Call):
            for a in e.args:
                if isinstance(a, R.Constant):
                    uses[id(a)] = uses.get(id(a), 0) + 1
    return uses


class GraphCodegen(DeepSafeMemoVisitor):
    """Build the graph JSON of a fused, typed ``@main``."""

    def __init__(self, target, mod_name="default"):
        super().__init__()
        self.compiler = TECompiler(target, prefix=f"tvmgen_{mod_name}")
        self.external = ExternalCodegen()  # functions with Compiler="<name>" (BYOC)
        self.nodes: list[dict] = []
        self.types: list[list] = []  # per node: its output TensorTypes
        self.params: dict = {}
        self.node_exprs: list = []  # per node: the Relay expression it came from
        self.input_names: set = set()  # @main's parameter names (constants avoid them)

    def _add(self, node, types, expr=None):
        self.nodes.append(node)
        self.types.append(types)
        self.node_exprs.append(expr)
        nid = len(self.nodes) - 1
        return [[nid, i, 0] for i in range(len(types))]

    def _constant_name(self):
        """``p<k>`` as TVM names constants, skipping the names of @main's parameters (an
        input called ``p0`` would otherwise be overwritten by the constant's value)."""
        k = len(self.params)
        while f"p{k}" in self.input_names or f"p{k}" in self.params:
            k += 1
        return f"p{k}"

    def _visit(self, e):
        if isinstance(e, R.Var):
            return self._add({"op": "null", "name": e.name_hint, "inputs": []},
                             _tensor_types(e.checked_type), e)
        if isinstance(e, R.Constant):
            name = self._constant_name()
            self.params[name] = e.data
            return self._add({"op": "null", "name": name, "inputs": []},
                             _tensor_types(e.checked_type), e)
        if isinstance(e, R.Tuple):
            entries = []
            for f in e.fields:
                entries.extend(self.visit(f))
            return entries
        if isinstance(e, R.TupleGetItem):
            return [self.visit(e.tuple_value)[e.index]]
        if isinstance(e, R.Call):
            return self._call(e)
        if isinstance(e, R.Let):
            self.memo[e.var] = self.visit(e.value)
            return self.visit(e.body)
        raise IrlabError(f"graph codegen cannot handle {type(e).__name__} in @main "
                         f"(the graph executor runs dataflow graphs)")

    def _call(self, call):
        func = call.op
        if not (isinstance(func, Function) and is_primitive(func)):
            what = func.name if isinstance(func, Op) else type(func).__name__
            raise IrlabError(f"graph codegen: @main calls {what} directly; run FuseOps first "
                             f"(relay.build does)")
        inputs = []
        for a in call.args:
            inputs.extend(self.visit(a))
        types = _tensor_types(call.checked_type)
        if compiler_of(func) is not None:
            name = func_name = self.external.lower(func)
        elif is_reshape_only(func) and len(types) == 1 and len(inputs) >= 1:
            name, func_name = "reshape_nop", "__nop"
        else:
            lowered = self._lay_out_weights(self.compiler.lower(func), call, inputs)
            name = func_name = lowered.name
        node = {"op": "tvm_op", "name": name, "inputs": inputs,
                "attrs": {"func_name": func_name, "flatten_data": "0",
                          "num_inputs": str(len(inputs)), "num_outputs": str(len(types))}}
        return self._add(node, types, call)

    def _lay_out_weights(self, lowered, call, inputs):
        """``lowered``, or its variant taking weights in a tuned layout when every weight it
        lays out is a constant only this call reads: those constants are transformed here,
        once (else the kernel keeps its copy blocks and lays them out on each call)."""
        variant, maps = self.compiler.with_constant_weights(lowered)
        if variant is None or len(inputs) != len(call.args):
            return lowered
        args = [call.args[i] if i < len(call.args) else None for i in maps]
        if any(not isinstance(a, R.Constant) or self._constant_uses.get(id(a), 0) != 1
               for a in args):
            return lowered
        for index, imap in maps.items():
            nid = inputs[index][0]
            name = self.nodes[nid]["name"]
            data = self.params[name]
            value = imap.map_ndarray(data.numpy() if hasattr(data, "numpy") else data)
            self.params[name] = array(value) if hasattr(data, "numpy") else value
            self.types[nid] = [TensorType(value.shape, str(value.dtype))]
        return variant

    def codegen(self, main: Function):
        self.arg_nodes = []
        self._constant_uses = _constant_uses(main)
        self.input_names = {p.name_hint for p in main.params}
        for p in main.params:
            self.memo[p] = self.visit(p)
        heads = self.visit(main.body)
        row_ptr = [0]
        for types in self.types:
            row_ptr.append(row_ptr[-1] + len(types))
        shapes = [[int(d) for d in t.shape] for types in self.types for t in types]
        dtypes = [t.dtype for types in self.types for t in types]
        storage_id, sizes = plan_memory(self.nodes, heads, shapes, dtypes, row_ptr)
        arg_nodes = [i for i, n in enumerate(self.nodes) if n["op"] == "null"]
        graph = {"nodes": self.nodes, "arg_nodes": arg_nodes, "heads": heads,
                 "attrs": {"dltype": ["list_str", dtypes],
                           "storage_id": ["list_int", storage_id],
                           "shape": ["list_shape", shapes]},
                 "node_row_ptr": row_ptr}
        self.storage_sizes = sizes
        return json.dumps(graph, indent=2), self.compiler.lowered, self.params


__all__ = ["GraphCodegen"]
