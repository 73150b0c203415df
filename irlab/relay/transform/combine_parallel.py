"""CombineParallelConv2D, CombineParallelDense and CombineParallelBatchMatmul: merge sibling ops
that read the same input into one wider op, then slice the result apart.

A *branch* starts at an op reading the shared input and follows its single consumer while that
is elementwise or broadcast (bias, scale, relu). Branches whose ops can be merged form a group;
a group of at least ``min_num_branches`` becomes one op, and the following ops are merged level
by level while every branch has the same op there::

    %0 = nn.conv2d(%x, %w1);                   %0 = concatenate((%w1, %w2, %w3));
    %1 = nn.conv2d(%x, %w2);           =>      %1 = nn.conv2d(%x, %0, channels=12);
    %2 = nn.conv2d(%x, %w3);                   %2 = strided_slice(%1, begin=[0, 0],
    (%0, %1, %2)                                     end=[-1, 4], slice_mode="size");
                                               ... (%2, %3, %4)

Dense ops become one ``nn.batch_matmul`` over stacked operands (``to_batch=True``, TVM's
default) or one dense with concatenated weights; batch_matmuls sharing their left operand
become one with concatenated right operands.

How the ops of one kind merge is the op's ``FCombineParallel`` attribute, set in its
definition (``relay/op/nn/conv.py``, ``linear.py``): a factory of a combiner with
``is_supported(call)``, ``can_combine(a, b)``, ``make_combined_op(branches)``,
``is_arg_compatible(a, b, index)``, ``make_combined_following(data, branches, depth,
parent_index)`` and ``group_outputs(data, branches, depth)``; this module is the algorithm.
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.op import Op, OpPattern
from irlab.relay.expr import Call
from irlab.relay.expr_functor import ExprMutator, expr_children, post_order
from irlab.transform import register_pass_factory


def _shape(expr):
    return tuple(expr.checked_type.shape)


class _Combiner:
    """The shared algorithm (TVM's ParallelOpCombiner); the op's ``FCombineParallel`` combiner
    (``self.rule``) says how its calls merge."""

    def __init__(self, op_name, min_num_branches, **options):
        if isinstance(min_num_branches, bool) or not isinstance(min_num_branches, int) \
                or min_num_branches < 1:
            raise IrlabError(f"min_num_branches must be a positive integer, got "
                             f"{min_num_branches!r}")
        self.op = Op.get(op_name)
        make_rule = self.op.get_attr("FCombineParallel")
        if make_rule is None:
            raise IrlabError(f"operator {op_name} says nothing of merging parallel calls "
                             f"(no FCombineParallel attribute)")
        self.rule = make_rule(**options)
        self.min_num_branches = min_num_branches

    # -- finding groups -------------------------------------------------------------------------
    def _find_groups(self, func):
        uses: dict = {}       # node -> number of references to it
        consumers: dict = {}  # node -> the calls using it
        roots: dict = {}      # shared input -> calls of our op reading it (ordered)
        for node in post_order(func):
            for child in expr_children(node):
                uses[child] = uses.get(child, 0) + 1
            if not isinstance(node, Call):
                continue
            for arg in node.args:
                consumers.setdefault(arg, []).append(node)
            if node.op is self.op and node.args and self.rule.is_supported(node):
                roots.setdefault(node.args[0], []).append(node)
        groups = []
        for calls in roots.values():
            first = len(groups)
            for call in calls:
                branch = self._branch(call, uses, consumers)
                for group in groups[first:]:
                    if self.rule.can_combine(call, group[0][0]):
                        group.append(branch)
                        break
                else:
                    groups.append([branch])
        return groups

    @staticmethod
    def _branch(call, uses, consumers):
        branch = [call]
        while uses.get(branch[-1], 0) == 1 and len(consumers.get(branch[-1], ())) == 1:
            nxt = consumers[branch[-1]][0]
            if not isinstance(nxt.op, Op) or nxt.op.get_attr("TOpPattern") > OpPattern.BROADCAST:
                break
            branch.append(nxt)
        return branch

    # -- combining ------------------------------------------------------------------------------
    def _check_level(self, branches, depth, parent_index) -> bool:
        call = branches[0][depth]
        members = {node for branch in branches for node in branch}
        for branch in branches:
            node = branch[depth]
            if (node.op is not call.op or node.attrs != call.attrs
                    or len(node.args) != len(call.args)
                    or node.args[parent_index] is not branch[depth - 1]
                    or _shape(node) != _shape(branch[depth - 1])):  # no broadcasting up
                return False
            for i, arg in enumerate(node.args):
                if i == parent_index:
                    continue
                if not self.rule.is_arg_compatible(call, node, i) or _depends_on(arg, members):
                    return False
        return True

    def _combine_group(self, branches, subst):
        members = {node for branch in branches for node in branch}
        if any(_depends_on(arg, members) for branch in branches for arg in branch[0].args[1:]):
            return  # a weight computed from a sibling's output: merging would close a cycle
        combined = self.rule.make_combined_op(branches)
        if not _type_checks(combined):
            return
        depth = min(len(b) for b in branches)
        level = 1
        while level < depth:
            prev, node = branches[0][level - 1], branches[0][level]
            parent_index = next(i for i, a in enumerate(node.args) if a is prev)
            if not self._check_level(branches, level, parent_index):
                break
            following = self.rule.make_combined_following(combined, branches, level,
                                                          parent_index)
            # A "broadcast" op with an axis of its own (nn.bias_add) may not take the
            # merged operands: stop merging there.
            if not _type_checks(following):
                break
            combined = following
            level += 1
        outputs = self.rule.group_outputs(combined, branches, level - 1)
        for branch, output in zip(branches, outputs):
            subst[branch[level - 1]] = output

    def combine(self, func, mod=None):
        from irlab.relay.ty_infer import infer_expr

        if not func.body.has_checked_type():
            func = infer_expr(func, mod)
        subst: dict = {}
        for group in self._find_groups(func):
            if len(group) >= self.min_num_branches:
                self._combine_group(group, subst)
        return _Substitute(subst).visit(func) if subst else func


def _type_checks(expr) -> bool:
    from irlab.relay.transform.simplify_expr import ensure_types
    from irlab.relay.type_relation import Defer

    try:
        ensure_types(expr)
    except (IrlabError, Defer):
        return False
    return True


def _depends_on(expr, nodes) -> bool:
    """True when ``expr`` uses one of ``nodes`` (merging it would close a cycle)."""
    if not nodes:
        return False
    return any(n in nodes for n in post_order(expr, into_functions=False))


class _Substitute(ExprMutator):
    """Replaces nodes by expressions (and rewrites inside the replacements too)."""

    def __init__(self, subst):
        super().__init__()
        self.subst = subst

    def visit(self, expr):
        target = self.subst.get(expr)
        if target is None:
            return super().visit(expr)
        if expr not in self.memo_map:
            self.memo_map[expr] = super().visit(target)
        return self.memo_map[expr]


# ---------------------------------------------------------------------------------------------
# passes
def _combine_pass(make_combiner, name):
    from irlab.relay.transform import function_pass

    make_combiner()  # validates the options now, not when the pass runs

    def transform(func, mod, ctx):
        return make_combiner().combine(func, mod)

    return function_pass(transform, opt_level=4, name=name, required=["InferType"])


def CombineParallelConv2D(min_num_branches=3):
    """Merge at least ``min_num_branches`` conv2d reading the same input (function pass
    "CombineParallelConv2d", opt level 4)."""
    return _combine_pass(lambda: _Combiner("nn.conv2d", min_num_branches),
                         "CombineParallelConv2d")


def CombineParallelDense(min_num_branches=3, to_batch=True):
    """Merge at least ``min_num_branches`` dense ops reading the same input into a
    batch_matmul (``to_batch``) or one wider dense (function pass, opt level 4)."""
    return _combine_pass(lambda: _Combiner("nn.dense", min_num_branches, to_batch=to_batch),
                         "CombineParallelDense")


def CombineParallelBatchMatmul(min_num_branches=3):
    """Merge at least ``min_num_branches`` batch_matmuls sharing their left operand (function
    pass, opt level 4)."""
    return _combine_pass(lambda: _Combiner("nn.batch_matmul", min_num_branches),
                         "CombineParallelBatchMatmul")


register_pass_factory("CombineParallelConv2d", CombineParallelConv2D)

__all__ = ["CombineParallelConv2D", "CombineParallelDense", "CombineParallelBatchMatmul"]
