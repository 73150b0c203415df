"""TIR programs (PrimFuncs) as ``networkx.DiGraph``s, with the node contract of
``relay_graph``: ``kind``, ``title``, ``name``, ``attrs``, ``summary``, ``type``, ``cluster``,
``ir_line``, ``expr``.

The picture is a dataflow over buffers: a function's buffer params are ``input`` nodes (or
``param`` when named in ``params``), buffers it allocates are ``buffer`` nodes. The statements
that compute are ``call`` nodes: a block innermost in the nesting (``block <name>``), or, once
lowering removed the blocks, each ``BufferStore`` (``store <buffer>``) and each ``Evaluate`` of
a call. Edges run buffer -> statement for reads and statement -> buffer for writes. Loops are
clusters (kind ``loop``, ``for i in 0..128 (parallel)``) nested through ``parent``; a block
holding other blocks is a cluster too (kind ``block``), except the implicit root block.

Node ids are kept across versions by structure, not by object (TIR passes rebuild most
nodes): a buffer by its data variable's name, a block by its name, a store by its buffer and
rank among the stores to it, a loop by its variable's name and rank under its parent. The
first store to a buffer takes the id of the block that wrote it before blocks were lowered,
so LowerOpaqueBlock shows the block *changed* into a store rather than replaced.
"""

from __future__ import annotations

import re

import networkx as nx

from irlab.ir.module import IRModule
from irlab.tir import stmt as S
from irlab.tir.buffer import Buffer
from irlab.tir.expr import BufferLoad, Call, IntImm
from irlab.tir.function import PrimFunc
from irlab.tir.functor import post_order_visit
from irlab.tir.text import expr_to_text
from irlab.viz.identity import NodeIds

_SHOWN = 40  # characters of an index/value written into a node's label


def _short(text: str, limit: int = _SHOWN) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _dim(expr) -> str:
    """A constant as its number (``128``, not ``int64(128)``), else the expression."""
    return str(expr.value) if isinstance(expr, IntImm) else expr_to_text(expr)


def _shape_text(buffer) -> str:
    return f"{buffer.dtype}[{', '.join(_dim(s) for s in buffer.shape)}]"


def _region_text(region) -> str:
    def rng(r):
        if isinstance(r.extent, IntImm) and r.extent.value == 1:
            return expr_to_text(r.min)
        return f"{expr_to_text(r.min)}:{expr_to_text(r.min + r.extent)}"
    return f"{region.buffer.name}[{', '.join(rng(r) for r in region.region)}]"


def _loop_label(loop) -> str:
    lo, ext = loop.min, loop.extent
    hi = IntImm(lo.dtype, lo.value + ext.value) if isinstance(lo, IntImm) and \
        isinstance(ext, IntImm) else lo + ext
    text = f"for {loop.loop_var.name_hint} in {_dim(lo)}..{_dim(hi)}"
    return text if loop.kind == S.ForKind.SERIAL else f"{text} ({loop.kind.name.lower()})"


def _accesses(stmt):
    """(buffers loaded, buffers stored) under ``stmt``, in first-seen order."""
    loads, stores = {}, {}

    def visit(node):
        if isinstance(node, BufferLoad):
            loads.setdefault(id(node.buffer), node.buffer)
        elif isinstance(node, S.BufferStore):
            stores.setdefault(id(node.buffer), node.buffer)
    post_order_visit(stmt, visit)
    return list(loads.values()), list(stores.values())


def _has_block(stmt) -> bool:
    found = []
    post_order_visit(stmt, lambda n: found.append(1) if isinstance(n, S.Block) else None)
    return bool(found)


