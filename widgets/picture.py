"""Static pictures of the widgets: HTML with inline SVG and text, no script, no network.

Each widget puts one next to its live view in its MIME bundle (``text/html``), so a notebook
rendered without a kernel or the widget JavaScript (nbconvert, GitHub, a mailed HTML file)
still shows the graph, the diff, the kernels. Every string that comes from the model (names,
attributes, IR text) is escaped with ``html.escape``; the SVG uses presentation attributes
only, as sanitizers keep those and drop ``<style>``.
"""

from __future__ import annotations

import html

from irlab.viz.dot import CLUSTER_COLORS, DIFF_COLORS, STYLE

MAX_WIDTH = 860  # px: wider layouts are scaled down (the viewBox keeps the whole graph)
MAX_DIFF_LINES = 60  # diff lines shown; the rest is counted
_COLLAPSED = {"fillcolor": "#e0e7ff", "color": "#6366f1"}  # a fused function drawn as one node
_EDGE = "#9ca3af"


def esc(value) -> str:
    """``value`` as text safe inside an element or a double-quoted attribute."""
    return html.escape(str(value), quote=True)


def _node_style(node) -> tuple:
    kind = node.get("kind", "call")
    style = _COLLAPSED if kind == "cluster" else STYLE.get(kind, STYLE["call"])
    stroke, width, dash = style["color"], 1.0, ""
    state = node.get("state")
    if state in DIFF_COLORS:
        stroke, width = DIFF_COLORS[state], 2.5
        dash = ' stroke-dasharray="4 2"' if state == "removed" else ""
    return style["fillcolor"], stroke, width, dash


def _node_svg(node) -> str:
    x, y, w, h = (float(node.get(k, 0.0)) for k in ("x", "y", "w", "h"))
    fill, stroke, width, dash = _node_style(node)
    paint = f'fill="{fill}" stroke="{stroke}" stroke-width="{width}"{dash}'
    if node.get("shape") == "ellipse":
        shape = f'<ellipse cx="{x}" cy="{y}" rx="{w / 2:.1f}" ry="{h / 2:.1f}" {paint}/>'
    elif node.get("shape") == "diamond":
        shape = (f'<polygon points="{x},{y - h / 2:.1f} {x + w / 2:.1f},{y} {x},'
                 f'{y + h / 2:.1f} {x - w / 2:.1f},{y}" {paint}/>')
    else:
        shape = (f'<rect x="{x - w / 2:.1f}" y="{y - h / 2:.1f}" width="{w}" height="{h}" '
                 f'rx="3" {paint}/>')
    lines = node.get("label") or [node.get("title", "")]
    top = y - (len(lines) - 1) * 6.5 + 3.5
    text = "".join(
        f'<text x="{x}" y="{top + i * 13:.1f}" text-anchor="middle" '
        f'fill="{"#111827" if i == 0 else "#4b5563"}">{esc(line)}</text>'
        for i, line in enumerate(lines))
    return f"<g><title>{esc(node.get('title', ''))}</title>{shape}{text}</g>"


def _edge_svg(edge) -> str:
    if not edge.get("d"):
        return ""
    state = edge.get("state")
    color = DIFF_COLORS.get(state, _EDGE)
    dash = ' stroke-dasharray="4 2"' if state == "removed" else ""
    return (f'<path d="{esc(edge["d"])}" fill="none" stroke="{color}" stroke-width="1.2"'
            f'{dash} marker-end="url(#irlab-arrow)"/>')


def _cluster_svg(cluster) -> str:
    fill = CLUSTER_COLORS.get(cluster.get("kind"), CLUSTER_COLORS["primitive"])
    stroke = DIFF_COLORS.get(cluster.get("state"), "#c7d2fe")
    x, y, w, h = (float(cluster.get(k, 0.0)) for k in ("x", "y", "w", "h"))
    label = cluster.get("label", "")
    return (f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="4" fill="{fill}" '
            f'stroke="{stroke}"/><text x="{cluster.get("lx", x + w / 2)}" '
            f'y="{cluster.get("ly", y + 11)}" text-anchor="middle" fill="#4338ca" '
            f'font-size="9">{esc(label)}</text>')


