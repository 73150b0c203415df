"""GraphView: layout payload, inspector, search, collapse, neighbourhood, synced traits (a
browser's changes arrive through ``set_state``, as from the comm)."""

import json

import pytest

import irlab
from irlab import relay
from irlab.errors import IrlabError
from irlab.widgets import GraphView
from irlab.widgets import layout as layout_mod

EVIL = "<img src=x onerror=alert(1)>"


def _conv_net():
    data = relay.var("data", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    b = relay.var("b", shape=(4,))
    conv = relay.nn.conv2d(data, w, padding=(1, 1), channels=4, kernel_size=(3, 3))
    out = relay.nn.relu(relay.nn.bias_add(conv, b))
    return relay.Function([data, w, b], out)


def _fused():
    x = relay.var("x", shape=(2, 2))
    p0 = relay.var("p0", shape=(2, 2))
    fused = relay.Function([p0], relay.nn.relu(relay.exp(p0))).with_attr("Primitive", 1)
    return relay.Function([x], relay.negative(fused(x)))


def _node(view, title):
    return next(n for n in view.graph["nodes"] if n["title"] == title)


def test_payload_has_geometry_details_and_is_json():
    view = GraphView(_conv_net(), params={"w": None, "b": None}, fold_weights=False)
    payload = view.graph
    json.dumps(payload, allow_nan=False)  # what the comm (or the export) sends
    conv = _node(view, "nn.conv2d")
    assert conv["w"] > 0 and conv["h"] > 0 and conv["type"] == "Tensor[(1, 4, 8, 8), float32]"
    # all attrs, defaults included (the label shows only non-default ones)
    assert conv["attrs"]["kernel_size"] == "[3, 3]" and "data_layout" in conv["attrs"]
    assert "nn.conv2d(" in view.ir.splitlines()[conv["line"]]
    kinds = {n["title"]: n["kind"] for n in payload["nodes"]}
    assert kinds["w"] == "param" and kinds["data"] == "input"
    ids = {n["id"] for n in payload["nodes"]}
    assert all(e["s"] in ids and e["t"] in ids and e["d"].startswith("M")
               for e in payload["edges"])


def test_click_from_browser_fills_inspector_and_observers_see_it():
    view = GraphView(_conv_net())
    seen = []
    view.observe(lambda change: seen.append(change["new"]), names=["selected"])
    conv = _node(view, "nn.conv2d")["id"]
    view.set_state({"selected": conv})  # what a click sends through the comm
    assert seen == [conv]
    info = view.inspector
    assert info["op"] == "nn.conv2d" and info["type"] == "Tensor[(1, 4, 8, 8), float32]"
    assert info["attrs"]["channels"] == "4" and "nn.conv2d(" in info["ir"]
    assert [i["title"] for i in info["inputs"]] == ["data", "w"]
    assert [u["title"] for u in info["users"]] == ["nn.bias_add"]
    view.select("")
    assert view.inspector == {}


def test_search_matches_op_name_and_id():
    view = GraphView(_conv_net())
    view.set_state({"search": "CONV"})
    assert [view.networkx_graph.nodes[i]["title"] for i in view.matches] == ["nn.conv2d"]
    view.search = "bias"
    titles = {view.networkx_graph.nodes[i]["title"] for i in view.matches}
    assert titles == {"nn.bias_add"}
    view.search = "w"  # a name
    assert "w" in {view.networkx_graph.nodes[i]["title"] for i in view.matches}
    view.search = "   "
    assert view.matches == []


def test_collapse_fused_function_to_one_node_and_back():
    view = GraphView(_fused())
    (cluster,) = view.graph["top_clusters"]
    exp = _node(view, "exp")["id"]
    view.selected = exp
    view.set_state({"collapsed": [cluster]})
    titles = [n["title"] for n in view.graph["nodes"]]
    assert "exp" not in titles and "fused_exp_relu" in titles
    node = _node(view, "fused_exp_relu")
    assert node["kind"] == "cluster" and sorted(node["members"]) == ["exp", "nn.relu"]
    assert view.selected == cluster  # the selection followed its node into the function
    edges = {(e["s"], e["t"]) for e in view.graph["edges"]}
    x = _node(view, "x")["id"]
    neg = _node(view, "negative")["id"]
    assert edges == {(x, cluster), (cluster, neg)}
    assert view.graph["clusters"] == []
    view.expand_all()
    assert "exp" in [n["title"] for n in view.graph["nodes"]]
    assert len(view.graph["clusters"]) == 1


def test_big_graph_starts_collapsed():
    view = GraphView(_fused(), big=3)
    assert view.collapsed == view.graph["top_clusters"]
    assert any(n["kind"] == "cluster" for n in view.graph["nodes"])


def test_neighbourhood_of_selected_node():
    view = GraphView(_conv_net())
    conv = _node(view, "nn.conv2d")["id"]
    view.selected = conv
    view.show_neighbourhood(hops=1)
    titles = {view.networkx_graph.nodes[i]["title"] for i in view.neighbours}
    assert titles == {"nn.conv2d", "data", "w", "nn.bias_add"}
    view.hops = 2
    assert "nn.relu" in {view.networkx_graph.nodes[i]["title"] for i in view.neighbours}
    relu = _node(view, "nn.relu")["id"]
    view.selected = relu  # the neighbourhood follows the selection
    assert view.focus == relu
    view.show_neighbourhood("")
    assert view.neighbours == []


def test_layout_falls_back_when_graphviz_is_too_slow(monkeypatch):
    def too_slow(*args, **kwargs):
        raise IrlabError("graph layout took longer than 1 s")

    monkeypatch.setattr(layout_mod, "render", too_slow)
    view = GraphView(_fused())
    payload = view.graph
    assert payload["engine"] == "layered" and "longer" in payload["warning"]
    ys = {n["title"]: n["y"] for n in payload["nodes"]}
    assert ys["x"] < ys["exp"] < ys["nn.relu"] < ys["negative"]  # top-down by rank
    (cluster,) = payload["clusters"]
    inner = [n for n in payload["nodes"] if n["title"] in ("exp", "nn.relu")]
    assert all(cluster["x"] <= n["x"] - n["w"] / 2 and n["x"] + n["w"] / 2 <=
               cluster["x"] + cluster["w"] for n in inner)


def test_model_strings_are_data_not_markup():
    x = relay.var(EVIL, shape=(2,))
    view = GraphView(relay.Function([x], relay.nn.relu(x)))
    node = _node(view, EVIL)
    # kept verbatim as data: the browser writes it with textContent, the export escapes it
    assert node["name"] == EVIL and node["label"][0] == EVIL


def test_step_of_a_trace_with_provenance():
    from irlab.viz.pass_trace import PassTrace

    @irlab.transform.module_pass(opt_level=0, name="ExpToSigmoid")
    def rewrite(mod, ctx):
        class M(relay.ExprMutator):
            def visit_call(self, call):
                new = super().visit_call(call)
                return relay.sigmoid(new.args[0]) if new.op.name == "exp" else new
        out = mod.copy()
        out["main"] = M().visit(mod["main"])
        return out

    x = relay.var("x", shape=(2, 2))
    trace = PassTrace(relay.Function([x], relay.nn.relu(relay.exp(x))), [rewrite])
    view = GraphView(trace=trace, step=1)
    assert view.step == 1 and "ExpToSigmoid" in view.title
    sig = _node(view, "sigmoid")
    assert sig["prov"] == [[1, "ExpToSigmoid"]]
    view.selected = sig["id"]
    assert view.inspector["provenance"] == [{"step": 1, "name": "ExpToSigmoid"}]


@pytest.mark.parametrize("bad", [None, "n999"])
def test_unknown_selection_gives_empty_inspector(bad):
    view = GraphView(_fused())
    view.selected = bad or ""
    assert view.inspector == {}


def test_weights_folded_by_default_and_the_toggle_draws_them():
    view = GraphView(_conv_net(), params={"w": None, "b": None})
    titles = sorted(n["title"] for n in view.graph["nodes"])
    assert titles == ["data", "nn.bias_add", "nn.conv2d", "nn.relu"]
    conv = _node(view, "nn.conv2d")
    assert conv["folded"] == [{"index": "1", "kind": "param", "name": "w",
                               "shape": "[4, 3, 3, 3]", "dtype": "float32", "values": ""}]
    view.set_state({"selected": conv["id"]})
    assert view.inspector["folded"][0]["name"] == "w"
    view.set_state({"weights": True})  # the checkbox
    assert {"w", "b"} <= {n["title"] for n in view.graph["nodes"]}
    assert view.inspector["id"] == conv["id"]  # ids survive the rebuild
    view.weights = False
    assert len(view.graph["nodes"]) == 4


def test_collapsed_fused_function_lists_the_weights_of_its_ops():
    x = relay.var("x", shape=(2, 2))
    p0, p1 = relay.var("p0", shape=(2, 2)), relay.var("p1", shape=(2, 2))
    fused = relay.Function([p0, p1], relay.add(relay.exp(p0), p1)).with_attr("Primitive", 1)
    c = relay.const(__import__("numpy").ones((2, 2), "float32"))
    view = GraphView(relay.Function([x], relay.negative(fused(x, c))))
    view.collapse_all()
    (group,) = [n for n in view.graph["nodes"] if n["kind"] == "cluster"]
    assert group["folded"][0]["values"] == "[1.0, 1.0, 1.0, 1.0]"
    assert [n["title"] for n in view.graph["nodes"]].count("const float32") == 0


def test_fused_resnet_starts_collapsed_and_one_group_expands():
    from irlab.relay.testing import MODELS
    from irlab.viz.pass_trace import PassTrace

    mod, params = MODELS["resnet18"]()
    trace = PassTrace(mod, params=params)
    fused = max(i for i, s in enumerate(trace.steps) if s.name == "FuseOps")
    full = trace.graph(fused)
    assert len(full) > 50 and full.graph["clusters"]
    view = GraphView(trace=trace, step=fused, big=50)  # 71 nodes; ResNet-50's 198 > BIG_GRAPH
    # big: every layer group (the model builder's stage / unit names) and fused function
    # starts collapsed; the graph opens as its stages
    titles = {n["title"] for n in view.graph["nodes"] if n["kind"] == "cluster"}
    assert {"stage1", "stage2", "stage3", "stage4"} <= titles
    assert len(view.graph["nodes"]) < 15 and view.graph["clusters"] == []
    # a node inside collapsed groups: revealing it opens its stage, unit and function
    conv = next(n for n, d in full.nodes(data=True) if d.get("title") == "nn.conv2d" and
                full.graph["clusters"][d["cluster"]]["label"].startswith("fused_conv2d"))
    view.reveal(conv)
    assert view.selected == conv and conv in {n["id"] for n in view.graph["nodes"]}
    assert view.inspector["op"] == "nn.conv2d"
    kinds = {c["kind"] for c in view.graph["clusters"]}
    assert kinds >= {"layer", "primitive"}
    group = full.nodes[conv]["cluster"]
    view.collapse_group(group)
    (node,) = [n for n in view.graph["nodes"] if n["id"] == group]
    assert node["folded"] and any(h[0] == conv for h in node["hidden"])  # searchable inside
    view.expand_all()
    assert len(view.graph["nodes"]) == len(full)
    view.collapse_all()
    assert len(view.graph["nodes"]) < 15


def test_folded_weight_names_are_escaped_in_the_picture():
    x = relay.var("x", shape=(2,))
    w = relay.var(EVIL, shape=(2,))
    view = GraphView(relay.Function([x, w], relay.add(x, w)), params=[EVIL])
    (add,) = [n for n in view.graph["nodes"] if n["title"] == "add"]
    assert add["folded"][0]["name"] == EVIL  # text in the payload, drawn via textContent
    html = view.to_html()
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;[2]" in html
    from irlab import viz

    svg = viz.render_svg(view.networkx_graph)
    assert "<img" not in svg and "&lt;img" in svg


def test_big_flat_graph_takes_the_layered_layout_by_choice():
    """Above GRAPHVIZ_MAX_NODES drawn nodes the layered layout is the engine (no warning: not
    a fallback); every node is placed, each rank below its inputs."""
    from irlab.relay.testing import synthetic

    mod, params = synthetic.get_workload(num_nodes=layout_mod.GRAPHVIZ_MAX_NODES + 100)
    payload = GraphView(mod, params=params).graph
    assert payload["engine"] == "layered" and payload["warning"] == ""
    assert len(payload["nodes"]) > layout_mod.GRAPHVIZ_MAX_NODES
    ys = {n["id"]: n["y"] for n in payload["nodes"]}
    assert all(ys[e["s"]] < ys[e["t"]] and e["d"] for e in payload["edges"])


def test_group_layout_lays_out_each_group_once_and_keeps_positions(monkeypatch):
    """The layered layout of a grouped graph: each group is one block laid out on its own
    (no stranger in its box); expanding one group reuses every other group's cached layout,
    whose nodes keep their place relative to their box."""
    from irlab.relay.testing import MODELS

    monkeypatch.setattr(layout_mod, "GRAPHVIZ_MAX_NODES", 10)  # resnet18 is small: force it
    mod, params = MODELS["resnet18"]()
    view = GraphView(mod, params=params, big=50)
    assert view.graph["engine"] == "layered" and view.graph["warning"] == ""
    stages = [n["id"] for n in view.graph["nodes"] if n["kind"] == "cluster"]
    view.expand(stages[0])
    view.expand(stages[1])
    first = {c["id"]: c for c in view.graph["clusters"]}
    inner = {n["id"]: (n["x"] - first[n["cluster"]]["x"], n["y"] - first[n["cluster"]]["y"])
             for n in view.graph["nodes"] if n.get("cluster") in first}
    for n in view.graph["nodes"]:  # each node inside its own group's box, no other
        for c in first.values():
            inside = c["x"] < n["x"] < c["x"] + c["w"] and c["y"] < n["y"] < c["y"] + c["h"]
            ours = n.get("cluster") == c["id"] or str(n.get("cluster")).startswith(c["id"])
            assert inside == ours or n["kind"] == "cluster", (n["id"], c["id"])
    misses = view._group_layouts.misses
    view.expand(stages[2])
    assert view._group_layouts.misses - misses <= 4  # stage 3 (its units) and the root
    after = {c["id"]: c for c in view.graph["clusters"]}
    for n in view.graph["nodes"]:
        if n["id"] in inner and n["cluster"] in after:
            box = after[n["cluster"]]
            assert (n["x"] - box["x"], n["y"] - box["y"]) == pytest.approx(inner[n["id"]])
