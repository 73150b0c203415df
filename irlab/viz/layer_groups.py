"""Layer groups: a program graph's nodes grouped by the name scopes of their layers, as nested
clusters a graph view can collapse (Model Explorer's hierarchy).

Names come from where the model was written: an ONNX node's name (the importer makes it the
span of what it builds: ``/layer1/layer1.0/conv1/Conv``) or a model builder's weight names
(``stage1_unit1_conv1_weight``). Dropping the last part (the op, or the weight's role) leaves
the layer's scope path: ``layer1`` > ``layer1/layer1.0`` > ``layer1/layer1.0/conv1``. A node
without a name of its own (the relu after a conv) belongs to its first input's layer.

Only scopes holding at least ``MIN_GROUP`` nodes of two layers or more become groups, and a
scope holding every named node (a model-wide prefix such as ``resnetv17``) does not. A fused
function joins the deepest group holding all its ops, so groups and fused functions nest.
"""

from __future__ import annotations

import re

import networkx as nx

MIN_GROUP = 3  # nodes a scope needs to become a group
LAYER = "layer"  # the ``kind`` of a layer group's cluster


def scope_path(name: str) -> tuple:
    """The scopes of the layer called ``name``, outermost first, the layer itself last:
    ``/a/b/Conv`` -> ``("a", "a/b")``; ``a.0.conv1/Conv`` -> ``("a", "a.0", "a.0.conv1")``;
    ``stage1_unit1_conv1_weight`` -> ``("stage1", "stage1_unit1", "stage1_unit1_conv1")``."""
    sep = "/" if "/" in name else "_"
    parts = [p for p in name.split(sep) if p][:-1]
    if sep == "/" and len(parts) == 1 and "." in parts[0]:
        sep, parts = ".", parts[0].split(".")  # a module path: layer1.0.conv1/Conv
    return tuple(sep.join(parts[:i + 1]) for i in range(len(parts)))


def own_name(data) -> str:
    """The name a graph node carries from the model: its span's source name (ONNX node
    name), else the name of its first named folded weight."""
    span = getattr(data.get("expr"), "span", None)
    source = getattr(getattr(span, "source_name", None), "name", "") if span is not None else ""
    if source and "/" in str(source):
        return str(source)
    names = [f.get("name") for f in data.get("folded") or () if f.get("name")]
    return str(names[0]) if names else str(source or "")


def node_scopes(graph, known=None) -> dict:
    """node id -> scope path, for every node of ``graph`` (a DAG). ``known``: paths found
    before (a pass trace's input program), used for the nodes they name: a pass that folds a
    named weight into a new constant does not move its user out of its layer."""
    known = known or {}
    scopes = {}
    try:
        order = list(nx.topological_sort(graph))
    except nx.NetworkXUnfeasible:
        order = list(graph.nodes)
    for ident in order:
        data = graph.nodes[ident]
        path = known.get(ident) or (scope_path(own_name(data)) if data.get("kind") == "call"
                                    else ())
        if not path:
            inputs = sorted(graph.predecessors(ident),
                            key=lambda p: graph.edges[p, ident].get("index", 0))
            path = next((scopes[p] for p in inputs if scopes.get(p)), ())
        scopes[ident] = path
    return scopes


def _kept_scopes(scopes: dict) -> set:
    """The scopes that group something: at least ``MIN_GROUP`` nodes of two or more layers
    (a single layer's batch_norm + relu is not a group), and not every named node."""
    counts: dict = {}
    layers: dict = {}
    for path in scopes.values():
        for scope in path:
            counts[scope] = counts.get(scope, 0) + 1
            layers.setdefault(scope, set()).add(path[-1])
    named = sum(1 for path in scopes.values() if path)
    return {s for s, n in counts.items() if MIN_GROUP <= n < named and len(layers[s]) > 1}


def _common(paths) -> tuple:
    paths = list(paths)
    if not paths:
        return ()
    common = paths[0]
    for path in paths[1:]:
        n = 0
        while n < min(len(common), len(path)) and common[n] == path[n]:
            n += 1
        common = common[:n]
    return common


def cluster_id(scope: str) -> str:
    """A layer group's cluster id (Graphviz draws subgraphs named ``cluster...`` as boxes)."""
    return "cluster_layer_" + re.sub(r"\W", "_", scope.strip("/"))


def with_layer_groups(graph, scopes=None):
    """A copy of ``graph`` whose nodes and fused functions sit in layer-group clusters
    (``kind="layer"``); ``graph`` itself when no name gives a group."""
    scopes = node_scopes(graph) if scopes is None else scopes
    kept = _kept_scopes({n: scopes.get(n, ()) for n in graph.nodes})
    if not kept:
        return graph
    clusters = graph.graph.get("clusters", {})

    def deepest(path):
        inside = [s for s in path if s in kept]
        return cluster_id(inside[-1]) if inside else None

    out = graph.copy()
    groups = {}
    for path in set(scopes.values()):
        inside = [s for s in path if s in kept]
        for outer, scope in zip([None, *inside], inside):
            label = re.split(r"[/]", scope.strip("/"))[-1]
            groups[cluster_id(scope)] = {
                "kind": LAYER, "label": label, "attrs": {"scope": scope},
                "parent": cluster_id(outer) if outer is not None else None}
    members: dict = {}
    for ident, data in graph.nodes(data=True):
        if data.get("cluster") is None:
            out.nodes[ident]["cluster"] = deepest(scopes.get(ident, ()))
        else:
            members.setdefault(_top(data["cluster"], clusters), []).append(ident)
    fused = {}
    for cid, info in clusters.items():
        fused[cid] = dict(info)
        if info.get("parent") is None:
            path = _common(scopes.get(n, ()) for n in members.get(cid, []))
            fused[cid]["parent"] = deepest(path)
    out.graph["clusters"] = {**groups, **fused}
    return out


def _top(cid, clusters):
    while clusters.get(cid, {}).get("parent") is not None:
        cid = clusters[cid]["parent"]
    return cid
