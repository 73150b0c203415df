"""Rich displays without widgets: a ``PassTrace`` shows as an HTML table of its steps, a Relay
graph (``build_relay_graph``'s ``networkx.DiGraph``) as an SVG picture. They work where
widgets do not (nbviewer, exported notebooks, a kernel without the widget extension).

The core must not import the notebook layer, so these are registered with IPython's display
formatters when ``irlab.widgets`` is imported (``irlab.explore`` imports it too).
"""

from __future__ import annotations

import html
import sys


def trace_html(trace) -> str:
    """The steps of a ``PassTrace`` as an HTML table (all text escaped)."""
    parents = {s.parent for s in trace.steps}
    rows = []
    for s in trace.steps:
        mark = "●" if s.changed else "○"
        err = "" if s.error is None else f"{s.error:.3g}"
        weight = "600" if s.index not in parents and s.changed else "normal"
        rows.append(
            f'<tr><td style="text-align:right">{s.index}</td>'
            f'<td style="color:{"#d97706" if s.changed else "#9ca3af"}">{mark}</td>'
            f'<td style="padding-left:{s.depth * 14 + 4}px;font-weight:{weight}">'
            f"{html.escape(s.name)}</td>"
            f'<td style="text-align:right">{s.seconds * 1e3:.2f} ms</td>'
            f'<td style="text-align:right">{s.node_count}</td>'
            f'<td style="text-align:right">{html.escape(err)}</td></tr>')
    failed = "" if trace.error is None else (
        f'<p style="color:#dc2626">pipeline stopped: '
        f"{html.escape(type(trace.error).__name__)}: {html.escape(str(trace.error))}</p>")
    changed = sum(s.changed for s in trace.steps)
    return (f"<div><p><b>PassTrace</b>: {len(trace.steps) - 1} pass runs, {changed} changed "
            f"the program, {trace.seconds * 1e3:.0f} ms</p>{failed}"
            '<table style="border-collapse:collapse;font-size:12px">'
            "<tr><th>#</th><th></th><th style=\"text-align:left\">pass</th><th>time</th>"
            "<th>nodes</th><th>rel. error</th></tr>" + "".join(rows) + "</table></div>")


def graph_svg(graph, timeout=10.0):
    """SVG of a Relay graph, or None for another ``networkx`` graph (default display)."""
    if "clusters" not in getattr(graph, "graph", {}):
        return None
    from irlab.viz.dot import render_svg

    try:
        return render_svg(graph, timeout=timeout)
    except Exception:  # noqa: BLE001 - no picture: IPython falls back to the text repr
        return None


def register(ip=None) -> bool:
    """Install the formatters in the running IPython (if any). Returns True when done."""
    if ip is None:
        ipython = sys.modules.get("IPython")  # no IPython imported: no shell to register in
        ip = ipython.get_ipython() if ipython is not None else None
    if ip is None:
        return False
    import networkx as nx

    from irlab.viz.pass_trace import PassTrace

    formatters = ip.display_formatter.formatters
    formatters["text/html"].for_type(PassTrace, trace_html)
    formatters["image/svg+xml"].for_type(nx.DiGraph, graph_svg)
    return True
