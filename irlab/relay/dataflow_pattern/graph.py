"""An indexed view of an expression graph: users of each node and its post-dominator tree.

The dominator pattern and the partitioner need to know who uses a node (``outputs``) and
which node all uses of a node flow into (the immediate post-dominator, ``dominator_parent``)::

    graph = IndexedGraph(expr)
    node = graph.node(conv)                 # -> IndexedGraph.Node
    graph.node(expr).dominates(node)        # does every path from conv reach expr?

Nodes are listed in post-order (children first), function bodies included. The root is the
only node without a post-dominator.
"""

from __future__ import annotations

from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.relay.expr import Call, Constant, If, Let, Tuple, TupleGetItem, Var
from irlab.relay.expr_functor import post_order
from irlab.relay.function import Function


def expr_inputs(expr) -> list:
    """The dataflow inputs of a node, in TVM's IndexedGraph order (Let: value, var, body)."""
    if isinstance(expr, Call):
        return [expr.op, *expr.args]
    if isinstance(expr, Tuple):
        return list(expr.fields)
    if isinstance(expr, TupleGetItem):
        return [expr.tuple_value]
    if isinstance(expr, Function):
        return [*expr.params, expr.body]
    if isinstance(expr, Let):
        return [expr.value, expr.var, expr.body]
    if isinstance(expr, If):
        return [expr.cond, expr.true_branch, expr.false_branch]
    if isinstance(expr, (Var, Constant, Op, GlobalVar)):
        return []
    return []


class IndexedGraph:
    """Post-order nodes of an expression with their inputs, outputs and post-dominator tree."""

    class Node:
        __slots__ = ("ref", "index", "inputs", "outputs", "depth", "dominator_parent",
                     "dominator_children")

        def __init__(self, ref, index):
            self.ref = ref
            self.index = index
            self.inputs: list = []
            self.outputs: list = []
            self.depth = 0
            self.dominator_parent = None
            self.dominator_children: list = []

        def dominates(self, other) -> bool:
            """Whether ``other`` is a (strict) descendant of this node in the dominator tree."""
            stack = [self]
            seen = set()
            while stack:
                current = stack.pop()
                for child in current.dominator_children:
                    if child in seen:
                        continue
                    if child is other:
                        return True
                    seen.add(child)
                    stack.append(child)
            return False

        def __repr__(self):
            return f"<IndexedGraph.Node {self.index} {type(self.ref).__name__}>"

    def __init__(self, root, children=expr_inputs, order=None):
        self.root = root
        if order is None:
            order = post_order(root)
        self.nodes = [IndexedGraph.Node(ref, i) for i, ref in enumerate(order)]
        self._by_ref = {n.ref: n for n in self.nodes}
        for node in self.nodes:
            for child in children(node.ref):
                child_node = self._by_ref[child]
                child_node.outputs.append(node)
                node.inputs.append(child_node)
        self._post_dominators()

    def node(self, ref) -> "IndexedGraph.Node":
        return self._by_ref[ref]

    def __contains__(self, ref):
        return ref in self._by_ref

    def __len__(self):
        return len(self.nodes)

    def _post_dominators(self):
        # Users come after their inputs in post-order, so walking backwards sees every user's
        # dominator depth before the node itself needs it.
        root = self._by_ref[self.root]
        for node in reversed(self.nodes):
            if node is root:
                node.depth, node.dominator_parent = 1, None
                continue
            parent = self._common_ancestor(node.outputs)
            node.depth = parent.depth + 1 if parent is not None else 1
            node.dominator_parent = parent
            if parent is not None:
                parent.dominator_children.append(node)

    @staticmethod
    def _common_ancestor(nodes):
        if not nodes:
            return None
        lhs = nodes[0]
        for rhs in nodes[1:]:
            while lhs is not rhs:
                if lhs is None or rhs is None:
                    return None
                if lhs.depth < rhs.depth:
                    rhs = rhs.dominator_parent
                elif lhs.depth > rhs.depth:
                    lhs = lhs.dominator_parent
                else:
                    lhs, rhs = lhs.dominator_parent, rhs.dominator_parent
        return lhs


__all__ = ["IndexedGraph", "expr_inputs"]
