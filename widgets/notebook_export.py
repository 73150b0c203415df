"""An executed notebook as one HTML file that loads nothing from the network.

nbconvert's stock HTML export draws widgets with a loader fetched from a CDN (and loads
require.js, MathJax and mermaid from one too): offline, every widget is blank. This export
uses nbconvert's "lab" template without those scripts and shows each widget's static picture
(the ``text/html`` every irlab widget carries next to its widget view) instead of the view.
"""

from __future__ import annotations

from pathlib import Path

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

# The lab template, minus every block that loads a script from a CDN.
_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
"""
# What an output shows, best first: the static picture before the live view (whose
# JavaScript is not on the page).
_PRIORITY = ["text/html", "image/svg+xml", "image/png", "image/jpeg", "text/markdown",
             "text/latex", "application/pdf", "text/plain", WIDGET_VIEW]


def static_outputs(nb):
    """``nb`` (an nbformat notebook, changed in place) without live widget views (their
    JavaScript is not on the page): an output keeps its static picture, or else its text.
    The saved widget state goes too (nothing on the page could use it)."""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data and WIDGET_VIEW in data and len(data) > 1:
                del data[WIDGET_VIEW]
    nb.metadata.pop("widgets", None)
    return nb


def export_notebook(notebook, path=None) -> str | Path:
    """Write ``notebook`` (an executed nbformat notebook, or the path of one) as one HTML
    file at ``path`` and return the path; without ``path``, return the HTML text."""
    import nbformat
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    if not hasattr(notebook, "cells"):
        notebook = nbformat.read(str(notebook), as_version=4)
    nb = static_outputs(nbformat.from_dict(notebook))
    config = Config()
    config.NbConvertBase.display_data_priority = _PRIORITY
    exporter = HTMLExporter(config=config, template_name="lab",
                            template_file="irlab_offline.html.j2",
                            extra_loaders=[DictLoader({"irlab_offline.html.j2": _TEMPLATE})])
    body, _ = exporter.from_notebook_node(nb)
    if path is None:
        return body
    path = Path(path)
    path.write_text(body, encoding="utf-8")
    return path
