"""Relax IRModules as ``networkx.DiGraph``s, with the node contract of ``relay_graph``:
``kind``, ``title``, ``name``, ``attrs``, ``summary``, ``type``, ``cluster``, ``ir_line``,
``expr``.

The picture is the one seed 001 draws for Relax (section 0x1.4):

- every binding (``lv1 = R.matmul(x, lv0)``, a ``match_cast``, a packed call) is a node named
  after its variable, typed by its struct info with symbolic dims (``(n, 784) float32``;
  the inspector lists the full ``R.Tensor(...)`` under ``struct_info``); function parameters
  are ``input`` nodes (``param`` when named in ``params``);
- each dataflow block is a region (a cluster of kind ``dataflow``): the side-effect-free part
  of the program, a computational graph inside it; bindings after it (``call_packed``) sit
  outside;
- each ``call_tir`` (and each call of another function of the module) has an edge from the
  callee: a PrimFunc of the same IRModule is a node (kind ``prim_func``,
  ``T.prim_func tir_exp_func``); for modules with few PrimFuncs it sits in a cluster of kind
  ``prim_func`` with its TIR graph (buffers, blocks, loops; see ``tir_graph``), so one can
  open the low level from the high level (a collapsed cluster is one node). A Relax function
  called by another one is a cluster of kind ``function`` (FuseOps' ``Primitive`` functions).

Node ids are kept across passes by structure (passes rebuild most nodes): a binding by its
function and variable name (and rank among the variables of that name), a PrimFunc by its
name. Labels are plain text; ``dot.to_dot`` escapes them.
"""

from __future__ import annotations

import re

import networkx as nx

from irlab.ir.expr import GlobalVar
from irlab.ir.module import IRModule
from irlab.ir.op import Op
from irlab.relax import expr as rx
from irlab.relax.struct_info import (PrimStructInfo, ShapeStructInfo, TensorStructInfo,
                                     TupleStructInfo, struct_info_text)
from irlab.tir import expr as tir_expr
from irlab.tir.function import PrimFunc
from irlab.tir.text import expr_to_text
from irlab.viz.identity import NodeIds

TIR_INLINE_LIMIT = 8  # PrimFuncs whose TIR graphs are drawn inside their cluster
_ATTRS_SHOWN = 3  # attrs written into a node's label; the inspector shows all


def dim_text(dim) -> str:
    """A dimension as TVMScript writes it: ``n * m``, not ``(n * m)``."""
    if isinstance(dim, tir_expr.IntImm):
        return str(dim.value)
    text = expr_to_text(dim)
    depth = 0
    for i, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if depth == 0 and i < len(text) - 1:
            return text  # ``(a + b) * c``: the outer parens are not one pair
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


def dims_text(dims) -> str:
    """``(n, 784)``: a shape with symbolic dims."""
    parts = [dim_text(d) for d in dims]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def short_type(sinfo) -> str:
    """What a node's label says about a value: ``(n, 784) float32``, ``shape (n * m,)``,
    ``tuple[2]``, else the struct info's TVMScript spelling."""
    if sinfo is None:
        return ""
    if isinstance(sinfo, TensorStructInfo):
        dtype = "" if sinfo.is_unknown_dtype else f" {sinfo.dtype}"
        if sinfo.dims is not None:
            return dims_text(sinfo.dims) + dtype
        return f"ndim={sinfo.ndim}{dtype}" if sinfo.ndim >= 0 else f"tensor{dtype}"
    if isinstance(sinfo, ShapeStructInfo) and sinfo.values is not None:
        return "shape " + dims_text(sinfo.values)
    if isinstance(sinfo, TupleStructInfo):
        return "(" + ", ".join(short_type(f) for f in sinfo.fields) + ")"
    if isinstance(sinfo, PrimStructInfo) and sinfo.value is None:
        return sinfo.dtype
    return full_type(sinfo)


def full_type(sinfo) -> str:
    """The struct info as TVMScript spells it, with dims written as ``short_type`` does."""
    if sinfo is None:
        return ""
    if isinstance(sinfo, TensorStructInfo) and sinfo.dims is not None:
        dtype = "" if sinfo.is_unknown_dtype else f', dtype="{sinfo.dtype}"'
        return f"R.Tensor({dims_text(sinfo.dims)}{dtype})"
    if isinstance(sinfo, ShapeStructInfo) and sinfo.values is not None:
        return "R.Shape([" + dims_text(sinfo.values)[1:-1].rstrip(",") + "])"
    if isinstance(sinfo, TupleStructInfo):
        return "R.Tuple(" + ", ".join(full_type(f) for f in sinfo.fields) + ")"
    return struct_info_text(sinfo)


def _sinfo(expr):
    """The struct info of ``expr``, or None before normalization deduced it."""
    return getattr(expr, "struct_info_", None)


