"""Relay graphs: node kinds, clusters for fused functions, stable ids, diffs, safe rendering."""

import re

import numpy as np

import irlab
from irlab import relay, viz
from irlab.relay.testing import MODELS
from irlab.viz.graph_diff import graph_diff


def _conv_block():
    data = relay.var("data", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    b = relay.var("b", shape=(4,))
    conv = relay.nn.conv2d(data, w, padding=(1, 1), channels=4, kernel_size=(3, 3))
    out = relay.nn.relu(relay.nn.bias_add(conv, b))
    return relay.Function([data, w, b], out)


def test_kinds_labels_types_and_lines():
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(_conv_block()))
    g = viz.build_relay_graph(mod, params={"w": None, "b": None}, fold_weights=False)
    kinds = {d["title"]: d["kind"] for _, d in g.nodes(data=True)}
    assert kinds["data"] == "input" and kinds["w"] == "param" and kinds["b"] == "param"
    conv = next(d for _, d in g.nodes(data=True) if d["title"] == "nn.conv2d")
    assert conv["type"] == "Tensor[(1, 4, 8, 8), float32]"
    assert conv["attrs"]["kernel_size"] == "[3, 3]" and "padding" in conv["summary"]
    text = str(mod).splitlines()
    assert "nn.conv2d(" in text[conv["ir_line"]]
    ids = set(g.nodes)
    assert all(re.fullmatch(r"n\d+", i) for i in ids)
    relu = next(i for i, d in g.nodes(data=True) if d["title"] == "nn.relu")
    assert g.graph["outputs"]["main"] == relu


def test_fused_function_is_a_cluster_with_edges_from_call_arguments():
    x = relay.var("x", shape=(2, 2))
    p0 = relay.var("p0", shape=(2, 2))
    fused = relay.Function([p0], relay.nn.relu(relay.exp(p0))).with_attr("Primitive", 1)
    mod = irlab.IRModule.from_expr(relay.Function([x], relay.negative(fused(x))))
    g = viz.build_relay_graph(relay.transform.InferType()(mod))
    clusters = g.graph["clusters"]
    assert len(clusters) == 1
    (cid, info), = clusters.items()
    assert info["kind"] == "primitive" and info["label"] == "fused_exp_relu"
    inner = {d["title"] for _, d in g.nodes(data=True) if d["cluster"] == cid}
    assert inner == {"exp", "relu"} or inner == {"exp", "nn.relu"}
    assert "p0" not in {d["title"] for _, d in g.nodes(data=True)}  # params not drawn
    x_id = next(i for i, d in g.nodes(data=True) if d["title"] == "x")
    exp_id = next(i for i, d in g.nodes(data=True) if d["title"] == "exp")
    assert g.has_edge(x_id, exp_id)


def test_tuples_and_getitems_drawn_honestly():
    x = relay.var("x", shape=(6,))
    parts = relay.split(x, 3)
    out = relay.Tuple([parts[0], parts[2]])
    g = viz.build_relay_graph(relay.Function([x], out))
    titles = sorted(d["title"] for _, d in g.nodes(data=True))
    assert titles.count(".0") == 1 and titles.count(".2") == 1 and "tuple" in titles


def test_ids_stable_across_versions_and_diff_classifies():
    fn = _conv_block()
    ids = viz.NodeIds()
    before = viz.build_relay_graph(fn, ids=ids)
    # A "pass": replace relu by sigmoid, keep everything else (new objects for the rewrite).
    relu = fn.body
    after_fn = relay.Function(fn.params, relay.sigmoid(relu.args[0]))
    after = viz.build_relay_graph(after_fn, ids=ids)
    assert set(before.nodes) - {viz_id for viz_id, d in before.nodes(data=True)
                                if d["title"] == "nn.relu"} <= set(after.nodes)
    diff = graph_diff(before, after)
    assert sorted(diff.values()) == ["added", "removed"]
    # Rewriting a node's attrs keeps its id and marks it changed.
    conv = relu.args[0].args[0]
    new_conv = relay.nn.conv2d(*conv.args, padding=(0, 0), channels=4, kernel_size=(3, 3))
    rewritten = relay.Function(fn.params, relay.nn.relu(relay.nn.bias_add(new_conv,
                                                                           fn.params[2])))
    third = viz.build_relay_graph(rewritten, ids=ids)
    conv_id = next(i for i, d in before.nodes(data=True) if d["title"] == "nn.conv2d")
    assert graph_diff(before, third)[conv_id] == "changed"


