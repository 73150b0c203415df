"""Stable node ids across the versions of a program (one version per pass).

A node keeps its id from version to version:
1. the same object (passes reuse unchanged sub-expressions) has the same id;
2. a new object takes the id of the predecessor it replaces: an unclaimed node of the
   previous version with the same kind, operator/name and the same input ids; failing that,
   the same kind/operator and the same first input; failing that, a variable of the same name;
   failing that, the same kind/operator whose inputs are the same except where this node's
   input is new (a consumer of a rewritten operand);
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
        self._keys: dict = {}  # structural key -> id (TIR graphs: see ``keyed``)

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
        # A function called in place (FuseOps' Primitive functions) is drawn inline: inside
        # it a parameter stands for the call's argument, and the call for the function's
        # result. Inputs are compared through these aliases, so an op moved into a fused
        # function keeps its inputs, hence its id.
        alias = {}
        for node in order:
            if isinstance(node, Call) and isinstance(node.op, Function):
                alias.update(zip(node.op.params, node.args))
                alias[node] = node.op.body

        def resolve(node):
            while node in alias:
                node = alias[node]
            return node

        order = _dependency_order(order, resolve)
        claimed = set()
        fresh = set()  # ids new in this version
        ids = {}
        exact, by_first, by_name = self._indexes()

        def child_ids(node):
            return tuple(ids.get(resolve(c)) for c in expr_children(node)
                         if not isinstance(c, Op))

        for node in order:
            children = child_ids(node)
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
                if ident is None and fresh.intersection(children):
                    ident = self._rewritten(by_name.get((kind, name)), children, fresh, claimed)
            if ident is None:
                ident = self._fresh()
                fresh.add(ident)
            claimed.add(ident)
            ids[node] = ident
            self._by_object[node] = ident
        self._previous = {ident: (node_kind(n), node_name(n), child_ids(n))
                          for n, ident in ids.items()}
        return ids

    def keyed(self, key, claimed, fallbacks=(), ident=None) -> str:
        """The id of a node known by a structural ``key`` rather than by object (TIR passes
        rebuild every node: ``viz.tir_graph`` keys buffers, blocks and stores by name and
        rank). A new key takes the id of the first ``fallbacks`` key not in ``claimed`` (the
        ids this version already uses), else a fresh one; ``ident`` only records ``key``."""
        if ident is None:
            for k in (key, *fallbacks):
                ident = self._keys.get(k)
                if ident is not None and ident not in claimed:
                    break
            else:
                ident = self._fresh()
        self._keys[key] = ident
        claimed.add(ident)
        return ident

    def _rewritten(self, candidates, children, fresh, claimed):
        """An unclaimed predecessor with the same inputs except where this node's input is
        new (and the predecessor's is gone): the consumer of an operand a pass rewrote, so a
        rewrite does not turn everything below it into new nodes."""
        for i, ident in enumerate(candidates or ()):
            if ident in claimed:
                continue
            before = self._previous[ident][2]
            if len(before) == len(children) and all(
                    (new in fresh and old not in claimed) if new in fresh else new == old
                    for new, old in zip(children, before)):
                del candidates[i]
                return ident
        return None

    def _indexes(self):
        exact, by_first, by_name = {}, {}, {}
        for ident, (kind, name, children) in self._previous.items():
            exact.setdefault((kind, name, children), []).append(ident)
            by_first.setdefault((kind, name, children[:1]), []).append(ident)
            by_name.setdefault((kind, name), []).append(ident)
        return exact, by_first, by_name


def _dependency_order(order, resolve) -> list:
    """``order`` (a post-order) rearranged so that every node comes after the nodes its
    inputs resolve to (a fused function's body after the call's arguments); ties keep the
    post-order."""
    import heapq

    position = {node: i for i, node in enumerate(order)}
    users: dict = {}
    waiting = {}
    for node in order:
        deps = {resolve(c) for c in expr_children(node) if not isinstance(c, Op)}
        deps = {d for d in deps if d in position and d is not node}
        waiting[node] = len(deps)
        for dep in deps:
            users.setdefault(dep, []).append(node)
    ready = [(position[n], n) for n in order if waiting[n] == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        _, node = heapq.heappop(ready)
        out.append(node)
        for user in users.get(node, ()):
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, (position[user], user))
    if len(out) < len(order):  # a cycle through the aliases (not a Relay program): as given
        return order
    return out


def _pop_unclaimed(candidates, claimed):
    if not candidates:
        return None
    for i, ident in enumerate(candidates):
        if ident not in claimed:
            del candidates[i]
            return ident
    return None
