"""Operations on program graphs behind the graph views: search, neighbourhood, collapsing
fused functions into one node, and the inspector's description of a node.

The browser applies the same search and neighbourhood rules to the laid-out payload (see
``static/irlab_core.js``: ``matchNodes`` and ``neighbourhood``), so a static page behaves as
the notebook does; these Python versions feed the widgets' synced traits.
"""

from __future__ import annotations

import networkx as nx

from irlab.viz.layer_groups import LAYER
from irlab.widgets.layout import all_attrs

SEARCH_FIELDS = ("title", "name", "op")


def search_nodes(graph, query: str) -> list:
    """Ids of the nodes whose op, title, name or a folded weight's name contains ``query``
    (case-insensitive), or whose id is ``query``; in graph order. An empty query matches nothing."""
    q = (query or "").strip().lower()
    if not q:
        return []
    return [ident for ident, data in graph.nodes(data=True)
            if ident.lower() == q or any(q in str(data.get(k) or "").lower()
                                         for k in SEARCH_FIELDS)
            or data.get("kind") != "cluster" and any(
                q in str(f.get("name") or "").lower() for f in data.get("folded") or ())]


def neighbourhood(graph, node, hops: int = 2) -> set:
    """Nodes at most ``hops`` edges away from ``node``, edges followed both ways."""
    if node not in graph:
        return set()
    seen = {node}
    frontier = [node]
    for _ in range(max(0, int(hops))):
        nxt = []
        for ident in frontier:
            for other in (*graph.predecessors(ident), *graph.successors(ident)):
                if other not in seen:
                    seen.add(other)
                    nxt.append(other)
        frontier = nxt
    return seen


def cluster_tree(graph) -> dict:
    """cluster id -> ids of all nodes inside it (nested clusters included)."""
    clusters = graph.graph.get("clusters", {})
    inside = {cid: [] for cid in clusters}
    for ident, data in graph.nodes(data=True):
        cluster = data.get("cluster")
        while cluster is not None and cluster in clusters:
            inside[cluster].append(ident)
            cluster = clusters[cluster].get("parent")
    return inside


def top_clusters(graph) -> list:
    """Ids of the clusters not nested in another one."""
    return [cid for cid, info in graph.graph.get("clusters", {}).items()
            if info.get("parent") is None]


def fused_groups(graph) -> list:
    """Ids of the fused (or composite) functions not nested in another function: each one
    collapsed, the program reads one node per kernel."""
    clusters = graph.graph.get("clusters", {})
    return [cid for cid, info in clusters.items() if info.get("kind") != LAYER and (
        info.get("parent") is None or clusters.get(info["parent"], {}).get("kind") == LAYER)]


def all_groups(graph) -> list:
    """Ids of every layer group and fused function (``fused_groups``): all collapsed, a big
    graph opens as its top-level layers, each expanding into its sublayers."""
    clusters = graph.graph.get("clusters", {})
    return [cid for cid, info in clusters.items() if info.get("kind") == LAYER] + \
        fused_groups(graph)


def owners(graph, node, collapsed) -> list:
    """The collapsed clusters ``node`` is hidden in, outermost last (expanding them all shows
    it)."""
    clusters = graph.graph.get("clusters", {})
    shut = set(collapsed)
    cid = graph.nodes[node].get("cluster") if node in graph else None
    chain = []
    while cid is not None and cid in clusters:
        if cid in shut:
            chain.append(cid)
        cid = clusters[cid].get("parent")
    return chain


