"""Layer groups from ONNX node names and model-builder weight names (irlab.viz.layer_groups)."""

from __future__ import annotations

from types import SimpleNamespace

import networkx as nx

from irlab.relay.testing import MODELS
from irlab.relay.transform import InferType
from irlab.viz import build_relay_graph
from irlab.viz.layer_groups import LAYER, node_scopes, scope_path, with_layer_groups
from irlab.viz.pass_trace import PassTrace


def test_scope_paths_from_onnx_and_builder_names():
    assert scope_path("/layer1/layer1.0/conv1/Conv") == ("layer1", "layer1/layer1.0",
                                                         "layer1/layer1.0/conv1")
    assert scope_path("stage1_unit1_conv1_weight") == ("stage1", "stage1_unit1",
                                                       "stage1_unit1_conv1")
    assert scope_path("layer1.0.conv1/Conv") == ("layer1", "layer1.0", "layer1.0.conv1")
    assert scope_path("conv0_weight") == ("conv0",) and scope_path("data") == ()


def _onnx_like_chain(names):
    """call nodes in a chain, each with an ONNX node name as its span (None: no name)."""
    graph = nx.DiGraph()
    graph.graph["clusters"] = {}
    for i, name in enumerate(names):
        span = SimpleNamespace(source_name=SimpleNamespace(name=name)) if name else None
        graph.add_node(f"n{i}", kind="call", title="op", expr=SimpleNamespace(span=span))
        if i:
            graph.add_edge(f"n{i - 1}", f"n{i}", index=0)
    return graph


def test_onnx_names_nest_and_unnamed_nodes_join_their_input():
    names = ["/stem/Conv", "/layer1/b0/conv1/Conv", None, "/layer1/b0/conv2/Conv",
             "/layer1/b1/conv1/Conv", "/layer1/b1/conv2/Conv", None, "/head/Gemm"]
    graph = _onnx_like_chain(names)
    scopes = node_scopes(graph)
    assert scopes["n2"] == scopes["n1"]  # the unnamed relu belongs to conv1's layer
    grouped = with_layer_groups(graph, scopes)
    groups = {c: i for c, i in grouped.graph["clusters"].items() if i["kind"] == LAYER}
    labels = {i["label"]: c for c, i in groups.items()}
    assert set(labels) == {"layer1", "b0", "b1"}  # single layers (conv1, stem) are no group
    assert groups[labels["b0"]]["parent"] == labels["layer1"]
    assert grouped.nodes["n3"]["cluster"] == labels["b0"]
    assert grouped.nodes["n0"]["cluster"] is None and graph.nodes["n3"].get("cluster") is None


def test_resnet_trace_keeps_its_layers_after_the_weights_are_folded():
    mod, params = MODELS["resnet18"]()
    trace = PassTrace(mod, params=params)
    first = build_relay_graph(InferType()(mod), params)
    stages = {i["label"] for i in with_layer_groups(first).graph["clusters"].values()
              if i["parent"] is None}
    assert stages == {"stage1", "stage2", "stage3", "stage4"}
    # the trace binds the weights as constants; they keep their names
    names = [f["name"] for _, d in trace.graph(0).nodes(data=True) for f in d.get("folded", [])]
    assert names and all(names)
    # after FuseOps, fused functions sit inside the layers their ops came from
    known = node_scopes(trace.graph(0))
    last = trace.graph(len(trace.steps) - 1)
    grouped = with_layer_groups(last, node_scopes(last, known=known))
    clusters = grouped.graph["clusters"]
    fused = [i for i in clusters.values() if i["kind"] != LAYER]
    inside = [i for i in fused if i["parent"] and clusters[i["parent"]]["kind"] == LAYER]
    assert len(inside) > len(fused) / 2


def test_onnx_resnet_groups_by_its_module_paths():
    """ONNX node names ``layer1.0.conv1/Conv`` (the importer's spans) give layer1 > layer1.0."""
    from irlab.relay.frontend import from_onnx
    from irlab.relay.frontend.onnx_models import resnet18

    mod, params = from_onnx(resnet18(image_size=32, num_classes=10))
    graph = build_relay_graph(InferType()(mod), params)
    clusters = with_layer_groups(graph).graph["clusters"]
    labels = {i["label"]: i for i in clusters.values()}
    assert set(labels) == {f"layer{s}{b}" for s in range(1, 5) for b in ("", ".0", ".1")}
    assert clusters[labels["layer2.1"]["parent"]]["label"] == "layer2"
