"""A hierarchical layered layout: each cluster (fused function, layer group) is laid out on its
own, as a block of its direct members and its child clusters (each one box), and its result is
kept in a ``GroupLayoutCache`` keyed by what the block holds. Expanding one group or stepping
to a pass that changed one group lays out that block and the blocks above it again; every
other group keeps its cached inner positions (stable across steps), and no group's box ever
holds a stranger (the structure survives at any size).

Used for the graphs above ``layout.GRAPHVIZ_MAX_NODES`` drawn nodes; smaller ones go to
Graphviz, which lays clusters out itself.
"""

from __future__ import annotations

from collections import OrderedDict

import networkx as nx

_GAP_X, _GAP_Y, _PAD, _TOP = 18.0, 36.0, 10.0, 22.0  # pt; _TOP leaves room for the label


def _r(value) -> float:
    return round(float(value), 1)


class GroupLayoutCache:
    """Inner layouts of blocks, least recently used dropped beyond ``size`` entries."""

    def __init__(self, size=512):
        self.size = size
        self.blocks = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key, make):
        if key in self.blocks:
            self.hits += 1
            self.blocks.move_to_end(key)
            return self.blocks[key]
        self.misses += 1
        value = self.blocks[key] = make()
        if len(self.blocks) > self.size:
            self.blocks.popitem(last=False)
        return value

    def __repr__(self):
        return f"GroupLayoutCache({len(self.blocks)} blocks, {self.hits} hits, " \
               f"{self.misses} misses)"


def _chain(graph, cluster, info):
    """``cluster`` and its ancestors, innermost first (the root, None, last)."""
    out = []
    while cluster is not None and cluster not in out:
        out.append(cluster)
        cluster = info.get(cluster, {}).get("parent")
    return out + [None]


def _owner(chain, block):
    """The direct child of ``block`` on the way to a node whose ancestor chain is ``chain``
    (the node itself stands for itself when its innermost cluster is ``block``)."""
    index = chain.index(block)
    return chain[index - 1] if index > 0 else None


def hierarchical_geometry(graph, size: dict, cache: GroupLayoutCache | None = None) -> dict:
    """Geometry (the shape ``layout._graphviz_geometry`` returns) of ``graph`` with node sizes
    ``size`` (id -> (w, h)): nodes, straight edges, cluster boxes."""
    cache = cache if cache is not None else GroupLayoutCache()
    info = graph.graph.get("clusters", {})
    chains = {n: _chain(graph, d.get("cluster"), info) for n, d in graph.nodes(data=True)}
    # the block each node and cluster belongs to directly
    members = {}
    for n, chain in chains.items():
        members.setdefault(chain[0], []).append(("n", n))
        for child, parent in zip(chain, chain[1:]):
            if child is not None:
                members.setdefault(parent, [])
                if ("c", child) not in members[parent]:
                    members[parent].append(("c", child))
    links = {}  # block -> set of (item, item) edges between its direct members
    for a, b in graph.edges():
        ca, cb = chains[a], chains[b]
        common = next(c for c in ca if c in cb)
        ia = ("n", a) if ca[0] == common else ("c", _owner(ca, common))
        ib = ("n", b) if cb[0] == common else ("c", _owner(cb, common))
        if ia != ib:
            links.setdefault(common, set()).add((ia, ib))
    placed = {}  # block -> (relative positions of its items, width, height)

    def block_of(block):
        if block in placed:
            return placed[block]
        items = members.get(block, [])
        sizes = {}
        for kind, ident in items:
            sizes[(kind, ident)] = size[ident] if kind == "n" else block_of(ident)[1:]
        key = (block, frozenset((item, sizes[item]) for item in items),
               frozenset(links.get(block, ())))
        placed[block] = cache.get(key, lambda: _layered(items, sizes, links.get(block, ())))
        return placed[block]

    root_pos, width, height = block_of(None)
    nodes, clusters = {}, {}

    def place(block, ox, oy):
        pos = block_of(block)[0]
        for (kind, ident), (x, y) in pos.items():
            if kind == "n":
                w, h = size[ident]
                nodes[ident] = {"x": _r(ox + x), "y": _r(oy + y), "w": _r(w), "h": _r(h)}
                continue
            _, w, h = block_of(ident)
            x0, y0 = ox + x - w / 2, oy + y - h / 2
            clusters[ident] = {"x": _r(x0), "y": _r(y0), "w": _r(w), "h": _r(h),
                               "lx": _r(x0 + w / 2), "ly": _r(y0 + 14)}
            place(ident, x0, y0)

    place(None, 0.0, 0.0)
    edges = {}
    for src, dst in graph.edges:
        a, b = nodes[src], nodes[dst]
        edges[(src, dst)] = {"d": f"M{a['x']} {_r(a['y'] + a['h'] / 2)}"
                                  f"L{b['x']} {_r(b['y'] - b['h'] / 2)}"}
    return {"width": _r(width), "height": _r(height), "nodes": nodes, "edges": edges,
            "clusters": clusters}


def _layered(items, sizes, links):
    """Layered positions (item centres, relative to the block's corner) and the block's size:
    rank = longest path, a rank ordered by the mean position of its inputs."""
    block = nx.DiGraph()
    block.add_nodes_from(items)
    block.add_edges_from(links)
    if not nx.is_directed_acyclic_graph(block):  # a rewired union: drop the closing edges
        order = {n: i for i, n in enumerate(reversed(list(nx.dfs_postorder_nodes(block))))}
        block.remove_edges_from([(a, b) for a, b in list(block.edges) if order[a] >= order[b]])
    order, pos = {}, {}
    y, width = _TOP, 0.0
    for rank in nx.topological_generations(block):
        rank.sort(key=lambda n: (sum(order.get(p, 0) for p in block.predecessors(n)) /
                                 max(1, block.in_degree(n)), str(n)))
        x = _PAD
        tallest = max(sizes[n][1] for n in rank)
        for position, item in enumerate(rank):
            w, h = sizes[item]
            pos[item] = (x + w / 2, y + tallest / 2)
            order[item] = position
            x += w + _GAP_X
        width = max(width, x - _GAP_X + _PAD)
        y += tallest + _GAP_Y
    return pos, max(width, 60.0), y - _GAP_Y + _PAD
