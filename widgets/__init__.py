"""irlab.widgets: the notebook layer.

- ``GraphView(mod_or_expr, params=None)``: the program as an interactive graph (pan/zoom,
  search, inspector with the node's IR line, collapsible layers and fused functions,
  neighbourhoods).
- ``PassStepper(mod, passes=None, params=None, opt_level=3)``: step through a pass pipeline
  (diffs, before/after graphs, numerics, provenance, pipeline editing).
- ``LoweringExplorer(factory_or_mod, params=None, target="llvm")``: one kernel at every level
  (Relay, TIR from TE, scheduled and lowered TIR, LLVM IR, assembly), a loop linked across them.
- ``RunPanel(factory_or_mod, params=None, inputs=None)``: run the built module, check it
  against the interpreter, latency and time per kernel node.
- ``TuningMonitor()``: a MetaSchedule tuning run, live (``ms.tune_tir(..., monitor=m)``):
  per-task table, best-so-far curves, the cost model's rank correlation per round.
- ``explore(mod_or_expr, params=None, ...)``: all of them as one app (``Explorer``); a Relax
  IRModule too (dataflow regions, ``call_tir`` edges from its PrimFuncs, the Relax pipeline,
  ``relax.build``'s kernels, ``RelaxRunPanel``: the VM run for chosen symbolic dims).
- ``Row([...])``, ``Column([...])``: widgets side by side / stacked (``HBox`` / ``VBox``)
  whose static picture holds their pictures.
- ``export_html(obj, path)``: one self-contained HTML file (no network, no kernel).
- ``notebook_export.export_notebook(nb, path)``: an executed notebook as HTML that loads
  nothing from the network (widgets shown by their static pictures).

The widget classes import ipywidgets/anywidget on first use; ``export_html`` needs neither.
"""

from __future__ import annotations

from irlab.widgets.export import export_html

_LAZY = {
    "GraphView": "irlab.widgets.graph_view",
    "PassStepper": "irlab.widgets.pass_stepper",
    "Explorer": "irlab.widgets.explorer",
    "explore": "irlab.widgets.explorer",
    "LoweringExplorer": "irlab.widgets.lowering_explorer",
    "RunPanel": "irlab.widgets.run_panel",
    "RelaxRunPanel": "irlab.widgets.relax_run_panel",
    "TuningMonitor": "irlab.widgets.tuning_monitor",
    "Row": "irlab.widgets.boxes",
    "Column": "irlab.widgets.boxes",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'irlab.widgets' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def _register_reprs():
    from irlab.widgets.reprs import register

    try:
        register()
    except Exception:  # noqa: BLE001 - a display nicety must never break the import
        pass


_register_reprs()

__all__ = ["GraphView", "PassStepper", "LoweringExplorer", "RunPanel", "RelaxRunPanel",
           "TuningMonitor", "Explorer", "explore", "Row", "Column", "export_html"]
