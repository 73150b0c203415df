"""``GraphView``: a Relay program as an interactive graph in a notebook cell.

Pan and zoom (wheel, drag, Fit), search by op or name (matches highlighted, Enter jumps from
one to the next), click a node to see its op, all attrs, type, name and its line in the printed
IR (highlighted in the IR pane; clicking a line selects its node). Big graphs stay usable:
layers (name scopes from the ONNX node names or the model builder's weight names, see
``irlab.viz.layer_groups``) and fused functions are groups that collapse into one node each
(new layout; above ``big`` nodes they all start collapsed; double-click or ``expand(id)`` opens
one, "Expand all" / ``expand_all()`` every one; a search hit inside a collapsed group opens it:
``reveal(id)``); the final program of a pass trace shows one node per fused function; the
neighbourhood view shows only the nodes within k hops of the selected one.

Weights (constants and parameters) are folded into the nodes that use them: the inspector lists
each one's shape, dtype and first values; ``weights=True`` (the "weights" checkbox) draws them as
nodes again.

Everything the user does is a synced trait, so Python observers see it: ``selected`` (node
id; ``inspector`` then holds its description), ``search`` (``matches``), ``collapsed``
(cluster ids), ``focus``/``hops`` (``neighbours``), ``weights``.
"""

from __future__ import annotations

import itertools

import anywidget
import traitlets as t

from irlab.widgets.assets import css, widget_module
from irlab.viz.layer_groups import node_scopes, with_layer_groups
from irlab.widgets.graph_ops import (all_groups, cluster_tree, collapse, fused_groups,
                                     neighbourhood, node_details, owners, search_nodes)
from irlab.widgets.group_layout import GroupLayoutCache
from irlab.widgets.layout import LAYOUT_TIMEOUT, layout_payload
from irlab.widgets.picture import StaticPicture, graph_svg, titled
from irlab.widgets.trace_data import interesting_steps

# Nodes (weights folded): above this, each fused function starts as one node. ResNet-50
# after FuseOps is 198 nodes in 71 fused functions, 127 nodes collapsed.
BIG_GRAPH = 150
_keys = itertools.count()


def as_module(mod_or_expr):
    """An ``IRModule`` for a module, a function or any Relay expression."""
    from irlab.ir.module import IRModule

    return mod_or_expr if isinstance(mod_or_expr, IRModule) else IRModule.from_expr(mod_or_expr)


def typed(mod):
    """``mod`` with types inferred (types label the nodes); as it is when inference fails,
    with the reason, so that an ill-typed program can still be looked at."""
    from irlab.relay.transform import InferType

    try:
        return InferType()(mod), ""
    except Exception as err:  # noqa: BLE001 - the picture is still useful
        return mod, f"type inference failed: {err}"


