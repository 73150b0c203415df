"""Graph layouts as JSON for the browser.

Graphviz lays the graph out (``dot -Tjson0``, in a child process with a time limit); its
coordinates become node boxes, edge paths and cluster boxes that the widgets' JavaScript draws
itself (text through ``textContent``, so no label is ever parsed as markup). Each node also
carries what the inspector shows (op, all attrs, type, name, line in the printed IR), so a
static page needs no kernel to fill it.

Above ``GRAPHVIZ_MAX_NODES`` drawn nodes the layered layout computed here (linear time,
straight edges; each group laid out on its own and cached, see group_layout.py) is the
engine by choice: measured on a 2-core Xeon under load (benchmarks/bench_explorer.py),
Graphviz takes 1.3 s at 1,000 flat nodes, 3.4 s at 2,000 and 56 s at 5,000, a flat layered
layout 0.06 s, 0.08 s and 0.23 s, the hierarchical one 0.4-0.6 s at 5,000 (0.22 s cached).
The payload says which engine drew it (``engine``); ``warning`` is set only when Graphviz was
wanted but failed or ran out of time.
"""

from __future__ import annotations

import json

from irlab.errors import IrlabError
from irlab.viz.dot import STYLE, compiler_color, node_label, render, to_dot
from irlab.widgets.group_layout import hierarchical_geometry

LAYOUT_TIMEOUT = 20.0  # seconds Graphviz may take before the layered fallback is used
GRAPHVIZ_MAX_NODES = 1500  # above this the layered layout is faster by 20-100x (module doc)
_PREVIEW = 6  # constant values shown in the inspector


def _r(value) -> float:
    """Coordinates rounded to 0.1 pt: smaller JSON, no visible difference."""
    return round(float(value), 1)


def _text(value) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def all_attrs(data) -> dict:
    """Every attribute of the node's expression (the label shows only non-default ones)."""
    expr = data.get("expr")
    attrs = getattr(expr, "attrs", None)
    if attrs is not None and hasattr(attrs, "keys") and hasattr(attrs, "__getitem__"):
        try:
            return {str(k): _text(attrs[k]) for k in attrs.keys()}
        except Exception:  # an odd attrs object: fall back to what the graph recorded
            pass
    return {str(k): str(v) for k, v in (data.get("attrs") or {}).items()}


def _const_preview(data) -> dict:
    expr = data.get("expr")
    value = getattr(expr, "data", None)
    if value is None or not hasattr(value, "numpy"):
        return {}
    array = value.numpy()
    flat = array.reshape(-1)[:_PREVIEW]
    more = ", ..." if array.size > _PREVIEW else ""
    return {"shape": _text(list(array.shape)), "dtype": str(array.dtype),
            "values": "[" + ", ".join(str(v) for v in flat) + more + "]"}  # 1e-05, not 9.99e-06


def _compiler_style(compiler) -> dict:
    """What the JavaScript needs to draw an external compiler's region: its name and the
    colours the static pictures use (``irlab.viz.dot.compiler_color``)."""
    fill, stroke = compiler_color(str(compiler))
    return {"compiler": str(compiler), "fill": fill, "stroke": stroke}


def node_record(ident, data) -> dict:
    """The JSON-safe description of one graph node (geometry is added by the layout)."""
    record = {"id": ident, "kind": data.get("kind", "call"), "title": str(data.get("title", "")),
              "name": str(data.get("name") or ""), "op": str(data.get("op") or ""),
              "type": str(data.get("type") or ""), "attrs": all_attrs(data),
              "line": data.get("ir_line"), "cluster": data.get("cluster"),
              "label": node_label(data).split("\n"),
              "shape": STYLE.get(data.get("kind"), STYLE["call"])["shape"]}
    if data.get("kind") == "const":
        record["attrs"].update(_const_preview(data))
    if data.get("members"):
        record["members"] = list(data["members"])
    if data.get("compiler"):  # a collapsed external (BYOC) region
        record.update(_compiler_style(data["compiler"]))
    if data.get("hidden"):  # [id, title, name, op, collapsed owners] of each node inside
        record["hidden"] = [list(h) for h in data["hidden"]]
    if data.get("folded"):
        record["folded"] = [{str(k): str(v) for k, v in f.items()} for f in data["folded"]]
    return record