class TIRGraphBuilder:
    """Walks one PrimFunc's statements and adds buffer, statement and loop-cluster nodes."""

    def __init__(self, graph, ids, fname, params=(), text=""):
        self.graph = graph
        self.ids = ids
        self.fname = fname
        self.params = set(params)
        self.lines = text.splitlines()
        self.claimed = graph.graph.setdefault("_claimed", set())
        self.buffers = {}  # id(data var) -> graph node id
        self.ranks = {}  # (rank kind, scope, name) -> next rank
        self.writers = set()  # buffer node ids whose "writer" key this version already set
        self.cluster = None

    # -- helpers ------------------------------------------------------------------------------
    def rank(self, *key) -> int:
        value = self.ranks.get(key, 0)
        self.ranks[key] = value + 1
        return value

    def ident(self, key, fallbacks=()):
        return self.ids.keyed((self.fname, *key), self.claimed,
                              tuple((self.fname, *f) for f in fallbacks))

    def line_of(self, pattern):
        """Line (1-based) of the printed program matching ``pattern``: blocks and buffer
        definitions are found by name; statements without a name get no line."""
        regex = re.compile(pattern)
        return next((i + 1 for i, line in enumerate(self.lines) if regex.search(line)), None)

    def add(self, ident, expr, kind, title, **extra):
        self.graph.add_node(ident, kind=kind, title=title, name=extra.pop("name", ""),
                            type=extra.pop("type", ""), attrs=extra.pop("attrs", {}),
                            summary=extra.pop("summary", ""), cluster=self.cluster,
                            ir_line=extra.pop("ir_line", None), expr=expr, **extra)
        return ident

    # -- buffers ------------------------------------------------------------------------------
    def define_buffer(self, buffer, kind, line=None):
        """A node for the storage behind ``buffer`` (its data var), created once."""
        data = buffer.data
        if id(data) in self.buffers:
            return self.note_view(buffer)
        name = data.name_hint
        ident = self.ident(("buffer", name, self.rank("buffer", name)))
        self.buffers[id(data)] = ident
        # Buffers sit outside every loop: they live as long as the function (or allocation).
        outer, self.cluster = self.cluster, None
        self.add(ident, buffer, kind, buffer.name, name=buffer.name, type=_shape_text(buffer),
                 shape=[expr_to_text(s) for s in buffer.shape], ir_line=line)
        self.cluster = outer
        return ident

    def note_view(self, buffer):
        """Another Buffer over known storage (FlattenBuffer's 1-D views): its shape is listed
        in the node's attrs, so flattening shows on the buffer node."""
        ident = self.buffers[id(buffer.data)]
        data = self.graph.nodes[ident]
        shape = _shape_text(buffer)
        if shape != data["type"]:
            views = data["attrs"].get("views", "")
            if shape not in views.split("; "):
                data["attrs"] = {**data["attrs"], "views": f"{views}; {shape}" if views else shape}
        return ident

    def buffer_node(self, buffer):
        if id(buffer.data) in self.buffers:
            return self.note_view(buffer)
        return self.define_buffer(buffer, "buffer")

    def connect(self, node, reads, writes):
        for index, buffer in enumerate(reads):
            self.graph.add_edge(self.buffer_node(buffer), node, index=index)
        for buffer in writes:
            self.graph.add_edge(node, self.buffer_node(buffer), index=0)

    # -- statements ---------------------------------------------------------------------------
    def visit(self, stmt):
        if stmt is None:
            return
        if isinstance(stmt, S.SeqStmt):
            for s in stmt.seq:
                self.visit(s)
        elif isinstance(stmt, S.For):
            self.visit_for(stmt)
        elif isinstance(stmt, S.BlockRealize):
            self.visit_block(stmt.block)
        elif isinstance(stmt, S.Block):
            self.visit_block(stmt)
        elif isinstance(stmt, S.BufferStore):
            self.visit_store(stmt)
        elif isinstance(stmt, S.Allocate):
            # The storage is drawn under the name of the buffer declared over it, if any.
            body = stmt.body
            if isinstance(body, S.DeclBuffer) and body.buffer.data is stmt.buffer_var:
                self.define_buffer(body.buffer, "buffer", self.line_of(
                    rf"^\s*{re.escape(stmt.buffer_var.name_hint)} = T\.allocate"))
            else:
                self.define_buffer(Buffer(stmt.buffer_var, stmt.dtype, stmt.extents,
                                          name=stmt.buffer_var.name_hint), "buffer")
            self.visit(body)
        elif isinstance(stmt, S.DeclBuffer):
            self.buffer_node(stmt.buffer)
            self.visit(stmt.body)
        elif isinstance(stmt, S.Evaluate):
            self.visit_evaluate(stmt)
        elif isinstance(stmt, S.IfThenElse):
            self.visit(stmt.then_case)
            self.visit(stmt.else_case)
        else:  # LetStmt, AttrStmt, AssertStmt, While: what computes is in the body
            self.visit(getattr(stmt, "body", None))

    def visit_for(self, loop):
        name = loop.loop_var.name_hint
        key = ("loop", self.cluster, name, self.rank("loop", self.cluster, name))
        cluster_id = f"cluster_{self.ident(key)}"
        attrs = {"kind": loop.kind.name.lower(), "extent": expr_to_text(loop.extent)}
        attrs.update({str(k): str(v) for k, v in loop.annotations})
        self.graph.graph["clusters"][cluster_id] = {
            "kind": "loop", "label": _loop_label(loop), "parent": self.cluster,
            "attrs": attrs, "loop": loop}
        outer, self.cluster = self.cluster, cluster_id
        try:
            self.visit(loop.body)
        finally:
            self.cluster = outer

    def visit_block(self, block):
        name = block.name_hint
        line = self.line_of(rf'T\.block\("{re.escape(name)}"\)')
        for buffer in block.alloc_buffers:
            self.define_buffer(buffer, "buffer", self.line_of(
                rf"^\s*{re.escape(buffer.name)} = T\.alloc_buffer"))
        if _has_block(block.body) or (block.init is not None and _has_block(block.init)):
            # A block of blocks: a box around its children (the root block: nothing).
            outer = self.cluster
            if name != "root":
                cluster_id = f"cluster_{self.ident(('block', name, self.rank('block', name)))}"
                self.graph.graph["clusters"][cluster_id] = {
                    "kind": "block", "label": f"block {name}", "parent": outer,
                    "attrs": {}, "block": block}
                self.cluster = cluster_id
            try:
                self.visit(block.init)
                self.visit(block.body)
            finally:
                self.cluster = outer
            return
        loads, stores = _accesses(block.body)
        if block.init is not None:
            init_loads, init_stores = _accesses(block.init)
            loads, stores = loads + init_loads, stores + init_stores
        reads = _unique([r.buffer for r in block.reads] + loads)
        writes = _unique([w.buffer for w in block.writes] + stores)
        ident = self.ident(("block", name, self.rank("block", name)))
        for buffer in writes:  # a store replacing this block after lowering takes its id
            node = self.buffer_node(buffer)
            if node not in self.writers:
                self.writers.add(node)
                self.ids.keyed((self.fname, "writer", node), set(), (), ident=ident)
        iters = "".join("SR"[iv.iter_type == 2] if iv.iter_type in (0, 2) else "O"
                        for iv in block.iter_vars)
        attrs = {"iter_vars": ", ".join(iv.var.name_hint for iv in block.iter_vars),
                 "reads": ", ".join(_region_text(r) for r in block.reads),
                 "writes": ", ".join(_region_text(w) for w in block.writes)}
        if block.init is not None:
            attrs["init"] = "yes"
        attrs.update({str(k): str(v) for k, v in block.annotations})
        self.add(ident, block, "call", f"block {name}", name=name, op="block",
                 summary=f"iters {iters}" if iters else "opaque", attrs=attrs, ir_line=line)
        self.connect(ident, reads, writes)

    def visit_store(self, store):
        target = self.buffer_node(store.buffer)
        rank = self.rank("store", target)
        fallbacks = [("writer", target)] if rank == 0 else []
        ident = self.ident(("store", target, rank), fallbacks)
        index = ", ".join(expr_to_text(i) for i in store.indices)
        value = expr_to_text(store.value)
        self.add(ident, store, "call", f"store {store.buffer.name}", name=store.buffer.name,
                 op="store", type=store.buffer.dtype, summary=_short(f"[{index}]"),
                 attrs={"indices": index, "value": _short(value, 120)})
        loads, _ = _accesses(store)
        self.connect(ident, _unique(loads), [store.buffer])

    def visit_evaluate(self, ev):
        value = ev.value
        if not isinstance(value, Call):  # evaluate(0) and the like compute nothing
            return
        op = getattr(value.op, "name", str(value.op))
        ident = self.ident(("eval", op, self.rank("eval", op)))
        self.add(ident, ev, "call", f"call {op}", name=op, op=op, type=value.dtype,
                 summary=_short(expr_to_text(value)))
        loads, _ = _accesses(ev)
        self.connect(ident, _unique(loads), [])

    def visit_func(self, func):
        for param in func.params:
            buffer = func.buffer_map.get(param)
            if buffer is None:
                continue
            kind = "param" if buffer.name in self.params else "input"
            self.define_buffer(buffer, kind, self.line_of(
                rf"def {re.escape(self.fname)}\("))
        self.visit(func.body)
        written = [n for n in self.buffers.values()
                   if self.graph.nodes[n]["kind"] in ("input", "param")
                   and any(True for _ in self.graph.predecessors(n))]
        if written:
            self.graph.graph.setdefault("outputs", {})[self.fname] = written[-1]


