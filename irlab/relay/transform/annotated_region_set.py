"""Regions of a program annotated with ``compiler_begin`` / ``compiler_end`` (TVM's
``relay.analysis.AnnotatedRegionSet``), shared by MergeCompilerRegions and PartitionGraph.

Every ``compiler_begin`` opens a region; the nodes computed from a region's values join it, two
regions meeting at a node merge, and each ``compiler_end`` is an output::

    x = relay.var("x", shape=(2, 2))
    b1, b2 = compiler_begin(x, "t"), compiler_begin(x, "t")
    end = compiler_end(relay.add(b1, b2), "t")
    regions = AnnotatedRegionSet.create(relay.Function([x], end))
    region = regions.get_region(end)        # ins [b1, b2], outs [end], target "t", id 0

Region ids count the ``compiler_begin`` annotations in post-order (a merged region keeps the
id of the region it merged into), so ids need not be consecutive.

Each region also knows its lexical *scope* (see ``node_scopes``): the body of the function or
let holding all its nodes. A region lives in one scope; ``MergeCompilerRegions`` never merges
two regions of different scopes, since the call of the merged region would then read a
closure's parameter (or a let variable) while being used where it is not bound.
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.op import Op
from irlab.relay.expr import Call, If, Let, Tuple, TupleGetItem
from irlab.relay.expr_functor import expr_children, post_order
from irlab.relay.function import Function
from irlab.relay.op.annotation import CompilerAttrs

DEFAULT_TARGET = "default"
COMPILER_BEGIN = Op.get("annotation.compiler_begin")
COMPILER_END = Op.get("annotation.compiler_end")


def is_compiler_begin(expr) -> bool:
    return isinstance(expr, Call) and expr.op is COMPILER_BEGIN


def is_compiler_end(expr) -> bool:
    return isinstance(expr, Call) and expr.op is COMPILER_END


def is_region_annotation(expr) -> bool:
    """A call of an operator carrying ``CompilerAttrs`` (a begin or an end annotation)."""
    return (isinstance(expr, Call) and isinstance(expr.op, Op)
            and isinstance(expr.attrs, CompilerAttrs))


class MixedModeVisitor:
    """Visits every node once: dataflow nodes (calls, tuples, getitems) iteratively in
    post-order, other nodes through ``visit_node``, which visits their children itself (TVM's
    ``MixedModeVisitor``: a scope is handled before its insides)."""

    def __init__(self):
        self.visited = set()

    def visit(self, expr):
        if expr in self.visited:
            return
        for node in post_order(expr, dataflow_only=True, stop=self.visited):
            if node not in self.visited:
                self.visited.add(node)
                self.visit_node(node)

    def visit_node(self, node):
        self.visit_children(node)

    def visit_children(self, node):
        if isinstance(node, Let):
            for child in (node.var, node.value, node.body):
                self.visit(child)
        elif isinstance(node, If):
            for child in (node.cond, node.true_branch, node.false_branch):
                self.visit(child)
        elif isinstance(node, Function):
            for child in (*node.params, node.body):
                self.visit(child)


class Scope:
    """A lexical scope: the body of a function, or of a let (where its variable is bound),
    nested in ``parent`` (``None`` for the outermost one)."""

    __slots__ = ("parent", "depth")

    def __init__(self, parent=None):
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1

    def __repr__(self):
        return f"<Scope depth {self.depth}>"


def common_scope(a, b):
    """The innermost scope holding both ``a`` and ``b`` (either may be ``None``)."""
    if a is None or b is None:
        return b if a is None else a
    while a.depth > b.depth:
        a = a.parent
    while b.depth > a.depth:
        b = b.parent
    while a is not b:
        a, b = a.parent, b.parent
    return a


def _scoped_children(node, scope):
    """The children of ``node`` with the scope each is used in; a binder's variables are in
    the scope they are bound in."""
    if isinstance(node, Function):
        inner = Scope(scope)
        return [(param, inner) for param in node.params] + [(node.body, inner)]
    if isinstance(node, Let):
        inner = Scope(scope)
        return [(node.var, inner), (node.value, scope), (node.body, inner)]
    return [(child, scope) for child in expr_children(node)]


def node_scopes(expr) -> dict:
    """Each node of ``expr`` -> the innermost scope holding all its uses.

    In graph form a node may be used both by a closure and by the function around it; it then
    belongs to the enclosing function (where ``ToANormalForm`` would bind it), and the
    closure merely captures it. Users come before their operands in a reversed post-order, so
    one pass sees all of a node's uses before its own operands."""
    scopes = {expr: Scope()}
    for node in reversed(post_order(expr)):
        for child, child_scope in _scoped_children(node, scopes[node]):
            scopes[child] = common_scope(scopes.get(child), child_scope)
    return scopes


class AnnotatedRegion:
    """A region: its ``nodes``, ``ins`` (compiler_begin calls), ``outs`` (compiler_end) and
    ``scope`` (the innermost scope holding all its nodes)."""

    __slots__ = ("id", "target", "func_name", "nodes", "ins", "outs", "scope")

    def __init__(self, region_id, target, func_name):
        self.id = region_id
        self.target = target
        self.func_name = func_name
        self.nodes: set = set()
        self.ins: list = []
        self.outs: list = []
        self.scope = None

    def __repr__(self):
        return (f"<AnnotatedRegion {self.id} {self.target!r}: {len(self.nodes)} nodes, "
                f"{len(self.ins)} ins, {len(self.outs)} outs>")