def layout_payload(graph, states=None, edge_states=None, timeout=LAYOUT_TIMEOUT,
                   cache=None) -> dict:
    """Nodes (with geometry), edges (SVG path data) and clusters of ``graph``, laid out.

    ``states`` maps node id -> added/removed/changed and ``edge_states`` (src, dst) -> state;
    both are only copied into the payload (the layout does not depend on them). ``cache``: a
    ``GroupLayoutCache`` kept between calls (a view's expands, a trace's steps), so the
    layered layout lays out again only the groups that changed.
    """
    states = states or {}
    edge_states = edge_states or {}
    engine, warning = "graphviz", ""
    if len(graph) > GRAPHVIZ_MAX_NODES:  # chosen, not a fallback: see the module docstring
        geometry, engine = hierarchical_geometry(graph, _label_sizes(graph), cache), "layered"
    else:
        try:
            geometry = _graphviz_geometry(render(to_dot(graph), "json0", timeout))
        except IrlabError as err:  # no Graphviz, or too slow: a simpler picture beats none
            geometry = hierarchical_geometry(graph, _label_sizes(graph), cache)
            engine, warning = "layered", str(err)
    nodes = []
    for ident, data in graph.nodes(data=True):
        record = node_record(ident, data)
        record.update(geometry["nodes"].get(ident) or {"x": 0.0, "y": 0.0, "w": 40.0, "h": 20.0})
        if ident in states:
            record["state"] = states[ident]
        nodes.append(record)
    edges = []
    for src, dst, data in graph.edges(data=True):
        edge = {"s": src, "t": dst, "i": data.get("index", 0)}
        edge.update(geometry["edges"].get((src, dst)) or {})
        if (src, dst) in edge_states:
            edge["state"] = edge_states[(src, dst)]
        edges.append(edge)
    clusters = []
    for cid, info in graph.graph.get("clusters", {}).items():
        box = geometry["clusters"].get(cid)
        if box is None:  # an empty cluster (its members are drawn elsewhere)
            continue
        record = {"id": cid, "label": str(info.get("label", "")),
                  "kind": info.get("kind", "function"), "parent": info.get("parent"),
                  "attrs": {str(k): str(v) for k, v in info.get("attrs", {}).items()}, **box}
        if info.get("compiler"):  # an external (BYOC) region: coloured by its compiler
            record.update(_compiler_style(info["compiler"]))
        clusters.append(record)
    outputs = list(graph.graph.get("outputs", {}).values())
    return {"width": geometry["width"], "height": geometry["height"], "nodes": nodes,
            "edges": edges, "clusters": clusters, "outputs": outputs, "engine": engine,
            "warning": warning}


# -- Graphviz ------------------------------------------------------------------------------------
def _point(text):
    x, y = text.split(",")[:2]
    return float(x), float(y)


def _graphviz_geometry(raw: str) -> dict:
    doc = json.loads(raw)
    x0, y0, x1, y1 = (float(v) for v in doc["bb"].split(","))
    height = y1

    def flip(x, y):  # Graphviz's y axis points up, SVG's down
        return _r(x), _r(height - y)

    objects = doc.get("objects", [])
    nodes, clusters = {}, {}
    for obj in objects:
        if "pos" not in obj:  # a cluster (a collapsed one is a node named cluster_...)
            if "bb" in obj:
                bx0, by0, bx1, by1 = (float(v) for v in obj["bb"].split(","))
                lx, ly = flip(*_point(obj["lp"])) if obj.get("lp") else (_r((bx0 + bx1) / 2),
                                                                          _r(height - by1 + 8))
                clusters[obj["name"]] = {"x": _r(bx0), "y": _r(height - by1),
                                         "w": _r(bx1 - bx0), "h": _r(by1 - by0),
                                         "lx": lx, "ly": ly}
            continue
        x, y = flip(*_point(obj["pos"]))
        nodes[obj["name"]] = {"x": x, "y": y, "w": _r(float(obj["width"]) * 72),
                              "h": _r(float(obj["height"]) * 72)}
    names = {obj["_gvid"]: obj["name"] for obj in objects if "pos" in obj}
    edges = {}
    for edge in doc.get("edges", []):
        src, dst = names.get(edge["tail"]), names.get(edge["head"])
        if "pos" in edge:
            edges[(src, dst)] = {"d": _spline_path(edge["pos"], flip)}
    return {"width": _r(x1 - x0), "height": _r(y1 - y0), "nodes": nodes, "edges": edges,
            "clusters": clusters}


def _spline_path(pos: str, flip) -> str:
    """SVG path data of a Graphviz spline ``e,x,y p0 p1 ...`` (cubic Bézier control points),
    ending at the arrow tip so the arrowhead marker sits where Graphviz put it."""
    end = None
    points = []
    for token in pos.split():
        if token.startswith("e,"):
            end = flip(*_point(token[2:]))
        elif token.startswith("s,"):
            continue
        else:
            points.append(flip(*_point(token)))
    if not points:
        return ""
    points = [(_n(x), _n(y)) for x, y in points]
    parts = [f"M{points[0][0]} {points[0][1]}"]
    for i in range(1, len(points) - 2, 3):
        (ax, ay), (bx, by), (cx, cy) = points[i:i + 3]
        parts.append(f"C{ax} {ay} {bx} {by} {cx} {cy}")
    if end is not None:
        parts.append(f"L{_n(end[0])} {_n(end[1])}")
    return "".join(parts)


def _n(value: float) -> str:
    """A rounded coordinate as short text: ``41`` rather than ``41.0`` (path data is most of
    a big graph's JSON)."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


# -- node sizes for the layered layout ------------------------------------------------------------
_CHAR_W, _LINE_H = 6.0, 13.0  # pt per character and per label line


def _label_sizes(graph) -> dict:
    """Node id -> (width, height) of its box, from its label's lines."""
    size = {}
    for ident, data in graph.nodes(data=True):
        lines = node_label(data).split("\n")
        size[ident] = (max(len(line) for line in lines) * _CHAR_W + 16, len(lines) * _LINE_H + 8)
    return size