def _leaf_text(expr) -> str:
    """Text of an argument drawn in its user's attrs rather than as a node."""
    if isinstance(expr, rx.ShapeExpr):
        return "R.shape([" + dims_text(expr.values)[1:-1].rstrip(",") + "])"
    if isinstance(expr, rx.PrimValue):
        return dim_text(expr.value)
    if isinstance(expr, rx.StringImm):
        return f'"{expr.value}"'
    if isinstance(expr, rx.DataTypeImm):
        return str(expr.value)
    return type(expr).__name__


def _attr_value(value) -> str:
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_attr_value(v) for v in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def _call_attrs(call) -> dict:
    attrs = call.attrs
    if attrs is None:
        return {}
    items = attrs.non_default_items() if hasattr(attrs, "non_default_items") else \
        list(getattr(attrs, "items", {}).items()) if isinstance(
            getattr(attrs, "items", None), dict) else []
    return {str(k): _attr_value(v) for k, v in items}


def _func_attrs(func) -> list:
    """(key, value) pairs of a function's attrs."""
    return list(dict(func.attrs.items).items()) if func.attrs is not None else []


class RelaxGraphBuilder:
    """Walks the Relax functions of a module and adds binding, region and callee nodes."""

    def __init__(self, graph, ids, mod, params=(), text="", draw_tir=True):
        self.graph = graph
        self.ids = ids
        self.mod = mod
        self.params = set(params)
        self.lines = text.splitlines()
        self.draw_tir = draw_tir
        self.claimed = set()
        self.ranks = {}
        self.ref = {}  # relax Var -> graph node standing for its value
        self.callees = {}  # global var name -> node id of the function called
        self.fname = ""
        self.start = 0  # first line of the current function in the printed module
        self.cluster = None

    # -- helpers ------------------------------------------------------------------------------
    def ident(self, *key) -> str:
        rank = self.ranks.get(key, 0)
        self.ranks[key] = rank + 1
        return self.ids.keyed(("relax", *key, rank), self.claimed)

    def line_of(self, pattern, start=None):
        """0-based line of the printed module matching ``pattern`` (from ``start``)."""
        regex = re.compile(pattern)
        begin = self.start if start is None else start
        return next((i for i in range(begin, len(self.lines)) if regex.search(self.lines[i])),
                    None)

    def add(self, ident, expr, kind, title, sinfo=None, **extra):
        attrs = extra.pop("attrs", {})
        if sinfo is not None:
            attrs = {"struct_info": full_type(sinfo), **attrs}
        self.graph.add_node(ident, kind=kind, title=title, name=extra.pop("name", ""),
                            type=short_type(sinfo), attrs=attrs,
                            summary=extra.pop("summary", ""), cluster=self.cluster,
                            ir_line=extra.pop("ir_line", None), expr=expr, **extra)
        return ident

    def connect(self, args, target):
        """Edges from the nodes of ``args`` into ``target``; leaves that are not values of
        the graph (shapes, prim values, strings) are listed in its attrs."""
        index = 0
        for arg in args:
            for leaf in (arg.fields if isinstance(arg, rx.Tuple) else (arg,)):
                source = self.value_node(leaf)
                if source is not None:
                    self.graph.add_edge(source, target, index=index)
                else:
                    attrs = self.graph.nodes[target]["attrs"]
                    attrs[f"arg{index}"] = _leaf_text(leaf)
                index += 1

    def value_node(self, expr):
        """The node of an argument (a variable, constant or callee), else None."""
        if isinstance(expr, rx.Var):
            return self.ref.get(expr)
        if isinstance(expr, GlobalVar):
            return self.callee(expr)
        if isinstance(expr, rx.Constant):
            data = expr.data.numpy()
            return self.add(self.ident(self.fname, "const"), expr, "const",
                            "const " + str(data.dtype), _sinfo(expr))
        if isinstance(expr, rx.Tuple):
            ident = self.add(self.ident(self.fname, "tuple"), expr, "tuple", "tuple",
                             _sinfo(expr))
            self.connect(expr.fields, ident)
            return ident
        return None

    # -- callees (PrimFuncs and other functions of the module) ----------------------------------
    def callee(self, gv):
        name = gv.name_hint
        if name in self.callees:
            return self.callees[name]
        func = self._function(name)
        if isinstance(func, PrimFunc):
            return self.prim_func(name, func)
        ident = self.ids.keyed(("relax", "global", name), self.claimed)
        outer, self.cluster = self.cluster, None
        self.add(ident, gv, "global", "@" + name, name=name)
        self.cluster = outer
        self.callees[name] = ident
        return ident

    def _function(self, name):
        return next((f for gv, f in self.mod.functions.items() if gv.name_hint == name), None)

    def prim_func(self, name, func):
        """A node for PrimFunc ``name``; when its TIR is drawn, a cluster holding the node
        and the TIR graph (collapsed, the cluster is one node again)."""
        cluster_id = None
        attrs = {str(k): _attr_value(v) for k, v in _func_attrs(func)}
        if self.draw_tir:
            cluster_id = "cluster_" + self.ids.keyed(("relax", "prim_func_cluster", name),
                                                     self.claimed)
            self.graph.graph["clusters"][cluster_id] = {
                "kind": "prim_func", "label": f"T.prim_func {name}", "parent": None,
                "attrs": attrs, "name": name}
        ident = self.ids.keyed(("relax", "prim_func", name), self.claimed)
        params = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
        signature = ", ".join(f"{b.name}{dims_text(b.shape)}" for b in params)
        outer, self.cluster = self.cluster, cluster_id
        self.add(ident, func, "prim_func", f"T.prim_func {name}", name=name,
                 summary=signature, attrs={"params": signature, **attrs},
                 ir_line=self.line_of(rf"def {re.escape(name)}\(", 0))
        self.cluster = outer
        self.callees[name] = ident
        if self.draw_tir:
            self._inline_tir(name, func, cluster_id)
        return ident

    def _inline_tir(self, name, func, cluster_id):
        from irlab.viz.tir_graph import build_tir_graph

        sub = build_tir_graph(IRModule({name: func}), self.ids)
        for node, data in sub.nodes(data=True):
            data = dict(data, cluster=data.get("cluster") or cluster_id, ir_line=None)
            self.graph.add_node(node, **data)
        self.graph.add_edges_from(sub.edges(data=True))
        for cid, info in sub.graph.get("clusters", {}).items():
            self.graph.graph["clusters"][cid] = dict(info, parent=info.get("parent") or
                                                     cluster_id)

    # -- Relax functions ----------------------------------------------------------------------
    def visit_function(self, name, func, called=False):
        """Nodes of a Relax function's parameters and bindings; returns its output node. A
        function other functions call is a cluster."""
        self.fname, outer = name, self.cluster
        self.start = self.line_of(rf"def {re.escape(name)}\(", 0) or 0
        if called:
            attrs = _func_attrs(func)
            cluster_id = "cluster_" + self.ids.keyed(("relax", "function", name),
                                                     self.claimed)
            self.graph.graph["clusters"][cluster_id] = {
                "kind": "function", "label": f"R.function {name}", "parent": None,
                "attrs": {str(k): _attr_value(v) for k, v in attrs}}
            self.cluster = cluster_id
        for param in func.params:
            kind = "param" if param.name_hint in self.params else "input"
            self.ref[param] = self.add(
                self.ident(name, "param", param.name_hint), param, kind, param.name_hint,
                _sinfo(param), name=param.name_hint,
                ir_line=self.start)
        body = func.body
        out = self.visit_seq(body) if isinstance(body, rx.SeqExpr) else self.value_node(body)
        self.graph.graph.setdefault("outputs", {})[name] = out
        self.cluster = outer
        return out

    def visit_seq(self, seq):
        for index, block in enumerate(seq.blocks):
            outer = self.cluster
            if isinstance(block, rx.DataflowBlock):
                cluster_id = "cluster_" + self.ids.keyed(
                    ("relax", "dataflow", self.fname, index), self.claimed)
                self.graph.graph["clusters"][cluster_id] = {
                    "kind": "dataflow", "label": f"R.dataflow() in {self.fname}",
                    "parent": outer, "attrs": {"bindings": str(len(block.bindings))}}
                self.cluster = cluster_id
            for binding in block.bindings:
                self.visit_binding(binding)
            self.cluster = outer
        return self.value_node(seq.body) if not isinstance(seq.body, rx.SeqExpr) \
            else self.visit_seq(seq.body)

    def visit_binding(self, binding):
        var, value = binding.var, binding.value
        name = var.name_hint
        line = self.line_of(rf"^\s*{re.escape(name)}(: .*)? = ")
        ident = self.ident(self.fname, "var", name)
        extra = {"name": name, "ir_line": line}
        sinfo = _sinfo(var)
        if isinstance(binding, rx.MatchCast):
            self.add(ident, binding, "call", "match_cast", sinfo, op="relax.match_cast",
                     attrs={"pattern": full_type(binding.struct_info)}, **extra)
            self.connect([value], ident)
        elif isinstance(value, rx.Call):
            self.visit_call(ident, value, sinfo, extra)
        elif isinstance(value, rx.Var) and value in self.ref:
            self.ref[var] = self.ref[value]  # an alias draws as the value it names
            return
        elif isinstance(value, rx.TupleGetItem):
            self.add(ident, value, "getitem", f".{value.index}", sinfo, **extra)
            self.connect([value.tuple_value], ident)
        elif isinstance(value, rx.Tuple):
            self.add(ident, value, "tuple", "tuple", sinfo, **extra)
            self.connect(value.fields, ident)
        elif isinstance(value, rx.If):
            self.add(ident, value, "if", "if", sinfo, **extra)
            self.connect([value.cond], ident)
        elif isinstance(value, rx.Constant):
            self.add(ident, value, "const", "const", sinfo, **extra)
        else:  # shapes, prim values, functions: a node with their text
            self.add(ident, value, "const", _leaf_text(value), sinfo, **extra)
        self.ref[var] = ident

    def visit_call(self, ident, call, sinfo, extra):
        op = call.op
        attrs = _call_attrs(call)
        args = list(call.args)
        if isinstance(op, Op) and op.name in ("relax.call_tir", "relax.call_dps_packed",
                                               "relax.call_tir_inplace"):
            callee = args[0]
            callee_name = callee.name_hint if isinstance(callee, GlobalVar) else \
                getattr(callee, "global_symbol", "?")
            title = f"{op.name.split('.')[-1]} {callee_name}"
            self.add(ident, call, "call", title, sinfo, op=op.name, attrs=attrs,
                     callee=callee_name, **extra)
            self.connect(args, ident)
            return
        if isinstance(op, Op):
            title = op.name[len("relax."):] if op.name.startswith("relax.") else op.name
            shown = ", ".join(f"{k}={v}" for k, v in list(attrs.items())[:_ATTRS_SHOWN])
            self.add(ident, call, "call", title, sinfo, op=op.name, attrs=attrs,
                     summary=shown, **extra)
        elif isinstance(op, rx.ExternFunc):
            self.add(ident, call, "call", f'call_packed "{op.global_symbol}"', sinfo,
                     op="call_packed", attrs=attrs, **extra)
        elif isinstance(op, GlobalVar):
            self.add(ident, call, "call", "@" + op.name_hint, sinfo, op="@" + op.name_hint,
                     callee=op.name_hint, attrs=attrs, **extra)
            args = [op, *args]
        else:
            self.add(ident, call, "call", "call", sinfo, op="call", attrs=attrs, **extra)
            args = [op, *args]
        self.connect(args, ident)