def graph_svg(payload, max_width=MAX_WIDTH) -> str:
    """A laid-out graph (``layout_payload``'s JSON) as one inline SVG element."""
    if not payload or not payload.get("nodes"):
        return ""
    width, height = float(payload["width"]) + 8, float(payload["height"]) + 8
    scale = min(1.0, max_width / width)
    clusters = sorted(payload.get("clusters", []), key=lambda c: -c["w"] * c["h"])
    body = ("".join(_cluster_svg(c) for c in clusters)
            + "".join(_edge_svg(e) for e in payload.get("edges", []))
            + "".join(_node_svg(n) for n in payload["nodes"]))
    arrow = (f'<defs><marker id="irlab-arrow" viewBox="0 0 10 10" refX="9" refY="5" '
             f'markerWidth="7" markerHeight="7" orient="auto"><path d="M0 0L10 5L0 10z" '
             f'fill="{_EDGE}"/></marker></defs>')
    return (f'<svg width="{width * scale:.0f}" '
            f'height="{height * scale:.0f}" viewBox="-4 -4 {width:.1f} {height:.1f}" '
            f'font-family="Helvetica, Arial, sans-serif" font-size="10">{arrow}'
            f"{body}</svg>")


def diff_pre(text_a: str, text_b: str, rows, max_lines=MAX_DIFF_LINES) -> str:
    """The changed lines of a diff (``text_rows.diff_rows``) as a ``<pre>``: ``-`` removed
    (red), ``+`` added (green); equal lines are left out."""
    left, right = text_a.split("\n"), text_b.split("\n")
    lines = []
    for tag, a, b, _, _ in rows:
        if tag in ("d", "r"):
            lines.append(("-", left[a - 1], "#fee2e2"))
        if tag in ("i", "r"):
            lines.append(("+", right[b - 1], "#dcfce7"))
    if not lines:
        return "<pre>(no change)</pre>"
    shown = [f'<span style="background:{bg}">{mark} {esc(line)}</span>'
             for mark, line, bg in lines[:max_lines]]
    if len(lines) > max_lines:
        shown.append(esc(f"... {len(lines) - max_lines} more changed lines"))
    return ('<pre style="font-size:11px;max-height:360px;overflow:auto">'
            + "\n".join(shown) + "</pre>")


def titled(title: str, subtitle: str, *parts: str) -> str:
    """A picture's frame: a bold title, a muted subtitle (both escaped), then ``parts``."""
    sub = f' <span style="color:#6b7280">{esc(subtitle)}</span>' if subtitle else ""
    return (f'<div class="irlab-static"><p><b>{esc(title)}</b>{sub}</p>'
            + "".join(p for p in parts if p) + "</div>")


def add_picture(bundle, picture: str):
    """``bundle`` (a widget's ``_repr_mimebundle_`` result) with ``picture`` as its
    ``text/html``, next to the widget view."""
    if isinstance(bundle, tuple):
        data, meta = bundle
        return {**data, "text/html": picture}, meta
    if isinstance(bundle, dict):
        return {**bundle, "text/html": picture}
    return {"text/html": picture}


class StaticPicture:
    """Mixin for widgets: ``to_html()`` (the static picture) joins the MIME bundle."""

    def to_html(self) -> str:  # pragma: no cover - every widget defines its own
        raise NotImplementedError

    def _repr_html_(self):
        return self.to_html()

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        try:
            picture = self.to_html()
        except Exception as err:  # noqa: BLE001 - the live view must still show
            picture = titled(type(self).__name__, f"no static picture: {err}")
        return add_picture(bundle, picture)
