"""``explore(mod)``: the graph view and the pass stepper of one program, as one app.

Both widgets share the run (a ``PassTrace``) and its node ids. The graph tab opens on the input
program, where a student starts, and its step control (or the passes tab, which opens on the
first step that changed the program) moves it along the pipeline; the final program shows each
fused function as one node. Selecting a node in either selects it in both (the
inspector then lists the passes that made it); clicking a pass in the graph tab's provenance
list selects that step.

A big program (above ``DEFER_PASSES_ABOVE`` nodes: BERT-base's pipeline takes seconds) is
drawn at once and its pipeline runs when the passes are first asked for: the passes tab is
opened, ``stepper`` or ``trace`` is read (``defer_passes`` overrides the choice). Until then
the graph tab shows the input program with the run's node ids and no step control.

Tabs "Lowering" (``LoweringExplorer``) and "Run" (``RunPanel``) share one ``relay.build`` of the
program, made when either is first opened (or ``lowering`` / ``run_panel`` is first read):
building takes seconds. A run's time per kernel shows in the lowering tab's kernel list.

A Relax IRModule is explored the same way: its graph shows dataflow blocks as regions and
``call_tir`` edges from the module's PrimFuncs (``viz.relax_graph``), the passes tab runs the
Relax pipeline (``relax.get_pipeline()`` then relax.build's ``default_build``), the lowering
tab shows each kernel of the ``relax.build`` of the last step (selecting a ``call_tir`` node
in the graph opens its kernel: ``lower_call``), and the run tab (``RelaxRunPanel``) runs the VM
for the symbolic dimensions the student picks.
With ``database=`` (a MetaSchedule tuning database) that build applies its best records
(``ms.relay_integration.compile_relay``): the lowering tab marks the tuned kernels and shows
each one's trace, with its sampled decisions, beside TOPI's default schedule.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import traitlets as t

from irlab.viz.pass_trace import PassTrace
from irlab.viz.relax_graph import is_relax_module
from irlab.widgets.graph_view import GraphView
from irlab.widgets.layout import LAYOUT_TIMEOUT
from irlab.widgets.lowering_data import as_factory
from irlab.widgets.lowering_explorer import LoweringExplorer
from irlab.widgets.pass_stepper import PassStepper
from irlab.widgets.pipeline import default_passes
from irlab.widgets.picture import StaticPicture, titled
from irlab.widgets.run_panel import RunPanel

TAB_TITLES = ("Graph", "Passes", "Lowering", "Run")
# Program nodes (distinct calls, variables, constants: ``instrument.module_counts``) above
# which the pipeline runs on demand. ResNet-18 has 193 (its pipeline and the graphs of its
# steps take 2 s), ResNet-50 498, BERT-base 720 (8 s), simplenet 14.
DEFER_PASSES_ABOVE = 150


class Explorer(StaticPicture, widgets.VBox):
    """Tabs "Graph" (``graph_view``) and "Passes" (``stepper``) over one pipeline run, and
    "Lowering" (``lowering``) and "Run" (``run_panel``) over its ``relay.build``."""

    def __init__(self, mod_or_expr, params=None, passes=None, opt_level=3, *, disabled_pass=(),
                 timeout=LAYOUT_TIMEOUT, tab="Graph", target="llvm", database=None,
                 defer_passes=None, **kwargs):
        # the passes run under the build's target, so the steps are what relay.build does
        if passes is None and not is_relax_module(mod_or_expr):
            passes = default_passes()
        trace = PassTrace(mod_or_expr, passes, params, opt_level, disabled_pass=disabled_pass,
                          target=target, lazy=True)
        self._timeout = timeout
        self.graph_view = GraphView(timeout=timeout)
        self._source, self._params, self._target = mod_or_expr, params, target
        self.is_relax = trace.is_relax
        self._database = database
        self._factory = None
        self._stepper = None
        self._lowering = None
        self._run_panel = None
        build = "relax.build" if self.is_relax else "relay.build"
        self._passes_status = widgets.HTML(
            "<i>Running the pass pipeline when this tab is first opened…</i>")
        self._passes_box = widgets.VBox([self._passes_status])
        self._lowering_box = widgets.VBox([widgets.HTML(
            f"<i>Building the module ({build}) when this tab is first opened…</i>")])
        self._run_box = widgets.VBox([widgets.HTML(
            "<i>Building and running the module when this tab is first opened…</i>")])
        self.tabs = widgets.Tab(children=[self.graph_view, self._passes_box,
                                          self._lowering_box, self._run_box])
        self.tabs.titles = TAB_TITLES
        self.tabs.selected_index = TAB_TITLES.index(tab) if tab in TAB_TITLES else 0
        self._stale = False
        self.graph_view.observe(self._goto_step, names=["step"])
        self.tabs.observe(self._on_tab, names=["selected_index"])
        if self.is_relax:
            self.graph_view.observe(self._follow_call, names=["selected"])
        super().__init__(children=[self.tabs], **kwargs)
        self.add_class("irlab-explorer")
        self._pending = trace
        if defer_passes is None:
            defer_passes = _size(trace) > DEFER_PASSES_ABOVE
        if defer_passes:
            self.graph_view.show_input(trace)
        else:
            self._start_stepper()
        self._on_tab({"new": self.tabs.selected_index})

    def _start_stepper(self):
        """Run the pipeline (when deferred) and make the passes tab and the graph tab's step
        control."""
        trace = self._pending
        started = []

        def report(name):  # a live line while the pipeline runs (seconds on a big model)
            started.append(name)
            self._passes_status.value = (f"<i>Running the pass pipeline: pass {len(started)}, "
                                         f"{html.escape(name)}…</i>")

        trace.progress = report
        try:
            stepper = PassStepper(trace, timeout=self._timeout)
        finally:
            trace.progress = None
        # the graph tab stays where it is (before ``_stepper`` is set: not a step change)
        self.graph_view.show_step(trace, max(0, self.graph_view.step))
        self._stepper, self._pending = stepper, None
        self._link = t.link((self.graph_view, "selected"), (self._stepper, "selected"))
        self._stepper.observe(self._follow_step, names=["step", "runs"])
        self.tabs.children = [self.graph_view, self._stepper, self._lowering_box, self._run_box]

    @property
    def stepper(self):
        """The ``PassStepper`` (the pipeline runs on first use when it was deferred)."""
        if self._stepper is None:
            self._start_stepper()
        return self._stepper

    @property
    def trace(self):
        """The current ``PassTrace`` (a new one after each re-run)."""
        return self.stepper.trace

    @property
    def passes_ran(self) -> bool:
        """False while the pipeline waits for the passes tab (a deferred run)."""
        return self._stepper is not None

    def _follow_step(self, change):
        # Laying out a big graph takes time: only when the graph tab is in view.
        if self.tabs.selected_index == 0:
            self.graph_view.show_step(self.stepper.trace, self.stepper.step)
        else:
            self._stale = True

    def _on_tab(self, change):
        if change["new"] == 1 and self._stepper is None:
            try:
                self._start_stepper()
            except Exception as err:  # noqa: BLE001 - shown in the tab, not lost in a log
                self._passes_box.children = [widgets.HTML(
                    f"<pre style='color:#dc2626'>cannot run the passes: "
                    f"{html.escape(type(err).__name__)}: {html.escape(str(err))}</pre>")]
        elif change["new"] == 0 and self._stale:
            self._stale = False
            self.graph_view.show_step(self.stepper.trace, self.stepper.step)
        elif change["new"] == 2:
            self._open(self._lowering_box, lambda: self.lowering)
        elif change["new"] == 3:
            self._open(self._run_box, lambda: self.run_panel)

    # -- the built module (lazily) ----------------------------------------------------------------
    def _open(self, box, make):
        try:
            view = make()
        except Exception as err:  # noqa: BLE001 - e.g. an op without a compute: say so
            box.children = [widgets.HTML(
                f"<pre style='color:#dc2626'>cannot build the module: "
                f"{html.escape(type(err).__name__)}: {html.escape(str(err))}</pre>")]
            return
        if box.children != (view,):
            box.children = [view]

    @property
    def factory(self):
        """``relay.build`` of the program (built on first use); for a Relax module a
        ``RelaxBuild`` of the pass stepper's last program."""
        if self._factory is None and self._database is not None:
            from irlab import meta_schedule as ms
            from irlab.ir.module import IRModule

            source = self._source if isinstance(self._source, IRModule) else \
                IRModule.from_expr(self._source)
            self._factory = ms.relay_integration.compile_relay(
                self._database, source, self._target, self._params)
        if self._factory is None:
            if self.is_relax:
                from irlab.widgets.relax_build import RelaxBuild

                trace = self.stepper.trace
                self._factory = RelaxBuild(trace.input, self._target, lowered=None if
                                           trace.error is not None else trace.output)
            else:
                self._factory = as_factory(self._source, self._params, self._target)
        return self._factory

    # -- Relax: from a call_tir to its kernel ----------------------------------------------------
    def kernel_of(self, node_id) -> str:
        """The kernel of the built module a graph node calls (a ``call_tir`` binding or a
        PrimFunc), "" if none."""
        kernels = [low.name for low in self.factory.lowered]
        trace = self.stepper.trace
        # the node as shown, then as later steps made it (R.matmul becomes call_tir matmul)
        graphs = [self.graph_view._full] + [trace.graph(i) for i in
                                            reversed(range(len(trace.steps)))]
        for graph in graphs:
            if graph is None or node_id not in graph:
                continue
            data = graph.nodes[node_id]
            name = data.get("callee") or (data.get("name") if data.get("kind") == "prim_func"
                                          else "")
            if name in kernels:
                return name
            # after fusion the kernel holding it is named after what it fused
            fused = next((k for k in kernels if name and k.startswith("fused_") and name in k),
                         "")
            if fused:
                return fused
        return ""

    def lower_call(self, node_id) -> str:
        """Open the lowering tab on the kernel graph node ``node_id`` calls; its name."""
        name = self.kernel_of(node_id)
        if name:
            self.lowering.kernel = name
            self.tabs.selected_index = TAB_TITLES.index("Lowering")
        return name

    def _follow_call(self, change):
        if self._lowering is not None and change["new"]:
            name = self.kernel_of(change["new"])
            if name:
                self._lowering.kernel = name

    @property
    def lowering(self):
        """The ``LoweringExplorer`` of the built module (made on first use)."""
        if self._lowering is None:
            self._lowering = LoweringExplorer(self.factory)
            note = getattr(self.factory, "note", "")
            if note:
                self._lowering.status = f"{self._lowering.status} ({note})"
            if self._run_panel is not None and not self.is_relax:
                self._lowering.set_times(self._run_panel.kernel_times)
        return self._lowering

    @property
    def run_panel(self):
        """The ``RunPanel`` of the built module (made, and run, on first use)."""
        if self._run_panel is None and self.is_relax:
            from irlab.widgets.relax_run_panel import RelaxRunPanel

            self._run_panel = RelaxRunPanel(self.factory, run=True)
        if self._run_panel is None:
            self._run_panel = RunPanel(self.factory, run=False)
            self._run_panel.observe(self._share_times, names=["node_times"])
            self._run_panel.run()
        return self._run_panel

    def _share_times(self, change):
        if self._lowering is not None and self._run_panel is not None:
            self._lowering.set_times(self._run_panel.kernel_times)

    def _goto_step(self, change):
        if self._stepper is None:  # the input program, before a deferred run
            return
        if change["new"] >= 0 and change["new"] != self.stepper.step:
            self.stepper.step = change["new"]

    def to_html(self) -> str:
        """The static pictures of the tabs made so far: graph, passes once run, and lowering
        and run once built (nothing is run or built for a picture)."""
        parts = [self.graph_view.to_html()]
        if self._stepper is not None:  # a picture does not run a deferred pipeline
            parts.append(self._stepper.to_html())
        parts += [view.to_html() for view in (self._lowering, self._run_panel)
                  if view is not None]
        return titled("Explorer", " · ".join(TAB_TITLES), *parts)



def explore(mod_or_expr, params=None, passes=None, opt_level=3, **kwargs) -> Explorer:
    """Graph view and pass stepper of ``mod_or_expr`` (IRModule, function or expression; a
    Relay or a Relax program) run through ``passes`` (default relay.optimize's pipeline, or
    the Relax pipeline), and the lowering explorer and run panel of its ``relay.build`` /
    ``relax.build`` (made when their tab is first opened), as one app."""
    return Explorer(mod_or_expr, params, passes, opt_level, **kwargs)


def _size(trace) -> int:
    """Nodes of the trace's input program (what decides whether its pipeline waits)."""
    from irlab.instrument import module_counts

    return module_counts(trace.input)[0]
