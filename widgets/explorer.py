"""``explore(mod)``: the graph view and the pass stepper of one program, as one app.

Both widgets share the run (a ``PassTrace``) and its node ids: the graph tab shows the program
after the step selected in the passes tab; selecting a node in either selects it in both (the
inspector then lists the passes that made it); clicking a pass in the graph tab's provenance
list selects that step.
"""

from __future__ import annotations

import ipywidgets as widgets
import traitlets as t

from irlab.widgets.graph_view import GraphView
from irlab.widgets.layout import LAYOUT_TIMEOUT
from irlab.widgets.pass_stepper import PassStepper


class Explorer(widgets.VBox):
    """Tabs "Graph" (``graph_view``) and "Passes" (``stepper``) over one pipeline run."""

    def __init__(self, mod_or_expr, params=None, passes=None, opt_level=3, *, disabled_pass=(),
                 timeout=LAYOUT_TIMEOUT, tab="Graph", **kwargs):
        self.stepper = PassStepper(mod_or_expr, passes, params, opt_level,
                                   disabled_pass=disabled_pass, timeout=timeout)
        self.graph_view = GraphView(trace=self.stepper.trace, step=self.stepper.step,
                                    timeout=timeout)
        self.tabs = widgets.Tab(children=[self.graph_view, self.stepper])
        self.tabs.titles = ("Graph", "Passes")
        self.tabs.selected_index = 0 if tab == "Graph" else 1
        self._link = t.link((self.graph_view, "selected"), (self.stepper, "selected"))
        self._stale = False
        self.stepper.observe(self._follow_step, names=["step", "runs"])
        self.graph_view.observe(self._goto_step, names=["step"])
        self.tabs.observe(self._on_tab, names=["selected_index"])
        super().__init__(children=[self.tabs], **kwargs)
        self.add_class("irlab-explorer")

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

    def _goto_step(self, change):
        if change["new"] >= 0 and change["new"] != self.stepper.step:
            self.stepper.step = change["new"]


def explore(mod_or_expr, params=None, passes=None, opt_level=3, **kwargs) -> Explorer:
    """Graph view and pass stepper of ``mod_or_expr`` (IRModule, function or expression)
    run through ``passes`` (default relay.optimize's pipeline), as one app."""
    return Explorer(mod_or_expr, params, passes, opt_level, **kwargs)
