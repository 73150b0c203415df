"""Every widget carries a static picture (``text/html``: inline SVG or a table/pre, no script,
no network) next to its widget view, with all model text escaped."""

import re

import pytest

import irlab as tvm
from irlab import relay

pytest.importorskip("anywidget")

from irlab.widgets import (GraphView, LoweringExplorer, PassStepper, Row,  # noqa: E402
                           RunPanel, explore)
from irlab.widgets.picture import diff_pre, graph_svg  # noqa: E402

EVIL = "<img src=x onerror=alert(1)>"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def evil_module():
    """A tiny program whose variable name is markup."""
    x = relay.var(EVIL, shape=(1, 4))
    return relay.Function([x], relay.nn.relu(relay.add(x, relay.const(1.0))))


def bundle_of(widget) -> dict:
    bundle = widget._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert WIDGET_VIEW in data, "the live view must stay in the bundle"
    return data


def picture_of(widget) -> str:
    picture = bundle_of(widget)["text/html"]
    assert re.search(r"<svg|<table|<pre", picture), picture[:200]
    assert EVIL not in picture and "<script" not in picture.lower()
    assert not re.search(r"\b(src|href)\s*=\s*[\"']?https?:", picture)
    return picture


def test_graph_view_picture_is_the_graph():
    picture = picture_of(GraphView(evil_module()))
    assert picture.count("<svg") == 1
    assert "nn.relu" in picture and "&lt;img src=x" in picture


def test_pass_stepper_picture_has_diff_and_graph():
    stepper = PassStepper(evil_module())
    picture = picture_of(stepper)
    assert "<svg" in picture and "<pre" in picture
    assert f"step {stepper.step}:" in picture


def test_explorer_picture_shows_graph_and_passes():
    app = explore(evil_module())
    picture = picture_of(app)
    assert "GraphView" in picture and "PassStepper" in picture


def test_row_puts_pictures_side_by_side():
    picture = picture_of(Row([GraphView(evil_module()), GraphView(evil_module())]))
    assert picture.count("<svg") == 2


@pytest.fixture(scope="module")
def built():
    mod = evil_module()
    return relay.build(tvm.IRModule.from_expr(mod), "llvm")


def test_lowering_explorer_picture_lists_kernels(built):
    picture = picture_of(LoweringExplorer(built))
    assert "kernels</summary>" in picture and "<pre" in picture


def test_run_panel_picture_has_table_and_chart(built):
    picture = picture_of(RunPanel(built, number=1, repeat=1))
    assert "<table" in picture and "<svg" in picture


def test_graph_svg_escapes_attributes_and_labels():
    payload = {"width": 100, "height": 50, "edges": [{"d": 'M0 0"/><script>', "s": "a",
                                                       "t": "b"}],
               "clusters": [{"x": 0, "y": 0, "w": 10, "h": 10, "label": EVIL}],
               "nodes": [{"x": 10, "y": 10, "w": 20, "h": 10, "label": [EVIL],
                          "title": EVIL, "kind": "call", "shape": "box"}]}
    svg = graph_svg(payload)
    assert "<script" not in svg and EVIL not in svg and svg.startswith("<svg")
    assert graph_svg({}) == ""


def test_diff_pre_shows_only_changed_lines():
    rows = [["e", 1, 1, [], []], ["r", 2, 2, [], []], ["i", 0, 3, [], []]]
    text = diff_pre("a\nb<", "a\nc\nd&", rows)
    assert "- b&lt;" in text and "+ c" in text and "+ d&amp;" in text
    assert "a\n" not in text


def test_column_of_controls_and_widgets_pictures_every_level():
    import ipywidgets

    from irlab.widgets import Column

    label = ipywidgets.Label(value=EVIL)
    app = Column([Row([ipywidgets.Dropdown(options=["a", "b"], description="Model"), label]),
                  ipywidgets.VBox([GraphView(evil_module())])])
    picture = picture_of(app)
    assert "Model a" in picture and "&lt;img" in picture and picture.count("<svg") == 1
