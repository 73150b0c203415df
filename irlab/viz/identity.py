"""Stable node ids across the versions of a program (one version per pass).

A node keeps its id from version to version:
1. the same object (passes reuse unchanged sub-expressions) has the same id;
2. a new object takes the id of the predecessor it replaces: an unclaimed node of the
   previous version with the same kind, operator/name and the same input ids; failing that,
   the same kind/operator and the same first input; failing that, a variable of the same name;
3. anything else gets a fresh id.
So a pass that rewrites ``conv2d`` attrs keeps the conv's id (it shows as *changed*), while a
fused-away node disappears (*removed*) and a node a pass creates appears (*added*).
"""

from __future__ import annotations

from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.relay.expr import Call, Constant, Var
from irlab.relay.expr_functor import expr_children, post_order
from irlab.relay.function import Function


def node_kind(node) -> str:
    return type(node).__name__


def node_name(node) -> str:
    """The operator name of a call, the name of a variable, else the kind."""
    if isinstance(node, Call):
        op = node.op
        if isinstance(op, Op):
            return op.name
        if isinstance(op, GlobalVar):
            return "@" + op.name_hint
        if isinstance(op, Function):
            return "fn" if op.attrs is None else "fn:" + str(op.attrs.get("Composite", ""))
        return "call"
    if isinstance(node, Var):
        return node.name_hint
    if isinstance(node, GlobalVar):
        return "@" + node.name_hint
    if isinstance(node, Constant):
        return f"const{node.data.shape}"
    return node_kind(node)


class NodeIds:
    """Assigns ids (``n0``, ``n1``, ...) to the nodes of successive program versions."""

    def __init__(self):
        self._by_object: dict = {}
        self._counter = 0
        self._previous: dict = {}  # id -> (kind, name, child ids) of the last version

    def _fresh(self) -> str:
        ident = f"n{self._counter}"
        self._counter += 1
        return ident

    def assign(self, roots) -> dict:
        """Ids for every node reachable from ``roots`` (expressions); returns node -> id."""
        order = []
        seen = set()
        for root in roots:
            for node in post_order(root):
                if node not in seen and not isinstance(node, Op):
                    seen.add(node)
                    order.append(node)
        claimed = set()
        ids = {}
        exact, by_first, by_name = self._indexes()
        for node in order:
            children = tuple(ids.get(c) for c in expr_children(node) if not isinstance(c, Op))
            ident = self._by_object.get(node)
            if ident is not None and ident in claimed:
                ident = None
            if ident is None:
                kind, name = node_kind(node), node_name(node)
                for table, key in ((exact, (kind, name, children)),
                                   (by_first, (kind, name, children[:1])),
                                   (by_name, (kind, name) if isinstance(node, Var) else None)):
                    if key is None:
                        continue
                    ident = _pop_unclaimed(table.get(key), claimed)
                    if ident is not None:
                        break
            if ident is None:
                ident = self._fresh()
            claimed.add(ident)
            ids[node] = ident
            self._by_object[node] = ident
        self._previous = {ident: (node_kind(n), node_name(n),
                                  tuple(ids.get(c) for c in expr_children(n)
                                        if not isinstance(c, Op)))
                          for n, ident in ids.items()}
        return ids

    def _indexes(self):
        exact, by_first, by_name = {}, {}, {}
        for ident, (kind, name, children) in self._previous.items():
            exact.setdefault((kind, name, children), []).append(ident)
            by_first.setdefault((kind, name, children[:1]), []).append(ident)
            by_name.setdefault((kind, name), []).append(ident)
        return exact, by_first, by_name


def _pop_unclaimed(candidates, claimed):
    if not candidates:
        return None
    for i, ident in enumerate(candidates):
        if ident not in claimed:
            del candidates[i]
            return ident
    return None