def test_model_text_is_escaped_in_dot_and_svg():
    evil = "<img src=x onerror=alert(1)>"
    x = relay.var(evil, shape=(2,))
    quote = relay.var('a"b\\c', shape=(2,))
    g = viz.build_relay_graph(relay.Function([x, quote], relay.add(x, quote)))
    dot = viz.to_dot(g)
    assert '\\"' in dot  # quotes escaped inside DOT strings
    svg = viz.render_svg(g)
    assert "<img" not in svg and "&lt;img src=x onerror=alert(1)&gt;" in svg


def test_resnet_graph_renders_quickly():
    mod, params = MODELS["resnet18"]()
    g = viz.build_relay_graph(mod, params)
    svg = viz.render_svg(g, timeout=60)
    assert svg.lstrip().startswith("<?xml") and svg.count('class="node"') == g.number_of_nodes()


def test_text_diff_ignores_renumbering():
    before = "%0 = exp(%x);\n%1 = negative(%0);\nadd(%1, %x)"
    after = "%0 = sqrt(%x);\n%1 = exp(%x);\n%2 = negative(%1);\nadd(%2, %x)"
    rows = viz.diff_lines(before, after)
    assert [r.tag for r in rows] == ["insert", "equal", "equal", "equal"]
    assert viz.unified_diff(before, after).count("\n+") + viz.unified_diff(
        before, after).startswith("+") == 1
    assert not viz.changed("%3 = exp(%x)", "%4 = exp(%x)")
    html_text = viz.diff_html("<b>", "<i>")
    assert "<b>" not in html_text and "&lt;b&gt;" in html_text


def test_layout_without_system_graphviz_uses_the_pygraphviz_wheel(monkeypatch):
    import shutil

    from irlab.viz import dot as dot_module

    real_which = shutil.which
    monkeypatch.setattr(dot_module.shutil, "which",
                        lambda name: None if name == "dot" else real_which(name))
    assert dot_module.layout_engine() == "pygraphviz"
    g = viz.build_relay_graph(_conv_block())
    svg = viz.render_svg(g, timeout=60)
    assert svg.count('class="node"') == g.number_of_nodes()


def test_layout_time_limit_raises_a_clear_error(monkeypatch):
    import subprocess

    import pytest

    from irlab.errors import IrlabError
    from irlab.viz import dot as dot_module

    def too_slow(*args, **kwargs):
        raise subprocess.TimeoutExpired(args[0], kwargs.get("timeout"))

    monkeypatch.setattr(dot_module.subprocess, "run", too_slow)
    with pytest.raises(IrlabError, match="longer than 1 s"):
        viz.render_svg(viz.build_relay_graph(_conv_block()), timeout=1)


def test_constants_print_as_written():
    x = relay.var("x", shape=(4,))
    eps = relay.const(np.float32(1e-5))
    func = relay.Function([x], relay.add(relay.multiply(x, relay.const(np.float32(0.1))), eps))
    graph = viz.build_relay_graph(irlab.IRModule.from_expr(func), fold_weights=False)
    titles = {d["title"] for _, d in graph.nodes(data=True)}
    assert {"const 1e-05", "const 0.1"} <= titles
    folded = viz.build_relay_graph(irlab.IRModule.from_expr(func))  # the default: folded
    (add,) = [d for _, d in folded.nodes(data=True) if d["title"] == "add"]
    assert add["folded"][0]["values"] == "[1e-05]"


