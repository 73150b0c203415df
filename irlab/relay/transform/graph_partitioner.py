"""The analysis behind ``FuseOps``: the indexed forward dataflow graph, its post-dominator tree
and the union-find partitioner that decides which nodes share a fused function (TVM's
``src/relay/analysis/graph_partitioner.{h,cc}`` and the graph creator of ``fuse_ops.cc``).

Why a post-dominator tree: a node may feed several branches that only meet again later::

            conv2d
            /  |  \\
          op   op  op
            \\  |  /
          elemwise add

The immediate post-dominator of ``conv2d`` is the ``add`` every path goes through, so the
whole diamond can become one kernel when every node on the way allows it. The partitioner
tries, for each node in post-DFS order, to merge it into its post-dominator's group, in three
phases (0: anchors such as conv2d take their elementwise tails; 1: injective ops; 2: injective
ops into an intermediate tuple).

Example (``add -> exp -> squeeze``, all fusable)::

    >>> graph = IndexedForwardGraph.create(func)
    >>> groups = GraphPartitioner(opt_level=2).partition(graph)
    >>> len({g.find_root() for g, n in zip(groups, graph.post_dfs_order)
    ...      if isinstance(n.ref, Call)})
    1

Everything here is iterative: a 10,000-op chain needs no deep recursion.
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op, OpPattern
from irlab.ir.type import TensorType, TupleType
from irlab.ir.adt import Constructor
from irlab.relay.adt import Match
from irlab.relay.expr import (Call, Constant, If, Let, RefCreate, RefRead, RefWrite, Tuple,
                              TupleGetItem, Var)
from irlab.relay.expr_functor import expr_children
from irlab.relay.function import Function

ELEMWISE = OpPattern.ELEMWISE
BROADCAST = OpPattern.BROADCAST
INJECTIVE = OpPattern.INJECTIVE
COMM_REDUCE = OpPattern.COMM_REDUCE
OUT_ELEMWISE_FUSABLE = OpPattern.OUT_ELEMWISE_FUSABLE
TUPLE = OpPattern.TUPLE
OPAQUE = OpPattern.OPAQUE

# Default of the ``relay.FuseOps.max_depth`` PassContext option (TVM's kMaxFusedOps).
MAX_FUSED_OPS = 256

# Scalar constants of these dtypes are computed inline by the code generator, so they can sit
# inside a fused function; any other constant is a buffer and stays outside (Opaque).
_INLINE_CONST_DTYPES = frozenset({"int32", "int64", "float32", "float64", "bool"})

# Nodes that get an index in the post-DFS order (functions, ops and global vars do not).
_INDEXED = (Var, Constant, Call, Tuple, TupleGetItem, Let, If)


def _returned_by_function_call(expr) -> bool:
    """Whether ``expr`` is the result of calling a function (not an operator): LowerTE cannot
    take it apart inside a fused function."""
    return isinstance(expr, Call) and not isinstance(expr.op, Op)


class FusionError(IrlabError):
    """The partitioner met a state it cannot handle (e.g. two anchor ops in one group)."""


# -- the forward graph ------------------------------------------------------------------------
class Edge:
    """A dataflow edge to a consumer ``node``, labelled with how the consumer reads the value."""

    __slots__ = ("node", "pattern")

    def __init__(self, node, pattern):
        self.node = node
        self.pattern = OpPattern(pattern)

    def __repr__(self):
        return f"Edge(->{self.node.index}, {self.pattern.name})"


class GraphNode:
    """One expression of the forward graph.

    ``extern_ref`` marks values used where fusion cannot follow them (function outputs and
    parameters, let bindings, if branches, callees...); such a node has no post-dominator.
    """

    __slots__ = ("ref", "index", "extern_ref", "pattern", "outputs")

    def __init__(self):
        self.ref = None
        self.index = -1
        self.extern_ref = False
        self.pattern = OPAQUE
        self.outputs: list[Edge] = []

    def __repr__(self):
        kind = type(self.ref).__name__
        return (f"GraphNode({self.index}, {kind}, {self.pattern.name}, "
                f"extern={self.extern_ref}, outputs={[e.node.index for e in self.outputs]})")


def _is_tensor(ty) -> bool:
    return isinstance(ty, TensorType)


class IndexedForwardGraph:
    """The dataflow fragment of an expression, nodes numbered in post-DFS order.

    ``node_map`` maps every expression met (callees and functions included) to its
    ``GraphNode``; ``post_dfs_order`` lists only the indexed ones (not functions, ops or global
    vars). The expression must be typed: edge patterns look at shapes.
    """

    def __init__(self):
        self.node_map: dict = {}
        self.post_dfs_order: list[GraphNode] = []

    @classmethod
    def create(cls, body) -> "IndexedForwardGraph":
        graph = cls()
        graph._build(body)
        return graph

    # Registers a use of ``expr``: by ``parent`` through an edge, or from outside (extern).
    def _update(self, expr, parent, pattern):
        node = self.node_map.get(expr)
        if node is None:
            node = self.node_map[expr] = GraphNode()
        if parent is None:
            node.extern_ref = True
        else:
            node.outputs.append(Edge(parent, pattern))

    def _node(self, expr) -> GraphNode:
        node = self.node_map.get(expr)
        if node is None:
            node = self.node_map[expr] = GraphNode()
        return node

    def _build(self, body):
        self._update(body, None, OPAQUE)
        visited = set()
        stack = [(body, False)]
        while stack:
            expr, expanded = stack.pop()
            if expanded:
                if isinstance(expr, _INDEXED):
                    node = self._node(expr)
                    node.ref = expr
                    node.index = len(self.post_dfs_order)
                    self.post_dfs_order.append(node)
                continue
            if expr in visited:
                continue
            visited.add(expr)
            stack.append((expr, True))
            # Children are visited in TVM's ExprVisitor order (callee, then args...), which
            # fixes the post-DFS numbering and thus the parameter order of fused functions.
            for child in reversed(self._expand(expr)):
                if child not in visited:
                    stack.append((child, False))

    def _expand(self, expr) -> list:
        """Record the edges out of ``expr``'s children; return the children to visit."""
        update = self._update
        if isinstance(expr, Call):
            node = self._node(expr)
            op = expr.op
            if isinstance(op, Op):
                pattern = op.pattern
            else:
                pattern = OPAQUE
                update(op, node, OPAQUE)
            node.pattern = pattern
            update(op, None, OPAQUE)
            rtype = expr.checked_type
            for arg in expr.args:
                edge = pattern
                # A broadcast op reading an argument of the output's own shape reads it
                # elementwise: this is what lets conv2d + bias-add-of-same-shape fuse.
                if edge == BROADCAST:
                    atype = arg.checked_type
                    if _is_tensor(atype) and _is_tensor(rtype) and atype.shape == rtype.shape:
                        edge = ELEMWISE
                update(arg, node, edge)
            return [op, *expr.args]
        if isinstance(expr, Tuple):
            node = self._node(expr)
            node.pattern = TUPLE
            for field in expr.fields:
                if _is_tensor(field.checked_type):
                    update(field, node, INJECTIVE)
                else:
                    update(field, None, OPAQUE)
            return list(expr.fields)
        if isinstance(expr, TupleGetItem):
            tuple_type = expr.tuple_value.checked_type
            if not isinstance(tuple_type, TupleType):
                raise FusionError(f"TupleGetItem of a non-tuple value of type {tuple_type}")
            # Lowering expects a fused function's tuple inputs to hold tensors only; and it
            # takes no tuple parameters, so a tuple an opaque call returns (an external
            # function's outputs) is projected outside, the consumer fusing a tensor.
            if all(_is_tensor(t) for t in tuple_type.fields) and \
                    not _returned_by_function_call(expr.tuple_value):
                node = self._node(expr)
                node.pattern = INJECTIVE
                update(expr.tuple_value, node, INJECTIVE)
            else:
                update(expr.tuple_value, None, OPAQUE)
            return [expr.tuple_value]
        if isinstance(expr, Constant):
            node = self._node(expr)
            data = expr.data  # its shape and dtype only: no copy of the weight
            simple = data.ndim == 0 and str(data.dtype) in _INLINE_CONST_DTYPES
            node.pattern = ELEMWISE if simple else OPAQUE
            return []
        if isinstance(expr, Function):
            # Functions handed to an external codegen are not looked into.
            if expr.attrs is not None and "Compiler" in expr.attrs:
                return []
            for param in expr.params:
                update(param, None, OPAQUE)
            update(expr.body, None, OPAQUE)
            return [*expr.params, expr.body]
        if isinstance(expr, Let):
            for part in (expr.var, expr.value, expr.body):
                update(part, None, OPAQUE)
            return [expr.var, expr.value, expr.body]
        if isinstance(expr, If):
            for part in (expr.cond, expr.true_branch, expr.false_branch):
                update(part, None, OPAQUE)
            return [expr.cond, expr.true_branch, expr.false_branch]
        if isinstance(expr, (Var, Op, GlobalVar, Constructor)):
            return []
        if isinstance(expr, (Match, RefCreate, RefRead, RefWrite)):
            # control flow and effects: every part is its own group, as If's
            children = expr_children(expr)
            for part in children:
                update(part, None, OPAQUE)
            return children
        raise FusionError(f"FuseOps cannot analyse a {type(expr).__name__} node")

    def debug_dump(self) -> str:
        """One line per node: index, kind, pattern and the indices of its consumers."""
        lines = []
        for node in self.post_dfs_order:
            outs = ", ".join(str(e.node.index) for e in node.outputs)
            what = type(node.ref).__name__
            if isinstance(node.ref, Call) and isinstance(node.ref.op, Op):
                what = node.ref.op.name
            extern = " extern" if node.extern_ref else ""
            lines.append(f"node[{node.index}] {what} {node.pattern.name}{extern} outputs=[{outs}]")
        return "\n".join(lines)