class AnnotatedRegionSet:
    """The regions of an annotated expression (TVM's ``relay.analysis.AnnotatedRegionSet``)::

        regions = AnnotatedRegionSet.create(func)
        regions.get_region(call)        # -> AnnotatedRegion or None
    """

    def __init__(self, scopes=None):
        self.regions: list = []
        self._owner: dict = {}
        self._next_id = 0
        self._scopes = scopes if scopes is not None else {}  # node -> Scope (node_scopes)

    def __iter__(self):
        return iter(list(self.regions))

    def __len__(self):
        return len(self.regions)

    def get_region(self, expr):
        return self._owner.get(expr)

    def check_scopes(self):
        """Raise if a region computes nodes in two scopes (its outputs may be used deeper)."""
        for region in self.regions:
            for node in region.nodes:
                if ((isinstance(node, Call) and node.op is COMPILER_END)
                        or self._scopes.get(node, region.scope) is region.scope):
                    continue
                raise IrlabError(f"region {region.id} of {region.target!r} spans two scopes "
                                 f"(a closure or let body and the code around it), at:\n"
                                 f"{node}")

    def make_region(self, func_name, target) -> AnnotatedRegion:
        region = AnnotatedRegion(self._next_id, target, func_name)
        self._next_id += 1
        self.regions.append(region)
        return region

    def merge_regions(self, src, dest):
        """Move ``src`` into ``dest``; an output of one feeding an input of the other becomes
        an inner edge."""
        if src is dest:
            return
        dest.nodes |= src.nodes
        dest.scope = common_scope(dest.scope, src.scope)
        for node in src.nodes:
            self._owner[node] = dest
        dest.ins.extend(src.ins)
        dest.outs.extend(src.outs)
        inner = [i for i in dest.ins if i.args[0] in src.nodes]
        for begin in inner:
            dest.outs = [o for o in dest.outs if o is not begin.args[0]]
        dest.ins = [i for i in dest.ins if all(i is not b for b in inner)]
        self.regions.remove(src)

    def add_to_region(self, dest, expr):
        """Put ``expr`` in ``dest``; if it already is in a region, that region merges in."""
        src = self.get_region(expr)
        if src is not None:
            self.merge_regions(src, dest)
        else:
            self._claim(dest, expr)

    def _claim(self, region, expr):
        region.nodes.add(expr)
        self._owner[expr] = region
        region.scope = common_scope(region.scope, self._scopes.get(expr))

    @staticmethod
    def create(expr, begin_op=COMPILER_BEGIN, end_op=COMPILER_END, func_name=DEFAULT_TARGET):
        creator = _RegionSetCreator(begin_op, end_op, func_name, node_scopes(expr))
        creator.visit(expr)
        return creator.regions


class _RegionSetCreator(MixedModeVisitor):
    def __init__(self, begin_op, end_op, func_name, scopes):
        super().__init__()
        self.begin_op, self.end_op = begin_op, end_op
        self.func_name = func_name
        self.regions = AnnotatedRegionSet(scopes)

    def _add_to_arg_region(self, expr, args):
        region = None
        open_args = [a for a in args if not (isinstance(a, Call) and a.op is self.end_op)]
        for arg in open_args:
            region = self.regions.get_region(arg)
            if region is not None:
                break
        for arg in open_args:
            arg_region = self.regions.get_region(arg)
            if (region is None) != (arg_region is None):
                raise IrlabError(f"Arg regions are inconsistent: {expr}")
            if region is not None and region is not arg_region:
                self.regions.merge_regions(arg_region, region)
        if region is not None:
            self.regions.add_to_region(region, expr)

    def visit_node(self, node):
        if isinstance(node, Call):
            self._call(node)
        elif isinstance(node, Tuple):
            self._add_to_arg_region(node, node.fields)
        elif isinstance(node, TupleGetItem):
            self._add_to_arg_region(node, [node.tuple_value])
        elif isinstance(node, Let):
            # Scopes join their operands' region before their insides are visited (as TVM).
            self._add_to_arg_region(node, [node.var, node.value, node.body])
            self.visit_children(node)
        elif isinstance(node, If):
            self._add_to_arg_region(node, [node.cond, node.true_branch, node.false_branch])
            self.visit_children(node)
        else:
            self.visit_children(node)

    def _call(self, call):
        if not isinstance(call.op, Op) or not isinstance(call.attrs, CompilerAttrs):
            self._add_to_arg_region(call, call.args)
            return
        target = call.attrs.compiler
        if call.op is self.begin_op:
            region = self.regions.make_region(self.func_name, target)
            self.regions._claim(region, call)
            region.ins.append(call)
            return
        if call.op is not self.end_op:
            raise IrlabError(f"{call.op.name} carries compiler attrs but is not a region "
                             f"annotation")
        region = self.regions.get_region(call.args[0])
        if region is None:
            raise IrlabError(f"Cannot find the corresponding region for end annotation:\n"
                             f"{call}")
        if region.target != target:
            raise IrlabError(f"compiler_end for {target!r} closes a region of "
                             f"{region.target!r}: a compiler_begin is missing")
        self.regions._claim(region, call)
        region.outs.append(call)


__all__ = ["AnnotatedRegion", "AnnotatedRegionSet", "MixedModeVisitor", "Scope", "common_scope",
           "node_scopes", "DEFAULT_TARGET",
           "COMPILER_BEGIN", "COMPILER_END", "is_compiler_begin", "is_compiler_end",
           "is_region_annotation"]