def is_relax_module(program) -> bool:
    """True when ``program`` is a Relax function or an IRModule holding one."""
    if isinstance(program, rx.Function):
        return True
    return isinstance(program, IRModule) and any(
        isinstance(f, rx.Function) for f in program.functions.values())


def build_relax_graph(program, ids: NodeIds | None = None, params=None,
                      draw_tir: bool | None = None) -> nx.DiGraph:
    """The graph of a Relax IRModule (or function).

    ``ids``: a ``NodeIds`` shared across versions of the module, so nodes keep their ids from
    one pass to the next. ``params``: names of function parameters drawn as weights.
    ``draw_tir``: draw each PrimFunc's TIR graph inside its cluster (default: when the module
    has at most ``TIR_INLINE_LIMIT`` PrimFuncs).
    """
    mod = program if isinstance(program, IRModule) else IRModule({"main": program})
    ids = ids or NodeIds()
    prim_funcs = [gv for gv, f in mod.functions.items() if isinstance(f, PrimFunc)]
    if draw_tir is None:
        draw_tir = len(prim_funcs) <= TIR_INLINE_LIMIT
    try:
        text = mod.script()
    except Exception:  # noqa: BLE001 - a picture without line links is still a picture
        text = ""
    graph = nx.DiGraph()
    graph.graph["clusters"] = {}
    builder = RelaxGraphBuilder(graph, ids, mod, params or (), text, draw_tir)
    called = {gv.name_hint for f in mod.functions.values() if isinstance(f, rx.Function)
              for gv in _called_globals(f)}
    funcs = sorted(((gv.name_hint, f) for gv, f in mod.functions.items()
                    if isinstance(f, rx.Function)),
                   key=lambda kv: (kv[0] in called, kv[0] != "main", kv[0]))
    for name, func in reversed(funcs):  # callees first: their outputs feed the call edges
        if name in called:
            builder.callees[name] = builder.visit_function(name, func, called=True)
    for name, func in funcs:
        if name not in called:
            builder.visit_function(name, func)
    for gv in prim_funcs:  # PrimFuncs no function calls are drawn too
        builder.callee(gv)
    return graph


def _called_globals(func) -> list:
    """Global vars ``func`` calls (as the callee of a call, or ``call_tir``'s first arg)."""
    found = []
    for block in func.body.blocks if isinstance(func.body, rx.SeqExpr) else ():
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, rx.Call) and isinstance(value.op, GlobalVar):
                found.append(value.op)
    return found


__all__ = ["build_relax_graph", "is_relax_module", "short_type", "full_type", "dims_text",
           "TIR_INLINE_LIMIT"]