# -- the post-dominator tree ------------------------------------------------------------------
class DomNode:
    """A node of the post-dominator tree: ``parent`` is the immediate post-dominator and
    ``pattern`` the strongest edge pattern met on the way to it."""

    __slots__ = ("gnode", "parent", "depth", "pattern")

    def __init__(self, gnode, parent, depth, pattern):
        self.gnode = gnode
        self.parent = parent
        self.depth = depth
        self.pattern = pattern


def _lca(lhs, rhs, pattern):
    """Least common ancestor of two tree nodes; also folds the patterns of the nodes left."""
    while lhs is not rhs:
        if lhs is None or rhs is None:
            return None, pattern
        if lhs.depth < rhs.depth:
            pattern = max(pattern, rhs.pattern)
            rhs = rhs.parent
        elif rhs.depth < lhs.depth:
            pattern = max(pattern, lhs.pattern)
            lhs = lhs.parent
        else:
            pattern = max(pattern, lhs.pattern, rhs.pattern)
            lhs = lhs.parent
            rhs = rhs.parent
    return lhs, pattern


def post_dominator_tree(graph: IndexedForwardGraph) -> list[DomNode]:
    """The post-dominator tree of a DAG, one ``DomNode`` per index, in one reverse pass: a
    node's immediate post-dominator is the LCA of its consumers (all indexed after it)."""
    nodes: list = [None] * len(graph.post_dfs_order)
    for gnode in reversed(graph.post_dfs_order):
        if gnode.extern_ref:
            nodes[gnode.index] = DomNode(gnode, None, 1, OPAQUE)
            continue
        pattern = ELEMWISE
        parent = None
        for i, edge in enumerate(gnode.outputs):
            onode = nodes[edge.node.index]
            if onode is None:
                raise FusionError("the forward graph is not in topological order")
            if i == 0:
                parent = onode
            else:
                parent, pattern = _lca(parent, onode, pattern)
            pattern = max(pattern, edge.pattern)
        depth = parent.depth + 1 if parent is not None else 1
        nodes[gnode.index] = DomNode(gnode, parent, depth, OpPattern(pattern))
    return nodes


