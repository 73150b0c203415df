"""``explore(mod)``: the graph view and the pass stepper of one program, as one app.

Both widgets share the run (a ``PassTrace``) and its node ids: the graph tab shows the program
after the step selected in the passes tab; selecting a node in either selects it in both (the
inspector then lists the passes that made it); clicking a pass in the graph tab's provenance
list selects that step.

Tabs "Lowering" (``LoweringExplorer``) and "Run" (``RunPanel``) share one ``relay.build`` of the
program, made when either is first opened (or ``lowering`` / ``run_panel`` is first read):
building takes seconds. A run's time per kernel shows in the lowering tab's kernel list.
With ``database=`` (a MetaSchedule tuning database) that build applies its best records
(``ms.relay_integration.compile_relay``): the lowering tab marks the tuned kernels and shows
each one's trace, with its sampled decisions, beside TOPI's default schedule.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import traitlets as t

from irlab.widgets.graph_view import GraphView
from irlab.widgets.layout import LAYOUT_TIMEOUT
from irlab.widgets.lowering_data import as_factory
from irlab.widgets.lowering_explorer import LoweringExplorer
from irlab.widgets.pass_stepper import PassStepper
from irlab.widgets.picture import StaticPicture, titled
from irlab.widgets.run_panel import RunPanel

TAB_TITLES = ("Graph", "Passes", "Lowering", "Run")


class Explorer(StaticPicture, widgets.VBox):
    """Tabs "Graph" (``graph_view``) and "Passes" (``stepper``) over one pipeline run, and
    "Lowering" (``lowering``) and "Run" (``run_panel``) over its ``relay.build``."""

    def __init__(self, mod_or_expr, params=None, passes=None, opt_level=3, *, disabled_pass=(),
                 timeout=LAYOUT_TIMEOUT, tab="Graph", target="llvm", database=None,
                 **kwargs):
        # the passes run under the build's target, so the steps are what relay.build does
        self.stepper = PassStepper(mod_or_expr, passes, params, opt_level,
                                   disabled_pass=disabled_pass, target=target, timeout=timeout)
        self.graph_view = GraphView(trace=self.stepper.trace, step=self.stepper.step,
                                    timeout=timeout)
        self._source, self._params, self._target = mod_or_expr, params, target
        self._database = database
        self._factory = None
        self._lowering = None
        self._run_panel = None
        self._lowering_box = widgets.VBox([widgets.HTML(
            "<i>Building the module (relay.build) when this tab is first opened…</i>")])
        self._run_box = widgets.VBox([widgets.HTML(
            "<i>Building and running the module when this tab is first opened…</i>")])
        self.tabs = widgets.Tab(children=[self.graph_view, self.stepper, self._lowering_box,
                                          self._run_box])
        self.tabs.titles = TAB_TITLES
        self.tabs.selected_index = TAB_TITLES.index(tab) if tab in TAB_TITLES else 0
        self._link = t.link((self.graph_view, "selected"), (self.stepper, "selected"))
        self._stale = False
        self.stepper.observe(self._follow_step, names=["step", "runs"])
        self.graph_view.observe(self._goto_step, names=["step"])
        self.tabs.observe(self._on_tab, names=["selected_index"])
        super().__init__(children=[self.tabs], **kwargs)
        self.add_class("irlab-explorer")
        self._on_tab({"new": self.tabs.selected_index})

    @property
    def trace(self):
        """The current ``PassTrace`` (a new one after each re-run)."""
        return self.stepper.trace

    def _follow_step(self, change):
        # Laying out a big graph takes time: only when the graph tab is in view.
        if self.tabs.selected_index == 0:
            self.graph_view.show_step(self.stepper.trace, self.stepper.step)
        else:
            self._stale = True

    def _on_tab(self, change):
        if change["new"] == 0 and self._stale:
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
        """``relay.build`` of the program (built on first use)."""
        if self._factory is None and self._database is not None:
            from irlab import meta_schedule as ms
            from irlab.ir.module import IRModule

            source = self._source if isinstance(self._source, IRModule) else \
                IRModule.from_expr(self._source)
            self._factory = ms.relay_integration.compile_relay(
                self._database, source, self._target, self._params)
        if self._factory is None:
            self._factory = as_factory(self._source, self._params, self._target)
        return self._factory

    @property
    def lowering(self):
        """The ``LoweringExplorer`` of the built module (made on first use)."""
        if self._lowering is None:
            self._lowering = LoweringExplorer(self.factory)
            if self._run_panel is not None:
                self._lowering.set_times(self._run_panel.kernel_times)
        return self._lowering

    @property
    def run_panel(self):
        """The ``RunPanel`` of the built module (made, and run, on first use)."""
        if self._run_panel is None:
            self._run_panel = RunPanel(self.factory, run=False)
            self._run_panel.observe(self._share_times, names=["node_times"])
            self._run_panel.run()
        return self._run_panel

    def _share_times(self, change):
        if self._lowering is not None and self._run_panel is not None:
            self._lowering.set_times(self._run_panel.kernel_times)

    def _goto_step(self, change):
        if change["new"] >= 0 and change["new"] != self.stepper.step:
            self.stepper.step = change["new"]

    def to_html(self) -> str:
        """The static pictures of the tabs made so far: graph, passes, and lowering and run
        once built (building is not started for a picture)."""
        parts = [self.graph_view.to_html(), self.stepper.to_html()]
        parts += [view.to_html() for view in (self._lowering, self._run_panel)
                  if view is not None]
        return titled("Explorer", " · ".join(TAB_TITLES), *parts)



def explore(mod_or_expr, params=None, passes=None, opt_level=3, **kwargs) -> Explorer:
    """Graph view and pass stepper of ``mod_or_expr`` (IRModule, function or expression)
    run through ``passes`` (default relay.optimize's pipeline), and the lowering explorer and
    run panel of its ``relay.build`` (made when their tab is first opened), as one app."""
    return Explorer(mod_or_expr, params, passes, opt_level, **kwargs)
