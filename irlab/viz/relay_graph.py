"""Relay programs as ``networkx.DiGraph``s, built by an ``ExprVisitor``.

Every node of the graph carries what a viewer shows and what the inspector lists:
``kind`` (input, param, const, call, tuple, getitem, if, fn, global), ``title`` (op or name),
``attrs`` (non-default attributes, as text), ``type`` (the inferred type), ``name``,
``cluster`` (the fused/composite function it belongs to) and ``ir_line`` (its line in the
printed program). Edges go from an argument to its user and carry the argument ``index``.

Weights are folded into their users by default (``fold_weights=True``), as Netron draws
them: a constant or a parameter named in ``params`` is not a node; each user lists it under
``folded`` (argument index, name, shape, dtype and a preview of the first values), so a
ResNet's hundreds of weight ellipses give way to its operators. ``fold_weights=False`` draws
them as nodes again.

Functions called in place (``Primitive=1`` after FuseOps, ``Composite=...`` after
MergeComposite) become clusters holding their inner ops: the function's parameters are not
drawn, edges run from the call's arguments straight to the inner users. Tuples and
``TupleGetItem`` are drawn as they are; a ``let`` variable stands for its value.

Regions for an external compiler (BYOC: a function with ``Compiler="dnnl"``, called in place
or, after PartitionGraph, through its global var) are clusters of kind ``external`` whose
info names the ``compiler``, drawn where they are called, so the picture shows which parts of
the model each compiler takes.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from irlab.ir.expr import GlobalVar
from irlab.ir.module import IRModule
from irlab.ir.op import Op
from irlab.relay.expr import Call, Let, Var
from irlab.relay.expr_functor import ExprVisitor
from irlab.relay.function import Function, is_primitive
from irlab.viz.identity import NodeIds

_ATTRS_SHOWN = 3  # non-default attrs written into a node's label; the inspector shows all
_PREVIEW = 6  # values of a folded weight shown in the inspector


class Folded:
    """A weight folded into its users: what the inspector says about it."""

    __slots__ = ("expr", "info")

    def __init__(self, expr, info):
        self.expr = expr
        self.info = info


def _dims(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _preview(array) -> str:
    flat = array.flat[:_PREVIEW]  # copies these few values only
    more = ", ..." if array.size > _PREVIEW else ""
    return "[" + ", ".join(str(v) for v in flat) + more + "]"  # 1e-05, not 9.99e-06


def folded_info(expr, kind, name="", value=None) -> dict:
    """Name, shape, dtype and value preview of a folded constant or parameter (``value``:
    the parameter's array when the caller passed a dict of params)."""
    info = {"kind": kind, "name": name, "shape": "", "dtype": "", "values": ""}
    data = getattr(expr, "data", value)
    if data is not None and hasattr(data, "__array__"):
        data = np.asarray(data)  # a view: ResNet-50's 25 M weights are not copied for a preview
    ty = expr.checked_type if expr.has_checked_type() else getattr(expr, "type_annotation", None)
    if isinstance(data, np.ndarray):
        info.update(shape=_dims(data.shape), dtype=str(data.dtype), values=_preview(data))
    elif hasattr(ty, "shape") and hasattr(ty, "dtype"):
        info.update(shape=_dims(ty.shape), dtype=str(ty.dtype))
    return info


def _const_title(const) -> str:
    data = const.data
    if data.shape == ():
        # the dtype's shortest round-trip text: float32 1e-5 is "1e-05", not the
        # "9.999999747378752e-06" of the same value read as a double
        return f"const {data.numpy()[()]!s}"
    return f"const {data.dtype}"


def _type_text(node) -> str:
    return str(node.checked_type) if node.has_checked_type() else ""


def _attr_text(value) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_attr_text(v) for v in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


class RelayGraphBuilder(ExprVisitor):
    """Visits a module's functions and adds one graph node per program node."""

    def __init__(self, graph, ids, params=(), lines=None, fold_weights=True, module=None,
                 names=None):
        super().__init__()
        self.module = module  # resolves calls of external functions through global vars
        self.inlined: set = set()  # names of global functions drawn where they are called
        self.names = names or {}
        self.graph = graph
        self.ids = ids
        self.params = set(params)
        self.values = params if isinstance(params, dict) else {}
        self.lines = lines or {}
        self.fold_weights = fold_weights
        self.alias = {}  # var -> graph node that stands for it (fused params, lets)
        self.ref = {}  # expr -> graph node id representing its value
        self.cluster = None

    # -- helpers ------------------------------------------------------------------------------
    def add(self, expr, kind, title, **extra):
        ident = self.ids[expr]
        line = self.lines.get(expr)
        self.graph.add_node(ident, kind=kind, title=title, name=extra.pop("name", ""),
                            type=_type_text(expr), attrs=extra.pop("attrs", {}),
                            cluster=self.cluster, ir_line=line[0] if line else None,
                            expr=expr, **extra)
        self.ref[expr] = ident
        return ident

    def value_of(self, expr):
        """The graph node standing for ``expr``'s value (visiting it first), or the
        ``Folded`` weight it is."""
        self.visit(expr)
        if isinstance(expr, Var) and expr in self.alias:
            return self.alias[expr]
        return self.ref.get(expr)

    def node_of(self, expr):
        """Like ``value_of``, but a folded weight becomes a node (a program's output)."""
        value = self.value_of(expr)
        if isinstance(value, Folded):
            value = self.draw_folded(value)
        return value

    def draw_folded(self, folded):
        """Draw a folded weight as a node after all (it is not consumed by any node)."""
        expr = folded.expr
        if expr not in self.ids:
            return None
        if isinstance(expr, Var):
            return self.add(expr, folded.info["kind"], expr.name_hint, name=expr.name_hint)
        self.add(expr, "const", _const_title(expr), shape=list(expr.data.shape))
        return self.ref[expr]

    def connect(self, sources, target):
        for index, source in enumerate(sources):
            node = self.value_of(source)
            if isinstance(node, Folded):
                record = self.graph.nodes[target].setdefault("folded", [])
                record.append({"index": index, **node.info})
            elif node is not None:
                self.graph.add_edge(node, target, index=index)

    # -- visitors -----------------------------------------------------------------------------
    def visit_var(self, var):
        if var in self.alias:
            return
        kind = "param" if var.name_hint in self.params else "input"
        if kind == "param" and self.fold_weights:
            value = self.values.get(var.name_hint)
            self.ref[var] = Folded(var, folded_info(var, "param", var.name_hint, value))
            return
        self.add(var, kind, var.name_hint, name=var.name_hint)

    def visit_constant(self, const):
        if self.fold_weights:
            self.ref[const] = Folded(const, folded_info(const, "const",
                                                        self.names.get(const, "")))
            return
        self.add(const, "const", _const_title(const), shape=list(const.data.shape),
                 name=self.names.get(const, ""))

    def visit_global_var(self, gv):
        self.add(gv, "global", "@" + gv.name_hint, name=gv.name_hint)

    def visit_op(self, op):
        pass

    def visit_tuple(self, tup):
        ident = self.add(tup, "tuple", "tuple")
        self.connect(tup.fields, ident)

    def visit_tuple_getitem(self, t):
        ident = self.add(t, "getitem", f".{t.index}", index=t.index)
        self.connect([t.tuple_value], ident)

    def visit_if(self, ite):
        ident = self.add(ite, "if", "if")
        self.connect([ite.cond, ite.true_branch, ite.false_branch], ident)

    def visit_match(self, match):
        # the matched value, then each clause's right-hand side (as If shows its branches)
        ident = self.add(match, "if", "match")
        self.connect([match.data] + [clause.rhs for clause in match.clauses], ident)

    def visit_constructor(self, ctor):
        self.add(ctor, "global", ctor.name_hint, name=ctor.name_hint)

    def visit_ref_create(self, ref):
        self.connect([ref.value], self.add(ref, "call", "ref", op="ref"))

    def visit_ref_read(self, ref):
        self.connect([ref.ref], self.add(ref, "call", "ref_read", op="ref_read"))

    def visit_ref_write(self, ref):
        self.connect([ref.ref, ref.value], self.add(ref, "call", "ref_write", op="ref_write"))

    def visit_let(self, let):
        body = let
        while isinstance(body, Let):
            value = self.value_of(body.value)
            self.alias[body.var] = value
            if isinstance(value, str):
                self.graph.nodes[value]["name"] = self.graph.nodes[value]["name"] or \
                    body.var.name_hint
            body = body.body
        self.ref[let] = self.value_of(body)

    def visit_function(self, fn):
        # A function value not called in place: one node (its body is not expanded).
        self.add(fn, "fn", "fn", attrs=dict(fn.attrs.items) if fn.attrs else {})

    def visit_call(self, call):
        op = call.op
        if isinstance(op, Function):
            self.inline_function(call, op)
            return
        if isinstance(op, Op):
            attrs = {k: _attr_text(v) for k, v in call.attrs.non_default_items()} \
                if call.attrs is not None and hasattr(call.attrs, "non_default_items") else {}
            shown = ", ".join(f"{k}={v}" for k, v in list(attrs.items())[:_ATTRS_SHOWN])
            ident = self.add(call, "call", op.name, op=op.name, attrs=attrs, summary=shown)
        elif (external := self._external_global(op)) is not None:
            self.inlined.add(op.name_hint)
            self.inline_function(call, external, op.name_hint)
            return
        else:
            title = "@" + op.name_hint if isinstance(op, GlobalVar) else "call"
            ident = self.add(call, "call", title, op=title)
            if not isinstance(op, GlobalVar):
                self.connect([op], ident)
        self.connect(call.args, ident)

    def _external_global(self, op):
        """The function of global var ``op`` when it is for an external compiler, else None."""
        if not isinstance(op, GlobalVar) or self.module is None:
            return None
        names = {gv.name_hint: f for gv, f in self.module.functions.items()}
        func = names.get(op.name_hint)
        if isinstance(func, Function) and func.attrs is not None and "Compiler" in func.attrs:
            return func
        return None

    def inline_function(self, call, fn, name=""):
        """A function called in place becomes a cluster of its inner nodes."""
        for param, arg in zip(fn.params, call.args):
            self.alias[param] = self.value_of(arg)
        outer = self.cluster
        # Named after the call's stable id, so the same fused function keeps its cluster id
        # from one pass to the next.
        cluster_id = f"cluster_{self.ids[call]}"
        attrs = dict(fn.attrs.items) if fn.attrs is not None else {}
        kind = "primitive" if is_primitive(fn) else (
            "composite" if "Composite" in attrs else "function")
        label = attrs.get("Composite") or _fused_name(fn)
        info = {"kind": kind, "label": label, "parent": outer,
                "attrs": {k: _attr_text(v) for k, v in attrs.items()}, "call": call}
        if "Compiler" in attrs:  # a BYOC region
            compiler = str(attrs["Compiler"])
            symbol = str(attrs.get("global_symbol", "")) or name
            info.update(kind="external", compiler=compiler,
                        label=f"{compiler}: {symbol}" if symbol else compiler)
        self.graph.graph.setdefault("clusters", {})[cluster_id] = info
        self.cluster = cluster_id
        try:
            self.ref[call] = self.value_of(fn.body)
        finally:
            self.cluster = outer


def _fused_name(fn) -> str:
    """``fused_conv2d_add_relu``-style name from the ops inside a function."""
    from irlab.relay.expr_functor import post_order

    names = [n.op.name.split(".")[-1] for n in post_order(fn.body)
             if isinstance(n, Call) and isinstance(n.op, Op)]
    return "fused_" + "_".join(names) if names else "fn"


def build_relay_graph(program, params=None, ids: NodeIds | None = None,
                      fold_weights: bool = True, names=None) -> nx.DiGraph:
    """The graph of ``program`` (IRModule, Function or expression).

    ``params``: names of the weights (a dict of params or a list of names), parameters rather
    than inputs. ``ids``: a ``NodeIds`` shared across versions of the program, so nodes keep
    their ids from one pass to the next. ``fold_weights``: constants and parameters are listed
    in their users' ``folded`` entries instead of being nodes (False: drawn as nodes).
    ``names``: constant -> name (weights bound as constants keep their parameter's name).
    """
    from irlab.relay.printer import pretty_print_located

    from irlab.tir.function import PrimFunc
    from irlab.viz.relax_graph import build_relax_graph, is_relax_module

    if is_relax_module(program):  # Relax: bindings, dataflow regions, call_tir edges
        return build_relax_graph(program, ids, params=params)
    if isinstance(program, PrimFunc) or isinstance(program, IRModule) and not any(
            isinstance(f, Function) for f in program.functions.values()) and any(
            isinstance(f, PrimFunc) for f in program.functions.values()):
        # A TIR program (lowering's pass stepper): buffers, blocks/stores and loops.
        from irlab.viz.tir_graph import build_tir_graph

        return build_tir_graph(program, ids, params=params)
    mod = program if isinstance(program, IRModule) else IRModule.from_expr(program)
    ids = ids or NodeIds()
    funcs = [f for _, f in sorted(mod.functions.items(), key=lambda kv: (
        kv[0].name_hint != "main", kv[0].name_hint)) if isinstance(f, Function)]
    node_ids = ids.assign(funcs)
    try:
        text, locations = pretty_print_located(mod)
    except Exception:  # a picture without line links is still a picture
        text, locations = None, {}
    graph = nx.DiGraph()
    graph.graph["clusters"] = {}
    graph.graph["text"] = text  # the printed module the lines refer to (str(mod))
    builder = RelayGraphBuilder(graph, node_ids, params=params or (), lines=locations,
                                fold_weights=fold_weights, module=mod, names=names)
    for gv, func in sorted(mod.functions.items(), key=lambda kv: kv[0].name_hint != "main"):
        if not isinstance(func, Function) or gv.name_hint in builder.inlined:
            continue
        for p in func.params:
            builder.visit(p)
        out = builder.node_of(func.body)
        graph.graph.setdefault("outputs", {})[gv.name_hint] = out
    return graph