# -- the partitioner --------------------------------------------------------------------------
class Group:
    """A union-find set of nodes that will form one fused function.

    Only the root's ``pattern``/``anchor_ref``/``num_nodes`` describe the whole group; the
    fields of merged (non-root) groups keep their values from the time of the merge, and the
    partitioner reads them, as TVM does.
    """

    __slots__ = ("parent", "pattern", "root_ref", "anchor_ref", "num_nodes")

    def __init__(self, pattern, root_ref):
        self.parent = None
        self.pattern = pattern
        self.root_ref = root_ref
        # The OutEWiseFusable op (conv2d, dense...) the group is built around, if any.
        self.anchor_ref = root_ref if pattern == OUT_ELEMWISE_FUSABLE else None
        self.num_nodes = 1

    def find_root(self) -> "Group":
        root = self
        while root.parent is not None:
            root = root.parent
        node = self
        while node is not root:  # path compression
            node.parent, node = root, node.parent
        return root

    def __repr__(self):
        return f"Group({OpPattern(self.pattern).name}, nodes={self.num_nodes})"


def _combine_groups(lhs, rhs):
    if lhs > BROADCAST and rhs > BROADCAST:
        raise FusionError("Cannot merge two complex group together")
    return max(lhs, rhs)


def _reachable(src_outputs, sink):
    """Nodes reachable from the edges ``src_outputs`` up to and including ``sink``."""
    seen = set()
    stack = [e.node for e in reversed(src_outputs)]
    while stack:
        node = stack.pop()
        if node.index in seen:
            continue
        seen.add(node.index)
        yield node
        if node is not sink:
            stack.extend(e.node for e in reversed(node.outputs))


