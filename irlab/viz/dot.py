"""Graphviz DOT text for a program graph, and its layout to SVG under a time limit.

Node ids in DOT are the graph's safe ids (``n12``; Graphviz treats ids starting with ``%`` as
anonymous), the IR names go into labels, and every label is escaped for DOT; Graphviz escapes
them again for SVG, so text from a model never becomes markup.

Layout runs in a child process, so a huge graph cannot hang the caller: the ``dot`` binary when
it is on PATH, else the Graphviz engine bundled in the ``pygraphviz`` wheel.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

from irlab.errors import IrlabError

STYLE = {
    "input": {"shape": "ellipse", "fillcolor": "#dbeafe", "color": "#3b82f6"},
    "param": {"shape": "ellipse", "fillcolor": "#fef3c7", "color": "#d97706"},
    "const": {"shape": "box", "fillcolor": "#f3f4f6", "color": "#9ca3af"},
    "call": {"shape": "box", "fillcolor": "#ffffff", "color": "#374151"},
    "tuple": {"shape": "box", "fillcolor": "#ede9fe", "color": "#7c3aed"},
    "getitem": {"shape": "box", "fillcolor": "#ede9fe", "color": "#7c3aed"},
    "if": {"shape": "diamond", "fillcolor": "#fee2e2", "color": "#dc2626"},
    "fn": {"shape": "box", "fillcolor": "#ecfccb", "color": "#65a30d"},
    "global": {"shape": "box", "fillcolor": "#ecfccb", "color": "#65a30d"},
    "buffer": {"shape": "cylinder", "fillcolor": "#f3f4f6", "color": "#6b7280"},
    "prim_func": {"shape": "component", "fillcolor": "#ecfccb", "color": "#65a30d"},
}
DIFF_COLORS = {"added": "#16a34a", "removed": "#dc2626", "changed": "#d97706"}
CLUSTER_COLORS = {"primitive": "#eef2ff", "composite": "#fdf2f8", "function": "#f0fdf4",
                  "loop": "#fefce8", "block": "#f0f9ff", "dataflow": "#eff6ff",
                  "prim_func": "#f7fee7"}
# (fill, border) of the regions of each external compiler (BYOC); others by name's hash
COMPILER_COLORS = {"dnnl": ("#dbeafe", "#2563eb"), "ccompiler": ("#ffedd5", "#ea580c")}
_MORE_COMPILER_COLORS = (("#dcfce7", "#16a34a"), ("#fae8ff", "#c026d3"),
                         ("#fef9c3", "#ca8a04"), ("#ccfbf1", "#0d9488"))


def compiler_color(compiler: str) -> tuple:
    """``(fill, border)`` colours of an external compiler's regions: the same in every
    picture (a fixed choice for the built-in compilers, a hash of the name otherwise)."""
    import zlib

    if compiler in COMPILER_COLORS:
        return COMPILER_COLORS[compiler]
    return _MORE_COMPILER_COLORS[zlib.crc32(compiler.encode()) % len(_MORE_COMPILER_COLORS)]


def _cluster_colors(info) -> tuple:
    if info.get("kind") == "external":
        return compiler_color(str(info.get("compiler", "")))
    return CLUSTER_COLORS.get(info.get("kind"), "#f9fafb"), "#c7d2fe"


def escape(text) -> str:
    """Text as the inside of a DOT double-quoted string (backslashes and quotes escaped,
    newlines kept as DOT line breaks)."""
    text = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return text.replace("\r", "").replace("\n", "\\n")


def _folded_line(folded) -> str:
    """The label line naming a node's folded weights: ``w[64, 3, 7, 7] +2``."""
    first = folded[0]
    text = (first.get("name") or "const") + first.get("shape", "")
    return text + (f" +{len(folded) - 1}" if len(folded) > 1 else "")


def node_label(data) -> str:
    lines = [data.get("title", "")]
    if data.get("name") and data.get("name") != data.get("title"):
        lines.append(data["name"])
    if data.get("summary"):
        lines.append(data["summary"])
    if data.get("folded"):
        lines.append(_folded_line(data["folded"]))
    if data.get("type"):
        lines.append(data["type"])
    return "\n".join(line for line in lines if line)


