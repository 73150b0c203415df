"""Pictures of programs: Relay graphs (networkx), stable node ids across passes, DOT/SVG
rendering with a time limit, and IR text diffs that ignore renumbering."""

from irlab.viz.identity import NodeIds
from irlab.viz.relay_graph import build_relay_graph
from irlab.viz.dot import to_dot, render, render_svg, escape, layout_engine
from irlab.viz.text_diff import diff_lines, unified_diff, diff_html, changed
from irlab.viz.graph_diff import graph_diff

__all__ = ["NodeIds", "build_relay_graph", "to_dot", "render", "render_svg", "escape",
           "layout_engine", "diff_lines", "unified_diff", "diff_html", "changed", "graph_diff"]
