"""What the pass stepper shows, as JSON, computed from a ``PassTrace`` and cached: the step
list, and for a pair (base step, step) the IR diff rows and the before/after graph laid out
once on the union of both graphs (nodes keep their place between the two panes).

Texts and layouts are shared by reference (``text_a: "t3"``, ``graph: "g5"``): unchanged
steps show the same program, so a static export stores each one once; ``resolve`` inlines
them for the live widget. No Jupyter package is needed here (the HTML export uses it).
"""

from __future__ import annotations

from irlab.viz.graph_diff import graph_diff, union_graph
from irlab.viz.layer_groups import node_scopes, with_layer_groups
from irlab.viz.pass_trace import _module_key
from irlab.widgets.group_layout import GroupLayoutCache
from irlab.widgets.layout import LAYOUT_TIMEOUT, layout_payload
import re

from irlab.widgets.text_rows import diff_rows, diff_stats

BEFORE = -1  # base "the program this step received"


class TraceData:
    """JSON views of one ``PassTrace``; everything is computed on first use and cached."""

    def __init__(self, trace, timeout=LAYOUT_TIMEOUT):
        self.trace = trace
        self.timeout = timeout
        self.texts: dict = {}  # text key -> printed program
        self.layouts: dict = {}  # layout key -> layout payload
        self._text_keys: dict = {}  # module key -> (module, text key)
        self._layout_keys: dict = {}  # (id(graph a), id(graph b)) -> (a, b, layout key)
        self._pairs: dict = {}
        self._scopes = None  # node id -> layer scope path, of the input program
        self.group_layouts = GroupLayoutCache()  # big graphs: an unchanged group is not laid
        # out again on the next step (group_layout.py)

    # -- the step list ----------------------------------------------------------------------------
    def step_rows(self) -> list:
        """One row per step: index, name, nesting, time, changed mark, counts, errors."""
        trace = self.trace
        parents = {s.parent for s in trace.steps if s.parent is not None}
        return [{"i": s.index, "name": s.name, "depth": s.depth, "parent": s.parent,
                 "ms": round(s.seconds * 1e3, 3), "changed": bool(s.changed),
                 "nodes": s.node_count, "ops": int(sum(s.op_counts.values())),
                 "error": _finite(s.error), "abs_error": _finite(s.abs_error),
                 "children": s.index in parents} for s in trace.steps]

    def step_names(self) -> list:
        return [s.name for s in self.trace.steps]

    # -- texts ------------------------------------------------------------------------------------
    def text_key(self, module) -> str:
        """Key of the printed ``module`` in ``texts`` (printed once per distinct program)."""
        key = _module_key(module)
        if key not in self._text_keys:
            tkey = f"t{len(self._text_keys)}"
            self._text_keys[key] = (module, tkey)
            self.texts[tkey] = str(module)
        return self._text_keys[key][1]

    def module_of(self, step, side_base=None):
        s = self.trace.steps[step]
        if side_base == BEFORE:
            return s.before if s.before is not None else self.trace.input
        return s.module

    def input_scopes(self) -> dict:
        """The layer of each node of the input program (``irlab.viz.layer_groups``): later
        programs keep them, so that the graphs are grouped as the graph view groups them."""
        if self._scopes is None:
            self._scopes = node_scopes(self.trace.graph(0))
        return self._scopes

    # -- pairs ------------------------------------------------------------------------------------
    def base_label(self, step, base) -> str:
        if base == BEFORE or base == step:
            return "input of this pass" if step else "input program"
        return f"after step {base}: {self.trace.steps[base].name}"

    def pair(self, step, base=BEFORE) -> dict:
        """Diff of ``step`` against ``base`` (a step index, or ``BEFORE``), with references."""
        trace = self.trace
        step = max(0, min(int(step), len(trace.steps) - 1))
        base = int(base)
        if base >= len(trace.steps) or base < BEFORE:
            base = BEFORE
        key = (base, step)
        if key in self._pairs:
            return self._pairs[key]
        if base == BEFORE:
            module_a, graph_a = self.module_of(step, BEFORE), trace.before_graph(step)
        else:
            module_a, graph_a = trace.steps[base].module, trace.graph(base)
        graph_b = trace.graph(step)
        ta, tb = self.text_key(module_a), self.text_key(trace.steps[step].module)
        rows = diff_rows(self.texts[ta], self.texts[tb])
        lkey, states = self.layout_key(graph_a, graph_b)
        s = trace.steps[step]
        counts = {"added": 0, "removed": 0, "changed": 0}
        for state in states.values():
            counts[state] += 1
        payload = {"key": f"{base}:{step}", "step": step, "base": base,
                   "base_label": self.base_label(step, base), "title": s.name,
                   "ms": round(s.seconds * 1e3, 3), "changed": bool(s.changed),
                   "text_a": ta, "text_b": tb, "rows": rows,
                   "stats": {**diff_stats(rows), "nodes": counts},
                   "same": all(r[0] == "e" for r in rows) and not states,
                   "graph": lkey}
        self._pairs[key] = payload
        return payload

    def layout_key(self, graph_a, graph_b):
        """Lay out (once) the union of two graphs, with each node's diff state."""
        ident = (id(graph_a), id(graph_b))
        if ident in self._layout_keys:
            return self._layout_keys[ident][2:4]
        states = {} if graph_a is graph_b else graph_diff(graph_a, graph_b)
        graph = graph_b if graph_a is graph_b else union_graph(graph_a, graph_b)
        graph = with_layer_groups(graph, node_scopes(graph, known=self.input_scopes()))
        edge_states = {}
        if graph_a is not graph_b:
            ea, eb = set(graph_a.edges), set(graph_b.edges)
            edge_states = {**{e: "removed" for e in ea - eb}, **{e: "added" for e in eb - ea}}
        payload = layout_payload(graph, states, edge_states, self.timeout,
                                 cache=self.group_layouts)
        if graph_a is not graph_b:
            in_a = graph_a.graph.get("clusters", {})
            in_b = graph_b.graph.get("clusters", {})
            for cluster in payload["clusters"]:
                if cluster["id"] not in in_a:
                    cluster["state"] = "added"
                elif cluster["id"] not in in_b:
                    cluster["state"] = "removed"
        provenance = self.trace.provenance()
        names = self.step_names()
        for node in payload["nodes"]:
            node["prov"] = [[i, names[i]] for i in provenance.get(node["id"], [])]
        lkey = f"g{len(self._layout_keys)}"
        payload["key"] = lkey
        self.layouts[lkey] = payload
        self._layout_keys[ident] = (graph_a, graph_b, lkey, states, graph)
        return lkey, states

    def resolve(self, pair: dict) -> dict:
        """``pair`` with its text and layout references replaced by their values."""
        out = dict(pair)
        out["text_a"] = self.texts[pair["text_a"]]
        out["text_b"] = self.texts[pair["text_b"]]
        out["graph"] = self.layouts[pair["graph"]]
        return out

    def union(self, step, base=BEFORE):
        """The union graph behind ``pair(step, base)`` (for the inspector)."""
        trace = self.trace
        graph_b = trace.graph(step)
        graph_a = trace.before_graph(step) if base == BEFORE else trace.graph(base)
        self.layout_key(graph_a, graph_b)
        return self._layout_keys[(id(graph_a), id(graph_b))][4]