def _unique(buffers) -> list:
    """Buffers without repeats (by their storage)."""
    seen, out = set(), []
    for buffer in buffers:
        if id(buffer.data) not in seen:
            seen.add(id(buffer.data))
            out.append(buffer)
    return out


def build_tir_graph(mod_or_func, ids: NodeIds | None = None, params=None) -> nx.DiGraph:
    """The graph of a PrimFunc, or of every PrimFunc of an IRModule (``main`` first).

    ``ids``: a ``NodeIds`` shared across versions of the program, so nodes keep their ids from
    one pass to the next. ``params``: names of buffer params drawn as parameters, not inputs.
    """
    if isinstance(mod_or_func, PrimFunc):
        name = mod_or_func.attrs.get("global_symbol", "main") \
            if mod_or_func.attrs is not None else "main"
        mod = IRModule({str(name): mod_or_func})
    else:
        mod = mod_or_func
    ids = ids or NodeIds()
    try:
        text = str(mod)
    except Exception:  # a picture without line links is still a picture
        text = ""
    graph = nx.DiGraph()
    graph.graph["clusters"] = {}
    funcs = sorted(((gv.name_hint, f) for gv, f in mod.functions.items()
                    if isinstance(f, PrimFunc)), key=lambda kv: (kv[0] != "main", kv[0]))
    for fname, func in funcs:
        TIRGraphBuilder(graph, ids, fname, params or (), text).visit_func(func)
    graph.graph.pop("_claimed", None)
    return graph