def collapse(graph, collapsed) -> nx.DiGraph:
    """``graph`` with each cluster of ``collapsed`` drawn as one node (id = the cluster id).

    Edges into or out of a collapsed cluster's members go to that node; edges inside it
    vanish. A cluster nested in a collapsed one disappears with it.
    """
    clusters = graph.graph.get("clusters", {})
    collapsed = [c for c in collapsed if c in clusters]
    if not collapsed:
        return graph
    members = cluster_tree(graph)
    owner = {}
    for cid in collapsed:
        # the outermost collapsed cluster owns a node
        outer = cid
        parent = clusters[cid].get("parent")
        while parent is not None:
            if parent in collapsed:
                outer = parent
            parent = clusters.get(parent, {}).get("parent")
        for ident in members[cid]:
            owner[ident] = outer
    reduced = nx.DiGraph()
    shut = set(collapsed)
    reduced.graph["clusters"] = {c: info for c, info in clusters.items()
                                 if c not in shut and not _hidden(c, clusters, shut)}
    reduced.graph["outputs"] = {k: owner.get(v, v)
                                for k, v in graph.graph.get("outputs", {}).items()}
    for ident, data in graph.nodes(data=True):
        if ident not in owner:
            reduced.add_node(ident, **data)
    for cid in set(owner.values()):
        info = clusters[cid]
        inner = sorted((n for n in members[cid] if graph.nodes[n].get("kind") == "call"),
                       key=lambda n: graph.nodes[n].get("ir_line") or 0)
        ops = [graph.nodes[n].get("title", "") for n in inner]
        hidden = [[n, str(graph.nodes[n].get("title", "")), _search_name(graph.nodes[n]),
                   str(graph.nodes[n].get("op") or ""), owners(graph, n, shut)]
                  for n in members[cid] if owner.get(n) == cid]
        reduced.add_node(cid, kind="cluster", title=str(info.get("label", cid)),
                         name="", type=_cluster_type(graph, members[cid]), hidden=hidden,
                         attrs=dict(info.get("attrs", {})), cluster=info.get("parent"),
                         ir_line=_first_line(graph, members[cid]),
                         summary=f"{len(ops)} op{'' if len(ops) == 1 else 's'} (collapsed)",
                         members=ops,
                         folded=[f for n in inner for f in graph.nodes[n].get("folded") or ()])
    for src, dst, data in graph.edges(data=True):
        a, b = owner.get(src, src), owner.get(dst, dst)
        if a != b and not reduced.has_edge(a, b):
            reduced.add_edge(a, b, **data)
    return reduced


def _search_name(data) -> str:
    """The name a search finds a hidden node by: its own, or its folded weights' names."""
    names = [str(data.get("name") or "")] + [str(f.get("name") or "")
                                             for f in data.get("folded") or ()]
    return " ".join(n for n in names if n)


def _hidden(cid, clusters, collapsed) -> bool:
    parent = clusters[cid].get("parent")
    while parent is not None:
        if parent in collapsed:
            return True
        parent = clusters.get(parent, {}).get("parent")
    return False


def _cluster_type(graph, members) -> str:
    """The type of the cluster's result: its member whose users are all outside."""
    inside = set(members)
    for ident in members:
        if all(user not in inside for user in graph.successors(ident)):
            return str(graph.nodes[ident].get("type") or "")
    return ""


def _first_line(graph, members):
    lines = [graph.nodes[n].get("ir_line") for n in members
             if graph.nodes[n].get("ir_line") is not None]
    return min(lines) if lines else None


def node_details(graph, ident, ir_text: str = "", provenance=(), step_names=()) -> dict:
    """What the inspector shows for node ``ident``: op, all attrs, type, name, cluster, line
    in the printed IR, inputs and users, and the steps that created or changed it."""
    if ident not in graph:
        return {}
    data = graph.nodes[ident]
    lines = ir_text.splitlines() if ir_text else []
    line = data.get("ir_line")
    clusters = graph.graph.get("clusters", {})
    cluster = data.get("cluster")

    def brief(other):
        d = graph.nodes[other]
        return {"id": other, "title": str(d.get("title", "")), "type": str(d.get("type") or "")}

    inputs = sorted(graph.predecessors(ident),
                    key=lambda p: graph.edges[p, ident].get("index", 0))
    return {
        "id": ident, "kind": data.get("kind", ""), "title": str(data.get("title", "")),
        "op": str(data.get("op") or ""), "name": str(data.get("name") or ""),
        "type": str(data.get("type") or ""), "attrs": all_attrs(data),
        "cluster": str(clusters.get(cluster, {}).get("label", "")) if cluster else "",
        "line": line, "ir": lines[line] if line is not None and 0 <= line < len(lines) else "",
        "inputs": [brief(p) for p in inputs],
        "users": [brief(s) for s in graph.successors(ident)],
        "members": list(data.get("members") or []),
        "folded": [dict(f) for f in data.get("folded") or []],
        "provenance": [{"step": i, "name": step_names[i] if i < len(step_names) else ""}
                       for i in provenance],
    }