def to_dot(graph, diff=None, title="") -> str:
    """DOT source for ``graph``. ``diff`` maps node id -> added/removed/changed for colouring."""
    diff = diff or {}
    out = ["digraph G {",
           '  graph [rankdir=TB, fontname="Helvetica", fontsize=10, nodesep=0.25, '
           'ranksep=0.3' + (f', label="{escape(title)}"' if title else "") + "];",
           '  node [fontname="Helvetica", fontsize=10, style="filled,rounded", height=0.3];',
           '  edge [color="#6b7280", arrowsize=0.6];']
    clusters = graph.graph.get("clusters", {})
    members = {}
    for ident, data in graph.nodes(data=True):
        members.setdefault(data.get("cluster"), []).append(ident)

    def emit_node(ident, indent):
        data = graph.nodes[ident]
        style = dict(STYLE.get(data.get("kind"), STYLE["call"]))
        state = diff.get(ident)
        if state:
            style["color"] = DIFF_COLORS[state]
            style["penwidth"] = "2.5"
            if state == "removed":
                style["style"] = "filled,rounded,dashed"
        attrs = ", ".join(f'{k}="{escape(v)}"' for k, v in style.items())
        out.append(f'{indent}{ident} [label="{escape(node_label(data))}", {attrs}, '
                   f'id="{ident}"];')

    def emit_cluster(cluster_id, indent):
        info = clusters[cluster_id]
        fill, border = _cluster_colors(info)
        width = "; penwidth=2" if info.get("kind") == "external" else ""
        out.append(f"{indent}subgraph {cluster_id} {{")
        out.append(f'{indent}  label="{escape(info["label"])}"; style="filled,rounded"; '
                   f'color="{border}"; fillcolor="{fill}"{width};'
                   f' fontsize=9; id="{cluster_id}";')
        for ident in members.get(cluster_id, []):
            emit_node(ident, indent + "  ")
        for child, child_info in clusters.items():
            if child_info.get("parent") == cluster_id:
                emit_cluster(child, indent + "  ")
        out.append(f"{indent}}}")

    for ident in members.get(None, []):
        emit_node(ident, "  ")
    for cluster_id, info in clusters.items():
        if info.get("parent") is None:
            emit_cluster(cluster_id, "  ")
    for src, dst, data in graph.edges(data=True):
        style = ""
        if diff.get(src) == "removed" or diff.get(dst) == "removed":
            style = ' [style="dashed"]'
        out.append(f"  {src} -> {dst}{style};")
    out.append("}")
    return "\n".join(out) + "\n"


_PYGRAPHVIZ_LAYOUT = (
    "import sys, pygraphviz\n"
    "g = pygraphviz.AGraph(string=sys.stdin.read())\n"
    "sys.stdout.write(g.draw(format=sys.argv[1], prog='dot').decode('utf-8'))\n"
)


def layout_engine() -> str:
    """'dot' (a binary on PATH) or 'pygraphviz' (the wheel's bundled Graphviz), else ''."""
    if shutil.which("dot"):
        return "dot"
    try:
        import importlib.util

        if importlib.util.find_spec("pygraphviz") is not None:
            return "pygraphviz"
    except ValueError:
        pass
    return ""


def render(dot_source: str, fmt="svg", timeout=30.0) -> str:
    """Lay out ``dot_source`` with Graphviz and return the ``fmt`` output (svg, json, plain).

    Raises ``IrlabError`` when no Graphviz is available or the layout exceeds ``timeout``
    seconds (the child process is killed).
    """
    engine = layout_engine()
    if engine == "dot":
        cmd = ["dot", f"-T{fmt}"]
    elif engine == "pygraphviz":
        cmd = [sys.executable, "-c", _PYGRAPHVIZ_LAYOUT, fmt]
    else:
        raise IrlabError("no Graphviz found: install the 'pygraphviz' wheel "
                         "(pip install pygraphviz) or Debian's 'graphviz' package")
    try:
        done = subprocess.run(cmd, input=dot_source, capture_output=True, encoding="utf-8",
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        raise IrlabError(f"graph layout took longer than {timeout:.0f} s; "
                         f"collapse fused functions or show a neighbourhood") from None
    if done.returncode != 0:
        raise IrlabError(f"Graphviz failed: {done.stderr.strip()[:500]}")
    return done.stdout


def render_svg(graph, diff=None, title="", timeout=30.0) -> str:
    """SVG of a program graph (see ``to_dot``)."""
    return render(to_dot(graph, diff, title), "svg", timeout)