def test_weights_fold_into_their_users_by_default():
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(_conv_block()))
    w = np.arange(4 * 3 * 3 * 3, dtype="float32").reshape(4, 3, 3, 3)
    g = viz.build_relay_graph(mod, params={"w": w, "b": None})
    assert sorted(d["title"] for _, d in g.nodes(data=True)) == [
        "data", "nn.bias_add", "nn.conv2d", "nn.relu"]
    conv = next(d for _, d in g.nodes(data=True) if d["title"] == "nn.conv2d")
    assert conv["folded"] == [{"index": 1, "kind": "param", "name": "w",
                               "shape": "[4, 3, 3, 3]", "dtype": "float32",
                               "values": "[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, ...]"}]
    bias = next(d for _, d in g.nodes(data=True) if d["title"] == "nn.bias_add")
    assert bias["folded"][0]["shape"] == "[4]" and bias["folded"][0]["values"] == ""
    assert "w[4, 3, 3, 3]" in viz.to_dot(g)  # the label names the folded weight
    assert g.number_of_edges() == 3
    full = viz.build_relay_graph(mod, params={"w": w, "b": None}, fold_weights=False)
    assert full.number_of_nodes() == 6 and full.number_of_edges() == 5


def test_constant_folded_into_a_fused_function_and_an_output_constant_drawn():
    x = relay.var("x", shape=(2, 2))
    p0, p1 = relay.var("p0", shape=(2, 2)), relay.var("p1", shape=(2, 2))
    fused = relay.Function([p0, p1], relay.add(relay.exp(p0), p1)).with_attr("Primitive", 1)
    c = relay.const(np.full((2, 2), 0.5, "float32"))
    mod = irlab.IRModule.from_expr(relay.Function([x], relay.Tuple([fused(x, c), c])))
    g = viz.build_relay_graph(relay.transform.InferType()(mod))
    add = next(d for _, d in g.nodes(data=True) if d["title"] == "add")
    assert add["folded"][0]["values"] == "[0.5, 0.5, 0.5, 0.5]"
    tup = next(d for _, d in g.nodes(data=True) if d["title"] == "tuple")
    assert tup["folded"][0]["index"] == 1  # the tuple's second field
    only_const = relay.Function([], relay.const(np.float32(2.0)))
    out = viz.build_relay_graph(only_const)
    (node,) = out.nodes
    assert out.graph["outputs"]["main"] == node and out.nodes[node]["kind"] == "const"


def test_folding_keeps_ids_and_a_changed_weight_marks_its_user_changed():
    x = relay.var("x", shape=(4,))
    ids = viz.NodeIds()
    before = viz.build_relay_graph(relay.Function([x], relay.multiply(
        x, relay.const(np.ones(4, "float32")))), ids=ids)
    after = viz.build_relay_graph(relay.Function([x], relay.multiply(
        x, relay.const(np.full(4, 2.0, "float32")))), ids=ids)
    assert set(before.nodes) == set(after.nodes)
    (mul,) = [i for i, d in after.nodes(data=True) if d["title"] == "multiply"]
    assert graph_diff(before, after) == {mul: "changed"}


def test_resnet50_weights_folded_node_counts():
    mod, params = MODELS["resnet50"]()
    folded = viz.build_relay_graph(mod, params)
    full = viz.build_relay_graph(mod, params, fold_weights=False)
    kinds = [d["kind"] for _, d in folded.nodes(data=True)]
    assert "param" not in kinds and "const" not in kinds
    assert folded.number_of_nodes() == full.number_of_nodes() - len(params)
    assert sum(len(d.get("folded", ())) for _, d in folded.nodes(data=True)) == len(params)


def test_references_and_match_are_drawn():
    """Every Relay node kind is a node of the picture: references and ADT matches too."""
    text = """
#[version = "0.0.5"]
type Opt { Some(float32), Empty, }
def @main(%x: float32) -> float32 {
  let %r = ref(%x);
  %0 = ref_write(%r, %x);
  match (Some(ref_read(%r))) {
    Some(%v) => %v,
    Empty => 0f,
  }
}
"""
    mod = relay.parse(text)
    graph = viz.build_relay_graph(mod["main"])
    titles = sorted(data["title"] for _, data in graph.nodes(data=True))
    for title in ("ref", "ref_read", "match", "Some"):
        assert title in titles, titles
    match = next(n for n, d in graph.nodes(data=True) if d["title"] == "match")
    assert graph.in_degree(match) >= 2  # the matched value and the clauses' results
