"""Acting on matches: ``rewrite`` (callbacks replace matches) and ``partition`` (matches become
calls of functions), both built on TVM's ``PatternGrouper``.

The grouper walks the graph from its output and records each match as a *group*: the root node,
the inputs (what the pattern's leaves matched, minus operators, embedded constants and the
insides of dominator paths and function patterns), and the function holding the matched
subgraph. A match overlapping an earlier group, or whose inner values are used outside it
(unless the root post-dominates that use), is dropped::

    class SubToAdd(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.a, self.b = wildcard(), wildcard()
            self.pattern = is_op("subtract")(self.a, self.b)

        def callback(self, pre, post, node_map):
            return node_map[self.a][0] + relay.negative(node_map[self.b][0])

    out = rewrite(SubToAdd(), expr)
    fused = is_op("nn.relu")(is_op("add")(wildcard(), wildcard())).partition(out)

A callback is also a rule of the engine every IR shares (``irlab.ir.rewrite``): its name is its
class's, its index keys the operators its pattern's root calls, ``match`` matches the pattern
at one node and ``build`` calls ``callback`` (a callback returning ``post`` rewrote nothing).
So the same callbacks run here, where the grouper finds the matches, and in a per-node
``RuleDriver`` (SimplifyExpr's rules are such callbacks). ``rewrite`` repeats its passes with
the engine's ``rewrite_to_fixpoint``.
"""

from __future__ import annotations

import warnings

from irlab.errors import IrlabError
from irlab.ir.expr import GlobalVar, RelayExpr
from irlab.ir.module import IRModule
from irlab.ir.op import Op
from irlab.ir.rewrite import RewriteRule, rewrite_to_fixpoint
from irlab.ir.structural import structural_equal
from irlab.relay.dataflow_pattern.graph import IndexedGraph
from irlab.relay.dataflow_pattern.matcher import DFPatternMatcher
from irlab.relay.dataflow_pattern.pattern import (
    AltPattern, AttrPattern, CallPattern, ConstantPattern, DataTypePattern, DFPattern,
    DominatorPattern, ExprPattern, FunctionPattern, IfPattern, LetPattern, ShapePattern,
    TupleGetItemPattern, TuplePattern, TypePattern)
from irlab.relay.dataflow_pattern.post_order import PostOrderRewriter
from irlab.relay.expr import Call, Constant, If, Let, Tuple, TupleGetItem, Var
from irlab.relay.expr_functor import post_order
from irlab.relay.function import Function

PARTITIONED_FROM_PATTERN = "PartitionedFromPattern"
_MAX_REWRITE_PASSES = 100


# ---------------------------------------------------------------------------------------------
# the pattern graph
def pattern_inputs(p) -> list:
    """The sub-patterns of ``p`` in TVM's visiting order."""
    if isinstance(p, AltPattern):
        return [p.left, p.right]
    if isinstance(p, (AttrPattern, DataTypePattern, ShapePattern, TypePattern)):
        return [p.pattern]
    if isinstance(p, CallPattern):
        return [p.op, *(p.args or ())]
    if isinstance(p, DominatorPattern):
        return [p.parent, p.path, p.child]
    if isinstance(p, FunctionPattern):
        return [*(p.params or ()), p.body]
    if isinstance(p, TupleGetItemPattern):
        return [p.tuple]
    if isinstance(p, TuplePattern):
        return list(p.fields or ())
    if isinstance(p, IfPattern):
        return [p.cond, p.true_branch, p.false_branch]
    if isinstance(p, LetPattern):
        return [p.var, p.value, p.body]
    return []