class GraphView(StaticPicture, anywidget.AnyWidget):
    """Interactive graph of ``mod_or_expr`` (an IRModule, a function or an expression).

    ``params``: weights (dict or names), folded into their users like constants unless
    ``fold_weights=False`` (the ``weights`` trait: True draws them as nodes). With
    ``trace=`` (a ``PassTrace``) and ``step=``, shows the program after that step, with the
    trace's node ids (shared with a ``PassStepper``) and each node's provenance.
    """

    _esm = widget_module("graph_view.js", "renderGraphView")
    _css = css()

    graph = t.Dict().tag(sync=True)
    ir = t.Unicode("").tag(sync=True)
    title = t.Unicode("").tag(sync=True)
    status = t.Unicode("").tag(sync=True)
    selected = t.Unicode("").tag(sync=True)
    search = t.Unicode("").tag(sync=True)
    collapsed = t.List(t.Unicode()).tag(sync=True)
    focus = t.Unicode("").tag(sync=True)
    hops = t.Int(2).tag(sync=True)
    step = t.Int(-1).tag(sync=True)
    step_names = t.List(t.Unicode()).tag(sync=True)  # a trace's steps: the step control
    changed_steps = t.List(t.Int()).tag(sync=True)  # where ◀ ▶ stop: steps that changed it
    weights = t.Bool(False).tag(sync=True)  # constants and parameters drawn as nodes
    # Computed in Python for observers (the browser computes its own copies).
    inspector = t.Dict()
    matches = t.List()
    neighbours = t.List()

    def __init__(self, mod_or_expr=None, params=None, *, trace=None, step=None,
                 timeout=LAYOUT_TIMEOUT, big=BIG_GRAPH, fold_weights=True, **kwargs):
        super().__init__(**kwargs)
        self._program = None  # (module or expression, params) shown by ``show``
        self.weights = not fold_weights
        self.timeout = timeout
        self.big = big
        self._full = None  # the graph before collapsing
        self._shown = None  # the graph drawn (collapsed clusters as nodes)
        self._provenance = {}
        self._names = []
        self._trace = None  # the PassTrace whose steps the step control moves through
        self._at = None  # the step of ``_trace`` shown
        self._layouts = {}  # (id(full graph), collapsed ids) -> (graph, reduced, payload)
        self._group_layouts = GroupLayoutCache()  # big graphs: groups laid out once each
        self._grouped = {}  # id(graph) -> (graph, graph with its layer groups)
        self._scopes = (None, {})  # (trace, node scopes of its input program)
        if trace is None and type(mod_or_expr).__name__ == "PassTrace":
            trace, mod_or_expr = mod_or_expr, None
        if trace is not None:
            self.show_step(trace, len(trace.steps) - 1 if step is None else step)
        elif mod_or_expr is not None:
            self.show(mod_or_expr, params)

    # -- what is shown ----------------------------------------------------------------------------
    def show(self, mod_or_expr, params=None):
        """Show another program."""
        from irlab.viz.relay_graph import build_relay_graph

        self._program = (mod_or_expr, params)
        self._trace = self._at = None
        self.step_names, self.changed_steps = [], []
        mod, problem = typed(as_module(mod_or_expr))
        graph = with_layer_groups(build_relay_graph(mod, params, fold_weights=not self.weights))
        self._provenance, self._names = {}, []
        text = graph.graph.get("text") or str(mod)  # printed once, by the graph builder
        self._set_source(graph, text, "program", problem, step=-1)

    def show_step(self, trace, index):
        """Show the program after step ``index`` of ``trace`` (a ``PassTrace``)."""
        index = max(0, min(int(index), len(trace.steps) - 1))
        graph = self._with_groups(trace, trace.graph(index))
        self._program = None
        if trace is not self._trace:
            self.changed_steps = interesting_steps(trace)
            self._layouts.clear()  # laid out without the provenance of this trace's steps
        self._trace, self._at = trace, index
        self._provenance = trace.provenance()
        self._names = [s.name for s in trace.steps]
        title = self._step_title(index)
        # The final program reads as one node per fused function, whatever its size.
        final = index == len(trace.steps) - 1
        self._set_source(graph, trace.text(index), title, "", step=index, collapse=final)

    def show_input(self, trace):
        """Show the input program of ``trace`` (a ``PassTrace``) with the node ids of its run,
        without running its passes (a lazy trace: the explorer draws a big model at once and
        runs the pipeline when the passes are asked for). ``show_step`` adds the step control
        once the trace has run."""
        graph = self._with_groups(trace, trace.graph(0))
        self._program = None
        self._trace = self._at = None
        self.step_names, self.changed_steps = [], []
        self._provenance, self._names = {}, []
        text = graph.graph.get("text") or trace.text(0)  # printed once, by the graph builder
        self._set_source(graph, text, "input program", "", step=0)

    def _with_groups(self, trace, graph):
        """``graph`` (a step of ``trace``) with its layer groups, made once per graph; the
        layers are those of the trace's input program, where the weights still have names."""
        if self._scopes[0] is not trace:
            self._scopes = (trace, node_scopes(trace.graph(0)))
            self._grouped = {}
        if id(graph) not in self._grouped:
            scopes = node_scopes(graph, known=self._scopes[1])
            self._grouped[id(graph)] = (graph, with_layer_groups(graph, scopes))
        return self._grouped[id(graph)][1]

    def _set_source(self, graph, text, title, problem, step, collapse=False):
        fresh = graph is not self._full
        self._full = graph
        with self.hold_trait_notifications():
            self.ir = text
            self.title = title
            self.status = problem
            self.step = step
            self.step_names = list(self._names)
            if fresh and not self.collapsed:  # the observer redraws
                if len(graph) > self.big:
                    self.collapsed = all_groups(graph)
                elif collapse:
                    self.collapsed = fused_groups(graph)
            self._redraw()

    # -- observers --------------------------------------------------------------------------------
    @t.observe("collapsed")
    def _on_collapsed(self, change):
        if self._full is not None:
            self._redraw()

    @t.validate("step")
    def _valid_step(self, proposal):
        value = int(proposal["value"])
        trace = getattr(self, "_trace", None)
        return value if trace is None else max(0, min(value, len(trace.steps) - 1))

    @t.observe("step")
    def _on_step(self, change):
        # the step control (browser) or Python moved to another step of the trace
        if self._trace is not None and 0 <= change["new"] < len(self._trace.steps) and \
                change["new"] != self._at:
            self.show_step(self._trace, change["new"])

    def _step_title(self, index):
        return "input program" if index == 0 else \
            f"after step {index}: {self._trace.steps[index].name}"

    @t.observe("weights")
    def _on_weights(self, change):
        if self._program is not None and self.step < 0:  # a trace's graphs are its own
            self.show(*self._program)

    @t.observe("selected")
    def _on_selected(self, change):
        self._describe()
        if self.focus and self.selected:
            self.focus = self.selected

    @t.observe("search")
    def _on_search(self, change):
        self.matches = search_nodes(self._shown, self.search) if self._shown is not None else []

    @t.observe("focus", "hops")
    def _on_focus(self, change):
        self.neighbours = sorted(neighbourhood(self._shown, self.focus, self.hops)) \
            if self._shown is not None and self.focus else []

    def _redraw(self):
        graph = self._full
        known = set(graph.graph.get("clusters", {}))
        shut = tuple(sorted(c for c in self.collapsed if c in known))
        key = (id(graph), shut)
        if key not in self._layouts:
            reduced = collapse(graph, shut)
            payload = layout_payload(reduced, timeout=self.timeout, cache=self._group_layouts)
            payload["key"] = f"v{next(_keys)}"
            payload["top_clusters"] = all_groups(graph)  # what "Collapse groups" collapses
            for node in payload["nodes"]:
                steps = self._provenance.get(node["id"])
                if self._names:
                    node["prov"] = [[i, self._names[i]] for i in steps or []]
            if len(self._layouts) > 16:  # bounded: a long session steps through many graphs
                self._layouts.pop(next(iter(self._layouts)))
            self._layouts[key] = (graph, reduced, payload)
        _, self._shown, payload = self._layouts[key]
        if self.selected and self.selected not in self._shown:
            # the selected node went into a collapsed function: select that function
            owner = next((c for c in shut if self.selected in cluster_tree(graph)[c]), "")
            if owner:
                self.selected = owner
        self.graph = payload
        self._describe()
        self._on_search(None)
        self._on_focus(None)

    def _describe(self):
        if self._shown is None or not self.selected:
            self.inspector = {}
            return
        self.inspector = node_details(self._shown, self.selected, self.ir,
                                      self._provenance.get(self.selected, []), self._names)

    # -- Python-side controls ------------------------------------------------------------------
    def select(self, node_id):
        """Select a node (as a click does)."""
        self.selected = node_id or ""

    def collapse_all(self):
        """Draw every layer group and fused function as one node."""
        if self._full is not None:
            self.collapsed = all_groups(self._full)

    def reveal(self, node_id):
        """Expand the collapsed groups ``node_id`` is hidden in, and select it."""
        if self._full is None or node_id not in self._full:
            raise KeyError(f"no node {node_id!r} in the graph")
        hidden_in = set(owners(self._full, node_id, self.collapsed))
        if hidden_in:  # laid out again now, so that the node is there to select
            self.collapsed = [c for c in self.collapsed if c not in hidden_in]
        self.selected = node_id

    def expand_all(self):
        self.collapsed = []

    def expand(self, cluster_id):
        """Draw the fused function ``cluster_id`` (a collapsed node's id) with its ops."""
        self.collapsed = [c for c in self.collapsed if c != cluster_id]

    def collapse_group(self, cluster_id):
        """Draw the fused function ``cluster_id`` as one node."""
        if cluster_id not in self.collapsed:
            self.collapsed = [*self.collapsed, cluster_id]

    def show_neighbourhood(self, node_id=None, hops=None):
        """Show only the nodes near ``node_id`` (default: the selected one); None: all."""
        if hops is not None:
            self.hops = int(hops)
        self.focus = (node_id if node_id is not None else self.selected) or ""

    @property
    def networkx_graph(self):
        """The graph drawn (``networkx.DiGraph``; collapsed functions as single nodes)."""
        return self._shown

    # -- static picture ---------------------------------------------------------------------------
    def to_html(self) -> str:
        """The graph as drawn now (collapsed functions as one node each) as an inline SVG,
        with its title and node count (every label escaped)."""
        payload = self.graph or {}
        nodes = len(payload.get("nodes", []))
        notes = [f"{nodes} nodes"]
        if self.collapsed:
            notes.append(f"{len(self.collapsed)} fused functions collapsed")
        for problem in (self.status, payload.get("warning", "")):
            if problem:
                notes.append(problem)
        return titled(f"GraphView: {self.title or 'program'}", " · ".join(notes),
                      graph_svg(payload))
