"""Static export and the ``irlab report`` command: one self-contained HTML file (no URL, no
external resource), model strings escaped, every step's diff and layout embedded and
resolvable; the command works on a model name and on a script."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from irlab import relay
from irlab.cli import main
from irlab.relay.testing import MODELS
from irlab.viz.pass_trace import PassTrace
from irlab.widgets import GraphView, export_html
from irlab.widgets.assets import STATIC

EVIL = "<img src=x onerror=alert(1)>"
ROOT = Path(__file__).resolve().parents[2]


def _evil_function():
    x = relay.var(EVIL, shape=(2, 2))
    return relay.Function([x], relay.add(relay.nn.relu(relay.exp(x)), relay.const(1.0)))


def _data(page: str) -> dict:
    block = re.search(r'<script type="application/json" id="irlab-data">(.*?)</script>', page,
                      re.S)
    assert block, "the data block is missing"
    return json.loads(block.group(1))


def _assert_offline(page: str):
    assert not re.search(r"""(src|href|action)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "http://" not in page and "https://" not in page
    assert "@import" not in page and "url(http" not in page
    assert page.count("<script") == 2  # the data and the inline module, nothing loaded


def test_export_is_one_offline_file_with_escaped_names(tmp_path):
    out = export_html(_evil_function(), tmp_path / "evil.html", title="<b>t</b>")
    assert out == tmp_path / "evil.html" and list(tmp_path.iterdir()) == [out]
    page = out.read_text(encoding="utf-8")
    _assert_offline(page)
    assert EVIL not in page  # never as markup...
    assert "\\u003cimg src=x onerror=alert(1)\\u003e" in page  # ...only as JSON text
    assert "<title>&lt;b&gt;t&lt;/b&gt;</title>" in page
    app = _data(page)["apps"][0]
    node = next(n for n in app["records"] if n["title"] == EVIL)
    assert node["kind"] == "input"


def test_every_step_diff_resolves(tmp_path):
    mod, params = MODELS["simplenet"]()
    trace = PassTrace(mod, params=params)
    page = export_html(trace, None, numerics=True)
    app = _data(page)["apps"][0]
    assert app["kind"] == "stepper"
    steps = app["state"]["steps"]
    assert len(steps) == len(trace.steps) and all(r["error"] is not None for r in steps)
    assert app["state"]["first_bad"] == -1
    for i in range(len(steps)):
        pair = app["pairs"][f"-1:{i}"]
        assert pair["text_a"] in app["texts"] and pair["text_b"] in app["texts"]
        assert pair["graph"] in app["layouts"]
    fuse = next(r["i"] for r in steps if r["name"] == "FuseOps")
    assert any(row[0] != "e" for row in app["pairs"][f"-1:{fuse}"]["rows"])
    # programs and layouts stored once, however many steps show them
    assert len(app["texts"]) < len(steps) and len(app["layouts"]) < len(steps)
    # each node's description once: a layout's node holds its geometry and a reference
    records = app["records"]
    nodes = [n for g in app["layouts"].values() for n in g["nodes"]]
    assert all(0 <= n["r"] < len(records) and "title" not in n for n in nodes)
    assert len(records) < len(nodes) / 2


def test_extra_bases_are_exported():
    mod, _ = MODELS["mlp"]()
    trace = PassTrace(mod)
    app = _data(export_html(trace, None, bases=(0,)))["apps"][0]
    assert all(f"0:{i}" in app["pairs"] for i in range(1, len(trace.steps)))


def test_graph_view_export(tmp_path):
    view = GraphView(_evil_function())
    page = export_html(view, tmp_path / "g.html").read_text(encoding="utf-8")
    _assert_offline(page)
    app = _data(page)["apps"][0]
    assert app["kind"] == "graph" and app["state"]["ir"].count(EVIL) >= 1


def test_browser_code_never_writes_html():
    for path in STATIC.glob("*.js"):
        code = path.read_text(encoding="utf-8")
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
                     "eval(", "new Function"):
            assert sink not in code, f"{path.name} uses {sink}"


def test_cli_report_on_a_model_name(tmp_path, capsys):
    out = tmp_path / "simplenet.html"
    assert main(["report", "simplenet", "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    _assert_offline(page)
    names = [r["name"] for r in _data(page)["apps"][0]["state"]["steps"]]
    assert "FuseOps" in names


def test_cli_report_on_a_script(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(
        "from irlab import relay\n"
        "x = relay.var('x', shape=(4,))\n"
        "mod = relay.Function([x], relay.nn.relu(relay.exp(x)))\n")
    out = tmp_path / "script.html"
    done = subprocess.run([sys.executable, "-m", "irlab.cli", "report", str(script), "-o",
                           str(out), "--passes", "InferType,FuseOps"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    steps = _data(out.read_text(encoding="utf-8"))["apps"][0]["state"]["steps"]
    assert [r["name"] for r in steps if r["depth"] == 0] == ["input", "InferType", "FuseOps"]


def test_cli_rejects_unknown_models(tmp_path):
    with pytest.raises(SystemExit, match="not a model name"):
        main(["report", "no_such_model", "-o", str(tmp_path / "x.html")])


def test_cli_report_on_an_onnx_file(tmp_path):
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("irlab.relay.frontend")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Exp", ["r"], ["y"])],
        "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / "tiny.onnx"
    onnx.save(model, str(path))
    out = tmp_path / "tiny.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    app = _data(out.read_text(encoding="utf-8"))["apps"][0]
    assert any("nn.relu" in text for text in app["texts"].values())


def test_resnet50_report_is_grouped_by_layer_and_under_5_mb(tmp_path):
    """Issue 21: ``irlab report resnet50`` stays under 5 MB, with the graph view's layer
    groups (the model builder's stage / unit names) in its graphs."""
    from irlab.cli import main

    out = tmp_path / "r50.html"
    assert main(["report", "resnet50", "-o", str(out)]) == 0
    assert out.stat().st_size < 5_000_000
    app = _data(out.read_text(encoding="utf-8"))["apps"][0]
    first = app["layouts"][app["pairs"]["-1:0"]["graph"]]
    layers = {c["label"] for c in first["clusters"] if c["kind"] == "layer"}
    assert {"stage1", "stage4", "stage4_unit3"} <= layers