def pattern_post_order(pattern) -> list:
    """Every node of a pattern once, sub-patterns first."""
    order, seen, stack = [], set(), [(pattern, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        for child in reversed(pattern_inputs(node)):
            if child not in seen:
                stack.append((child, False))
    return order


# ---------------------------------------------------------------------------------------------
# groups
class Group:
    """One match: ``root``, its ``args`` (the function's inputs), ``function`` and ``name``."""

    __slots__ = ("gid", "root", "args", "function", "name", "matched_nodes")

    def __init__(self, gid, root, args, function, name, matched_nodes):
        self.gid = gid
        self.root = root
        self.args = args
        self.function = function
        self.name = name
        self.matched_nodes = matched_nodes

    def __repr__(self):
        return f"<Group {self.gid} {self.name!r}>"


def _rebuild(node, lookup):
    """``node`` with its children replaced by ``lookup(child)`` (itself when none changes)."""
    if isinstance(node, Call):
        op, args = lookup(node.op), [lookup(a) for a in node.args]
        if op is node.op and all(a is b for a, b in zip(args, node.args)):
            return node
        return Call(op, args, node.attrs, node.type_args, node.span)
    if isinstance(node, Tuple):
        fields = [lookup(f) for f in node.fields]
        if all(a is b for a, b in zip(fields, node.fields)):
            return node
        return Tuple(fields, node.span)
    if isinstance(node, TupleGetItem):
        value = lookup(node.tuple_value)
        return node if value is node.tuple_value else TupleGetItem(value, node.index, node.span)
    if isinstance(node, Let):
        var, value, body = lookup(node.var), lookup(node.value), lookup(node.body)
        if var is node.var and value is node.value and body is node.body:
            return node
        return Let(var, value, body, node.span)
    if isinstance(node, If):
        parts = (lookup(node.cond), lookup(node.true_branch), lookup(node.false_branch))
        if all(a is b for a, b in zip(parts, (node.cond, node.true_branch, node.false_branch))):
            return node
        return If(*parts, node.span)
    if isinstance(node, Function):
        params, body = [lookup(p) for p in node.params], lookup(node.body)
        if body is node.body and all(a is b for a, b in zip(params, node.params)):
            return node
        return Function(params, body, node.ret_type, node.type_params, node.attrs, node.span)
    return node


def extract_match(root, inputs: dict):
    """Copy the subgraph under ``root``, replacing ``inputs`` (expr -> Var) by their variables.

    Returns ``(body, memo, name)``: ``memo`` maps every copied original node (inputs excluded)
    to its copy and ``name`` lists the node kinds in post-order (TVM's MatchExtractor), e.g.
    ``"nn.conv2d_nn.bias_add_nn.relu_"``.
    """
    memo: dict = {}
    parts: list = []

    def lookup(e):
        found = inputs.get(e)
        return found if found is not None else memo.get(e, e)

    for node in post_order(root, stop=set(inputs)):
        if node in inputs:
            continue
        memo[node] = _rebuild(node, lookup)
        if isinstance(node, Call):
            parts.append(f"{node.op.name}_" if isinstance(node.op, Op) else "Call_")
        elif isinstance(node, Tuple):
            parts.append("Tuple_")
        elif isinstance(node, Function):
            parts.append("Function")
        elif isinstance(node, Let):
            parts.append("Let_")
        elif isinstance(node, If):
            parts.append("If_")
        elif isinstance(node, TupleGetItem):
            parts.append(f"TupleGetItem{node.index}_")
    return lookup(root), memo, "".join(parts)


class PatternGrouper:
    """Finds the non-overlapping matches of a pattern in an expression (TVM's grouper)."""

    def __init__(self):
        self.groups: dict = {}  # gid -> Group, in creation order
        self.gid_assignments: dict = {}  # expr -> gid of the group containing it
        self._gid = 0
        self._graph_number = 0

    def group_matches(self, pattern, expr) -> dict:
        self.groups, self.gid_assignments = {}, {}
        self.pattern = pattern
        self.pattern_order = pattern_post_order(pattern)
        self.graph = IndexedGraph(expr)
        self.matcher = DFPatternMatcher(expr, self.graph)
        pre_partitioned = set()
        # From the output backwards, so a pattern takes the largest match it roots.
        for node in reversed(self.graph.nodes):
            current = node.ref
            if current in self.gid_assignments:
                continue
            if (isinstance(current, Function) and current.attrs is not None
                    and PARTITIONED_FROM_PATTERN in current.attrs):
                pre_partitioned.add(current)
                pre_partitioned.update(post_order(current.body))
            if current not in pre_partitioned and self.matcher.match(pattern, current):
                self._create_group(current)
        return self.groups

    def _fuzzy_matches(self, node_map) -> set:
        """Nodes that are never inputs: dominator parents/paths and function-pattern bodies."""
        fuzzy = set()
        for p in self.pattern_order:
            if isinstance(p, DominatorPattern):
                for q in (p.parent, p.path):
                    fuzzy.update(node_map.get(q, ()))
            if isinstance(p, FunctionPattern):
                for func in node_map.get(p, ()):
                    fuzzy.update(post_order(func.body))
        return fuzzy

    def _create_group(self, expr):
        node_map = {p: list(exprs) for p, exprs in self.matcher.memo.items()}
        fuzzy = self._fuzzy_matches(node_map)
        inputs: dict = {}
        args: list = []
        params: list = []

        def make_input(e, p):
            if (e in fuzzy or isinstance(e, (Op, Function)) or self._embed_const(e, p)
                    or e in inputs):
                return
            var = Var(f"FunctionVar_{self._graph_number}_{len(params)}")
            inputs[e] = var
            args.append(e)
            params.append(var)

        for p in self.pattern_order:
            if isinstance(p, TuplePattern) and p.fields is None:
                for m in node_map.get(p, ()):
                    for field in m.fields:
                        make_input(field, p)
            elif isinstance(p, CallPattern) and p.args is None:
                for m in node_map.get(p, ()):
                    for arg in m.args:
                        make_input(arg, p)
            elif not pattern_inputs(p):
                for m in node_map.get(p, ()):
                    make_input(m, p)
        self._graph_number += 1

        body, memo, name = extract_match(expr, inputs)
        # Reject a match that overlaps an earlier group, or whose inner values are used outside
        # it on a path that does not come back through the root (fusing would make a cycle).
        root = self.graph.node(expr)
        for original, copied in memo.items():
            if isinstance(original, (Op, Function, Constant)):
                continue
            if original in self.gid_assignments:
                return
            if copied is not body:
                for user in self.graph.node(original).outputs:
                    if user.ref not in memo and not root.dominates(user):
                        return
        self._gid += 1
        for original in memo:
            self.gid_assignments[original] = self._gid
        self.groups[self._gid] = Group(self._gid, expr, args, Function(params, body), name,
                                       node_map)

    def _embed_const(self, expr, p) -> bool:
        """Constants matched by ``is_constant()`` or a constant ``is_expr`` stay inside."""
        if not isinstance(expr, Constant):
            return False
        if isinstance(p, ConstantPattern):
            return True
        if isinstance(p, ExprPattern):
            return isinstance(p.expr, Constant)
        if isinstance(p, AltPattern):
            side = p.left if self.matcher.match(p.left, expr) else p.right
            return self._embed_const(expr, side)
        return False


# ---------------------------------------------------------------------------------------------
# rewrite
def pattern_keys(pattern):
    """The operator names a call matching ``pattern`` can call (None: any call, or not only
    calls): a rule's index keys."""
    if isinstance(pattern, AltPattern):
        left, right = pattern_keys(pattern.left), pattern_keys(pattern.right)
        return None if left is None or right is None else left + right
    if isinstance(pattern, CallPattern):
        return _op_names(pattern.op)
    return None


def _op_names(pattern):
    if isinstance(pattern, ExprPattern) and isinstance(pattern.expr, Op):
        return (pattern.expr.name,)
    if isinstance(pattern, AltPattern):
        left, right = _op_names(pattern.left), _op_names(pattern.right)
        return None if left is None or right is None else left + right
    return None


_UNSET = object()


class DFPatternCallback(RewriteRule):
    """Subclass it: set ``self.pattern`` and define ``callback(pre, post, node_map)``.

    ``pre`` is the matched expression, ``post`` the same with its inputs already rewritten and
    ``node_map`` maps each pattern node to the (rewritten) expressions it matched; returning
    ``post`` leaves it as it is. ``require_type`` types the expression before matching;
    ``rewrite_once`` stops applying the callback after the first pass that changed something.
    As a rule (``RewriteRule``), its name is its class's and its keys come from the pattern.
    """

    def __init__(self, require_type=False, rewrite_once=False):
        self.name = type(self).__name__  # keys: a property of the pattern
        self.pattern = None
        self.require_type = require_type
        self.rewrite_once = rewrite_once

    def rewrite(self, expr):
        return rewrite(self, expr)

    def callback(self, pre, post, node_map):
        raise NotImplementedError(f"{type(self).__name__} must define callback(pre, post, "
                                  f"node_map)")

    @property
    def keys(self):
        """The operators the pattern's root calls (None: any node), unless set."""
        keys = self.__dict__.get("_keys", _UNSET)
        return pattern_keys(self.pattern) if keys is _UNSET else keys

    @keys.setter
    def keys(self, value):  # a subclass may set its own (or use the name for its own ends)
        self.__dict__["_keys"] = value

    def match(self, node):
        """The pattern matched at ``node`` alone (no grouping): ``node_map``, or None."""
        matcher = DFPatternMatcher(node)
        if not matcher.match(self.pattern, node):
            return None
        return {p: list(exprs) for p, exprs in matcher.memo.items()}

    def build(self, node, node_map, context):
        """``callback(node, node, node_map)`` (the node's inputs are already rewritten), or
        None when it returned ``node``."""
        result = self.callback(node, node, node_map)
        return None if result is node else result


class _CallbackRewriter(PostOrderRewriter):
    def __init__(self, callback, grouper, fired):
        super().__init__()
        self.callback = callback
        self.fired = fired
        self.groups = grouper.groups
        self.gids = grouper.gid_assignments

    def rewrite(self, pre, post):
        gid = self.gids.get(pre)
        if gid is None or self.groups[gid].root is not pre:
            return post
        memo = self.memo_map
        node_map = {p: [post if e is pre else memo.get(e, e) for e in exprs]
                    for p, exprs in self.groups[gid].matched_nodes.items()}
        result = self.callback.callback(pre, post, node_map)
        if not isinstance(result, RelayExpr):
            raise IrlabError(f"{type(self.callback).__name__}.callback returned "
                             f"{type(result).__name__}, not a Relay expression")
        if self.fired is not None and result is not post:
            self.fired(self.callback.name)
        return result


def _infer_with_module(expr, mod):
    from irlab.relay.ty_infer import infer_expr

    return infer_expr(expr, mod)


def _converged(last, post) -> bool:
    return post is last or structural_equal(last, post, map_free_vars=True)


def rewrite(callbacks, expr, mod: IRModule | None = None, fired=None):
    """Apply the callbacks until the expression stops changing (at most 100 passes).

    ``fired`` (optional, e.g. an ``irlab.ir.rewrite.RuleCounts``) is called with a callback's
    name each time it replaces a match.
    """
    if isinstance(callbacks, DFPatternCallback):
        callbacks = [callbacks]
    callbacks = list(callbacks)
    for cb in callbacks:
        if not isinstance(cb, DFPatternCallback):
            raise IrlabError(f"rewrite takes DFPatternCallbacks, got {type(cb).__name__}")
        if not isinstance(cb.pattern, DFPattern):
            raise IrlabError(f"{type(cb).__name__}.pattern must be set to a pattern")
    if not isinstance(expr, RelayExpr) or isinstance(expr, (Op, GlobalVar)):
        raise IrlabError(f"rewrite takes a Relay expression, got {type(expr).__name__}")
    mod = mod if mod is not None else IRModule()
    done = set()

    def one_pass(post):
        """Each callback not done once; the cost is the number of callbacks applied."""
        last, count = post, 0
        for cb in callbacks:
            if cb in done:
                continue
            before = post
            post = _apply_callback(cb, post, mod, fired)
            count += 1
            if cb.rewrite_once and not _converged(before, post):
                done.add(cb)
        return post, not _converged(last, post), count

    return rewrite_to_fixpoint(one_pass, expr, _MAX_REWRITE_PASSES, _too_many_passes)


def _apply_callback(cb, post, mod, fired):
    """One pass of ``cb``: its non-overlapping matches in ``post`` replaced."""
    if cb.require_type:
        post = _infer_with_module(post, mod)
    grouper = PatternGrouper()
    grouper.group_matches(cb.pattern, post)
    if grouper.groups:
        post = _CallbackRewriter(cb, grouper, fired).visit(post)
    return post


def _too_many_passes(post):
    raise IrlabError(f"Observed {_MAX_REWRITE_PASSES} rewrite passes, possible conflicting "
                     f"passes?")


# ---------------------------------------------------------------------------------------------
# partition
class _Partitioner(PostOrderRewriter):
    def __init__(self, grouper, attrs, check):
        super().__init__()
        self.groups = grouper.groups
        self.gids = grouper.gid_assignments
        self.attrs = attrs
        self.check = check

    def rewrite(self, pre, post):
        gid = self.gids.get(pre)
        if gid is None or self.groups[gid].root is not pre or not self.check(pre):
            return post
        group = self.groups[gid]
        args = [self.memo_map.get(a, a) for a in group.args]
        func = group.function.with_attr(PARTITIONED_FROM_PATTERN, group.name)
        for key, value in self.attrs.items():
            func = func.with_attr(key, value)
        return Call(func, args)


def partition(pattern, expr, attrs=None, check=lambda x: True):
    """Replace each match of ``pattern`` by ``fn(inputs, PartitionedFromPattern=..)(inputs)``.

    ``attrs`` are added to every new function; ``check(matched_expr)`` may veto a match.
    """
    if not isinstance(pattern, DFPattern):
        raise IrlabError(f"partition takes a pattern, got {type(pattern).__name__}")
    if attrs is not None and not isinstance(attrs, dict):
        raise IrlabError(f"partition attrs must be a dict, got {type(attrs).__name__}")
    if isinstance(pattern, FunctionPattern):
        warnings.warn("Partitioning a Function that isn't called doesn't make sense, skipping")
        return expr
    grouper = PatternGrouper()
    grouper.group_matches(pattern, expr)
    if not grouper.groups:
        return expr
    return _Partitioner(grouper, dict(attrs or {}), check).visit(expr)


__all__ = ["DFPatternCallback", "pattern_keys", "rewrite", "partition", "PatternGrouper", "Group",
           "extract_match", "pattern_post_order", "PARTITIONED_FROM_PATTERN"]
