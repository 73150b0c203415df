"""The static pictures of ``TuningMonitor``'s charts: best-so-far curves over trials and the
cost model's rank correlation per round, as inline SVG (presentation attributes only, every
label escaped)."""

from __future__ import annotations

from irlab.widgets.picture import esc

COLORS = ("#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777",
          "#4b5563")
WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 560, 210, 56, 28, 32


def _scale(lo, hi, a, b):
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) * (b - a) / span


def _frame(title, x_label, y_label, x_max, y_lo, y_hi):
    """Axes, ticks and labels of a chart (its SVG text)."""
    parts = [f'<text x="4" y="12" font-weight="bold">{esc(title)}</text>',
             f'<line x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - 8}" '
             f'y2="{HEIGHT - BOTTOM}" stroke="#9ca3af"/>',
             f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}" '
             f'stroke="#9ca3af"/>',
             f'<text x="{(LEFT + WIDTH) / 2:.0f}" y="{HEIGHT - 4}" text-anchor="middle" '
             f'fill="#4b5563">{esc(x_label)}</text>',
             f'<text x="4" y="{TOP - 8}" fill="#4b5563">{esc(y_label)}</text>']
    for frac in (0.0, 0.5, 1.0):
        value = y_lo + frac * (y_hi - y_lo)
        y = HEIGHT - BOTTOM - frac * (HEIGHT - BOTTOM - TOP)
        parts.append(f'<text x="{LEFT - 4}" y="{y + 3:.1f}" text-anchor="end" '
                     f'fill="#4b5563">{value:.3g}</text>')
    parts.append(f'<text x="{WIDTH - 8}" y="{HEIGHT - BOTTOM + 12}" text-anchor="end" '
                 f'fill="#4b5563">{x_max:g}</text>')
    return parts


def curves_svg(curves: dict, title: str, y_label: str) -> str:
    """``{name: [[trial, value], ...]}`` as step lines sharing axes, with a legend."""
    points = [p for pts in curves.values() for p in pts]
    if not points:
        return ""
    x_max = max(p[0] for p in points) or 1
    y_lo, y_hi = 0.0, max(p[1] for p in points) * 1.05 or 1.0
    sx = _scale(0, x_max, LEFT, WIDTH - 8)
    sy = _scale(y_lo, y_hi, HEIGHT - BOTTOM, TOP)
    parts = _frame(title, "trials", y_label, x_max, y_lo, y_hi)
    for i, (name, pts) in enumerate(curves.items()):
        color = COLORS[i % len(COLORS)]
        path, last = [], None
        for x, y in pts:
            if last is not None:
                path.append(f"L{sx(x):.1f},{sy(last):.1f}")
            path.append(f"{'L' if path else 'M'}{sx(x):.1f},{sy(y):.1f}")
            last = y
        parts.append(f'<path d="{" ".join(path)}" fill="none" stroke="{color}" '
                     f'stroke-width="1.5"><title>{esc(name)}</title></path>')
        parts.append(f'<text x="{WIDTH - 10}" y="{TOP + 12 * i + 10}" text-anchor="end" '
                     f'fill="{color}">{esc(name[-40:])}</text>')
    return _svg(parts)


def accuracy_svg(accuracy: list) -> str:
    """Spearman's rho of each round (``[{task, round, trial, rho}]``) as dots on [-1, 1]."""
    if not accuracy:
        return ""
    x_max = max(a["trial"] for a in accuracy) or 1
    sx = _scale(0, x_max, LEFT, WIDTH - 8)
    sy = _scale(-1.0, 1.0, HEIGHT - BOTTOM, TOP)
    parts = _frame("cost model: rank correlation, predicted vs measured (per round)",
                   "trials", "Spearman rho", x_max, -1.0, 1.0)
    parts.append(f'<line x1="{LEFT}" y1="{sy(0):.1f}" x2="{WIDTH - 8}" y2="{sy(0):.1f}" '
                 f'stroke="#e5e7eb"/>')
    names = list(dict.fromkeys(a["task"] for a in accuracy))
    for a in accuracy:
        color = COLORS[names.index(a["task"]) % len(COLORS)]
        parts.append(f'<circle cx="{sx(a["trial"]):.1f}" cy="{sy(a["rho"]):.1f}" r="3" '
                     f'fill="{color}"><title>{esc(a["task"])} round {a["round"] + 1}: '
                     f'rho {a["rho"]:+.2f}</title></circle>')
    return _svg(parts)


def _svg(parts) -> str:
    return (f'<svg width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
            f'font-family="Helvetica, Arial, sans-serif" font-size="10">'
            + "".join(parts) + "</svg>")
