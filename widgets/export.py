"""One self-contained HTML file of a pipeline run or a graph: no network, no kernel.

The page holds the widgets' own JavaScript and CSS, and the data as JSON (each printed program
and each layout once; steps refer to them; a node's description, the same in most layouts of a
run, once: a layout's node holds its geometry and a reference to it). A small model shim stands
in for the kernel, so the same render code as in the notebook draws the pass list, the diffs,
the before/after graphs and the inspector, offline. No Jupyter package is needed to write it.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from irlab.widgets.assets import css, page_script
from irlab.widgets.layout import LAYOUT_TIMEOUT
from irlab.widgets.trace_data import BEFORE, TraceData, first_interesting_step

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; \
script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>@@TITLE@@</title>
<style>
@@CSS@@
</style>
</head>
<body class="irlab-page">
<div class="irlab-page-header"><h1>@@TITLE@@</h1><span class="irlab-muted">@@SUBTITLE@@</span></div>
<noscript>This report draws itself with JavaScript; please enable it.</noscript>
<div id="irlab-apps"></div>
<script type="application/json" id="irlab-data">@@DATA@@</script>
<script type="module">
@@SCRIPT@@
</script>
</body>
</html>
"""


def _json_for_script(value) -> str:
    """JSON that cannot end the <script> element it sits in, nor start markup: <, > and &
    are written as \\u escapes (JSON.parse reads them back)."""
    text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def stepper_app(data: TraceData, state=None, bases=()) -> dict:
    """The JSON of a stepper page: its state, every step's diff against the program the pass
    received (and against each step of ``bases``), and the texts and layouts they refer to."""
    trace = data.trace
    pairs = {}
    for i in range(len(trace.steps)):
        for base in (BEFORE, *bases):
            if base != BEFORE and not 0 <= base < len(trace.steps):
                continue
            pair = data.pair(i, base)
            pairs[pair["key"]] = pair
    used_texts = {p[k] for p in pairs.values() for k in ("text_a", "text_b")}
    used_layouts = {p["graph"] for p in pairs.values()}
    state = dict(state or {})
    first = state.get("step", 0)
    rows = data.step_rows()
    base_state = {"steps": rows, "step": first, "base": BEFORE, "hide_unchanged": False,
                  "pass_search": "", "selected": "", "first_bad": -1, "pipeline": [],
                  "available_passes": [], "status": "", "view": "side"}
    base_state.update(state)
    base_state["steps"] = rows
    base_state["bases"] = sorted({b for b in bases if 0 <= b < len(trace.steps)})
    if base_state["base"] != BEFORE and f"{base_state['base']}:{first}" not in pairs:
        base_state["base"] = BEFORE
    records, layouts = shared_records({k: v for k, v in data.layouts.items()
                                       if k in used_layouts})
    return {"kind": "stepper", "state": base_state, "pairs": pairs,
            "texts": {k: v for k, v in data.texts.items() if k in used_texts},
            "layouts": layouts, "records": records}


_GEOMETRY = ("x", "y", "w", "h", "state")  # what differs between layouts of the same node


def shared_records(layouts: dict):
    """The layouts with each node's description (op, attrs, type, label, folded weights,
    provenance...) moved to a list of distinct descriptions: a node keeps its geometry and
    diff state and refers to its description by index (``"r"``). A pass changes few nodes,
    so ResNet-50's report holds each description about once instead of 20 times.
    ``static_page.js`` (``expandLayout``) puts them back together."""
    records, index, out = [], {}, {}
    for key, layout in layouts.items():
        nodes = []
        for node in layout["nodes"]:
            info = {k: v for k, v in node.items() if k not in _GEOMETRY}
            text = json.dumps(info, sort_keys=True)
            if text not in index:
                index[text] = len(records)
                records.append(info)
            nodes.append({"r": index[text], **{k: node[k] for k in _GEOMETRY if k in node}})
        out[key] = {**layout, "nodes": nodes}
    return records, out


def graph_app(view) -> dict:
    """The JSON of a graph page from a ``GraphView`` (its current layout)."""
    state = {k: getattr(view, k) for k in ("graph", "ir", "title", "selected", "search",
                                           "collapsed", "focus", "hops")}
    state["status"] = ""
    state["step"] = -1
    return {"kind": "graph", "state": state}


def export_html(obj, path=None, *, title=None, passes=None, params=None, opt_level=3,
                numerics=False, bases=(), timeout=LAYOUT_TIMEOUT):
    """Write ``obj`` as one self-contained HTML file at ``path`` (returns the path), or
    return the HTML text when ``path`` is None.

    ``obj``: a ``PassTrace``, ``PassStepper``, ``Explorer`` or ``GraphView``; or a module /
    function / expression, which is first run through ``passes`` (default relay.optimize's
    pipeline) with ``params`` at ``opt_level``. ``numerics``: run the interpreter after
    every step first and mark the first step whose results differ. ``bases``: step indexes
    whose diffs against every step are included too (the page can then diff any step
    against them; the program each pass received is always included).
    """
    from irlab.viz.pass_trace import PassTrace

    apps, state, data = [], {}, None
    kind = type(obj).__name__
    if kind == "Explorer":
        obj = obj.stepper
        kind = "PassStepper"
    if kind == "GraphView":
        apps.append(graph_app(obj))
        subtitle = obj.title or "graph"
    else:
        if kind == "PassStepper":
            data = obj.data
            state = {k: getattr(obj, k) for k in ("step", "base", "hide_unchanged",
                                                  "pass_search", "selected", "first_bad",
                                                  "view")}
            state["pipeline"] = list(obj.pipeline)
        elif isinstance(obj, PassTrace):
            data = TraceData(obj, timeout)
        else:
            from irlab.widgets.pipeline import default_passes

            trace = PassTrace(obj, default_passes() if passes is None else passes, params,
                              opt_level=opt_level)
            data = TraceData(trace, timeout)
        if numerics:
            first = data.trace.check_numerics()
            state["first_bad"] = first.index if first is not None else -1
        if "step" not in state:
            state["step"] = first_interesting_step(data.trace)
        trace = data.trace
        state["status"] = "" if trace.error is None else \
            f"pipeline stopped: {type(trace.error).__name__}: {trace.error}"
        apps.append(stepper_app(data, state, bases))
        subtitle = (f"{len(trace.steps) - 1} pass runs, "
                    f"{sum(s.changed for s in trace.steps)} changed the program")
    title = title or ("irlab graph" if kind == "GraphView" else "irlab pass report")
    # One pass over the template (CSS and JS are full of braces, so no str.format), and the
    # inserted texts are not scanned again: model text cannot pose as a placeholder.
    parts = {"TITLE": html.escape(title), "SUBTITLE": html.escape(subtitle), "CSS": css(),
             "SCRIPT": page_script(), "DATA": _json_for_script({"apps": apps})}
    page = re.sub(r"@@([A-Z]+)@@", lambda m: parts[m.group(1)], _PAGE)
    if path is None:
        return page
    path = Path(path)
    path.write_text(page, encoding="utf-8")
    return path
