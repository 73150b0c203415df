"""The browser side of the widgets, read from ``static/``: each widget's ES module is the shared
core (``irlab_core.js``) followed by the widget's file and an ``export default``, because
anywidget loads one module per widget and relative imports do not resolve there. The static
HTML export inlines the same files."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

STATIC = Path(__file__).parent / "static"


@lru_cache(maxsize=None)
def read(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def widget_module(part: str, render: str) -> str:
    """The ES module of one widget: core + ``part`` + ``export default {render}``."""
    return "\n".join([read("irlab_core.js"), read(part),
                      f"export default {{ render: {render} }};", ""])


def css() -> str:
    return read("irlab.css")


def page_script() -> str:
    """Everything the static page runs (no export: an inline module script)."""
    return "\n".join([read("irlab_core.js"), read("graph_view.js"), read("pass_stepper.js"),
                      read("static_page.js")])