_ANNOTATION = re.compile(r" ?/\*.*?\*/")


def without_types(text: str) -> str:
    """A printed Relay program without its ``/* ty=... span=... */`` annotations (the
    signature's types stay). Lines keep their numbers."""
    return "\n".join(_ANNOTATION.sub("", line) for line in text.split("\n"))


def pair_without_types(current: dict) -> dict:
    """A resolved pair (``TraceData.resolve``) with the annotations left out of both texts and
    the diff recomputed on them: a step that only changed types shows no changed line."""
    text_a, text_b = without_types(current["text_a"]), without_types(current["text_b"])
    rows = diff_rows(text_a, text_b)
    stats = {**diff_stats(rows), "nodes": current["stats"]["nodes"]}
    return {**current, "text_a": text_a, "text_b": text_b, "rows": rows, "stats": stats}


def visible_steps(rows, hide_unchanged=False, query="") -> list:
    """Indexes of the steps the list shows: the input always; others when they changed (or
    ``hide_unchanged`` is off) and their name contains ``query`` (the browser's rule too)."""
    q = (query or "").strip().lower()
    return [r["i"] for r in rows if r["i"] == 0 or (
        (not hide_unchanged or r["changed"]) and (not q or q in r["name"].lower()))]


def interesting_steps(trace) -> list:
    """The steps that changed the program themselves (not only through a nested pass that
    changed it: a Sequential), in order."""
    explained = {s.parent for s in trace.steps if s.changed}
    return [s.index for s in trace.steps[1:] if s.changed and s.index not in explained]


def first_interesting_step(trace) -> int:
    """The first of ``interesting_steps``, else 0."""
    return next(iter(interesting_steps(trace)), 0)


def _finite(value):
    """JSON has no inf/nan: an error that could not be measured is sent as -1."""
    if value is None:
        return None
    value = float(value)
    return value if value == value and value not in (float("inf"), float("-inf")) else -1.0
