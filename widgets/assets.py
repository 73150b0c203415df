"""The browser side of the widgets, read from ``static/``: each widget's ES module is the shared
core (``irlab_core.js``) followed by the widget's file and an ``export default``, because
anywidget loads one module per widget and relative imports do not resolve there. The static
HTML export inlines the same files."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

STATIC = Path(__file__).parent / "static"
# A Jupyter data directory (put it on JUPYTER_PATH) holding the Voila template "irlab": Voila's
# "lab" template without its CDN stylesheets, so a served irlab page loads nothing remote.
JUPYTER_DATA = Path(__file__).parent / "jupyter"
VOILA_TEMPLATE = "irlab"


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


def install_voila_template(data_dir=None, config_dir=None) -> Path:
    """Copy the "irlab" Voila template into a Jupyter data directory (default: the user's) and
    make it Voila's default there (``voila.json`` in ``config_dir``, default the user's), so
    ``voila notebooks/explorer.ipynb`` serves pages that load nothing remote. Returns the
    template's directory."""
    import json
    import shutil

    from jupyter_core.paths import jupyter_config_dir, jupyter_data_dir

    target = Path(data_dir or jupyter_data_dir()) / "voila" / "templates" / VOILA_TEMPLATE
    shutil.copytree(JUPYTER_DATA / "voila" / "templates" / VOILA_TEMPLATE, target,
                    dirs_exist_ok=True)
    config = Path(config_dir or jupyter_config_dir()) / "voila.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    settings = json.loads(config.read_text()) if config.exists() else {}
    settings.setdefault("VoilaConfiguration", {})["template"] = VOILA_TEMPLATE
    config.write_text(json.dumps(settings, indent=2) + "\n")
    return target
