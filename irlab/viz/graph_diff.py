"""Which nodes a pass added, removed or changed, between two graphs with shared ids."""

from __future__ import annotations

_COMPARED = ("kind", "title", "attrs", "type", "cluster", "folded")


def graph_diff(before, after) -> dict:
    """node id -> "added" / "removed" / "changed" (unchanged nodes are absent).

    A node is *changed* when its id survives but its label, attributes, type, enclosing
    function or folded weights (shape, values) differ, or its inputs are different nodes.
    """
    diff = {}
    for ident in after.nodes:
        if ident not in before.nodes:
            diff[ident] = "added"
            continue
        a, b = before.nodes[ident], after.nodes[ident]
        same_fields = all(_comparable(a.get(k), k, before) == _comparable(b.get(k), k, after)
                          for k in _COMPARED)
        same_inputs = sorted(before.predecessors(ident)) == sorted(after.predecessors(ident))
        if not (same_fields and same_inputs):
            diff[ident] = "changed"
    for ident in before.nodes:
        if ident not in after.nodes:
            diff[ident] = "removed"
    return diff


def _comparable(value, key, graph):
    if key == "cluster" and value is not None:
        info = graph.graph.get("clusters", {}).get(value, {})
        return info.get("label")
    return value


def union_graph(before, after):
    """Both graphs in one (after's nodes plus before's removed ones): one layout for both
    panes of a before/after view, so nodes stay put while stepping."""
    import networkx as nx

    graph = nx.DiGraph()
    graph.graph["clusters"] = dict(before.graph.get("clusters", {}))
    graph.graph["clusters"].update({k: v for k, v in after.graph.get("clusters", {}).items()})
    for ident, data in before.nodes(data=True):
        graph.add_node(ident, **data)
    for ident, data in after.nodes(data=True):
        graph.add_node(ident, **data)
    graph.add_edges_from(before.edges(data=True))
    graph.add_edges_from(after.edges(data=True))
    return graph