def _fcond_injective(kind, is_sink):
    return kind <= INJECTIVE


def _fcond_broadcast(kind, is_sink):
    return kind <= BROADCAST


def _fcond_into_anchor(kind, is_sink):
    # Parallel elementwise/broadcast/injective branches may join an elementwise source; the
    # sink itself may already hold a reduction or an anchor op.
    if not is_sink:
        return kind <= INJECTIVE
    return kind <= INJECTIVE or kind == COMM_REDUCE or kind == OUT_ELEMWISE_FUSABLE


class GraphPartitioner:
    """Assigns every node of an ``IndexedForwardGraph`` to a ``Group``.

    ``opt_level == 0`` keeps one group per node (no fusion). ``max_fuse_depth`` bounds the
    number of nodes of a group (``relay.FuseOps.max_depth``).
    """

    def __init__(self, opt_level: int, max_fuse_depth: int = MAX_FUSED_OPS):
        self.opt_level = int(opt_level)
        self.max_fuse_depth = int(max_fuse_depth)
        self.groups: list[Group] = []

    def partition(self, graph: IndexedForwardGraph) -> list[Group]:
        self.groups = [Group(node.pattern, node.ref) for node in graph.post_dfs_order]
        if self.opt_level == 0:
            return self.groups
        tree = post_dominator_tree(graph)
        for phase in range(3):
            self._run_fuse(graph, tree, phase)
        return self.groups

    # -- helpers ---------------------------------------------------------------------------
    def _check_path(self, src, sink, fcond) -> bool:
        """Every node between ``src`` (excluded) and ``sink`` satisfies ``fcond`` (judged on
        the pattern of its group's root)."""
        if src.extern_ref or src is sink:
            raise FusionError("check_path needs a non-extern source distinct from its sink")
        groups = self.groups
        return all(fcond(groups[node.index].find_root().pattern, node is sink)
                   for node in _reachable(src.outputs, sink))

    def _merge_from_to(self, child: Group, parent: Group):
        child = child.find_root()
        parent = parent.find_root()
        if child is parent:
            return
        parent.num_nodes += child.num_nodes
        child.parent = parent
        if child.anchor_ref is not None:
            if parent.anchor_ref is not None:
                raise FusionError("Cannot merge two groups that both hold an anchor op")
            parent.anchor_ref = child.anchor_ref
            parent.pattern = _combine_groups(child.pattern, parent.pattern)

    def _commit_fuse(self, src, sink):
        """Merge every node from ``src`` up to (not including) ``sink`` into sink's group."""
        if src is sink:
            raise FusionError("commit_fuse needs a source distinct from its sink")
        target = self.groups[sink.index]
        seen = set()
        stack = [src]
        while stack:
            node = stack.pop()
            if node is sink or node.index in seen:
                continue
            seen.add(node.index)
            self._merge_from_to(self.groups[node.index], target)
            stack.extend(e.node for e in reversed(node.outputs))

    def _count_fused_nodes_with_new_child(self, child, dom_parent, limit) -> int:
        """Size of dom_parent's group once ``child`` and everything between them joins it,
        counted up to just past ``limit``: the walk stops there. Where lanes of ops mix
        until the very end (a 5,000-node lattice), a node's post-dominator is the last op,
        and a full walk per node made fusion quadratic (67 s at 5,000 nodes).
        """
        total = self.groups[dom_parent.index].find_root().num_nodes
        seen = set()
        stack = [child]
        while stack and total <= limit:
            node = stack.pop()
            if node is dom_parent or node.index in seen:
                continue
            seen.add(node.index)
            total += self.groups[node.index].num_nodes
            stack.extend(e.node for e in node.outputs)
        return total

    # -- the algorithm ---------------------------------------------------------------------
    def _run_fuse(self, graph, tree, phase):
        groups = self.groups
        for nid, graph_node in enumerate(graph.post_dfs_order):
            dom_node = tree[nid]
            group_node = groups[nid]
            if group_node.pattern == OPAQUE or dom_node.parent is None:
                continue
            if graph_node.extern_ref:
                raise FusionError("an extern node cannot have a post-dominator")
            dom_gnode = dom_node.parent.gnode
            dom_parent_group = groups[dom_gnode.index]
            if self._count_fused_nodes_with_new_child(graph_node, dom_gnode,
                                                      self.max_fuse_depth) \
                    > self.max_fuse_depth:
                continue

            if phase == 2:
                # Fuse injective ops into an intermediate tuple that was itself fused into
                # later injective ops (concatenate fed by several branches).
                if group_node.pattern > INJECTIVE:
                    continue
                dom_root_group = dom_parent_group.find_root()
                if dom_root_group.pattern == TUPLE:
                    continue
                if dom_parent_group.pattern == TUPLE and dom_root_group.pattern <= INJECTIVE:
                    # The check keeps two intermediate tuples apart (inception blocks).
                    if self._check_path(graph_node, dom_gnode, _fcond_injective):
                        self._commit_fuse(graph_node, dom_gnode)
                continue

            if group_node.find_root() is dom_parent_group.find_root():
                continue  # already fused into the post-dominator
            if dom_parent_group.pattern == TUPLE:
                continue  # phases 0 and 1 never fuse into a tuple
            if group_node.pattern == OUT_ELEMWISE_FUSABLE:
                if phase != 0:
                    continue
                # conv2d-like anchor: take an elementwise consumer chain, if every op on the
                # way is at most broadcast.
                if dom_node.pattern == ELEMWISE and self._check_path(
                        graph_node, dom_gnode, _fcond_broadcast):
                    self._commit_fuse(graph_node, dom_gnode)
            elif group_node.pattern <= BROADCAST:
                if (dom_node.pattern <= INJECTIVE or dom_node.pattern == COMM_REDUCE) and \
                        self._check_path(graph_node, dom_gnode, _fcond_into_anchor):
                    self._commit_fuse(graph_node, dom_gnode)
            elif group_node.pattern in (INJECTIVE, TUPLE):
                # Injective fusion waits for phase 1 so that anchors finish fusing first.
                if phase == 1 and self._check_path(graph_node, dom_gnode, _fcond_injective):
                    self._commit_fuse(graph_node, dom_gnode)
            # COMM_REDUCE sources never fuse forward: a reduction ends its group.


def partition(expr, opt_level: int, max_fuse_depth: int = MAX_FUSED_OPS):
    """Convenience: ``(graph, groups)`` for a typed expression."""
    graph = IndexedForwardGraph.create(expr)
    groups = GraphPartitioner(opt_level, max_fuse_depth).partition(graph)
    return graph, groups


__all__ = ["IndexedForwardGraph", "GraphNode", "Edge", "DomNode", "post_dominator_tree",
           "Group", "GraphPartitioner", "partition", "FusionError", "MAX_FUSED_OPS"]
