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
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.op import Op, OpPattern
from irlab.relay.expr import Call
from irlab.relay.expr_functor import ExprMutator, expr_children, post_order
from irlab.relay.op import transform as _transform
from irlab.relay.op.nn import linear as _linear
from irlab.relay.op.nn._utils import kernel_out_channels
from irlab.transform import register_pass_factory


def _shape(expr):
    return tuple(expr.checked_type.shape)


def _dtype(expr):
    return expr.checked_type.dtype


class _Combiner:
    """The shared algorithm (TVM's ParallelOpCombiner); subclasses say how ops merge."""

    op_name = ""

    def __init__(self, min_num_branches):
        if isinstance(min_num_branches, bool) or not isinstance(min_num_branches, int) \
                or min_num_branches < 1:
            raise IrlabError(f"min_num_branches must be a positive integer, got "
                             f"{min_num_branches!r}")
        self.op = Op.get(self.op_name)
        self.min_num_branches = min_num_branches

    # -- what subclasses define -----------------------------------------------------------------
    def is_supported(self, call) -> bool:
        return True

    def can_combine(self, a, b) -> bool:
        raise NotImplementedError

    def make_combined_op(self, branches):
        raise NotImplementedError

    def is_arg_compatible(self, a, b, index) -> bool:
        raise NotImplementedError

    def make_combined_following(self, data, branches, depth, parent_index):
        raise NotImplementedError

    def group_outputs(self, data, branches, depth) -> list:
        """The expression standing for ``branch[depth]`` of each branch."""
        raise NotImplementedError

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
            if node.op is self.op and node.args and self.is_supported(node):
                roots.setdefault(node.args[0], []).append(node)
        groups = []
        for calls in roots.values():
            first = len(groups)
            for call in calls:
                branch = self._branch(call, uses, consumers)
                for group in groups[first:]:
                    if self.can_combine(call, group[0][0]):
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
                if not self.is_arg_compatible(call, node, i) or _depends_on(arg, members):
                    return False
        return True

    def _combine_group(self, branches, subst):
        members = {node for branch in branches for node in branch}
        if any(_depends_on(arg, members) for branch in branches for arg in branch[0].args[1:]):
            return  # a weight computed from a sibling's output: merging would close a cycle
        combined = self.make_combined_op(branches)
        if not _type_checks(combined):
            return
        depth = min(len(b) for b in branches)
        level = 1
        while level < depth:
            prev, node = branches[0][level - 1], branches[0][level]
            parent_index = next(i for i, a in enumerate(node.args) if a is prev)
            if not self._check_level(branches, level, parent_index):
                break
            following = self.make_combined_following(combined, branches, level, parent_index)
            # A "broadcast" op with an axis of its own (nn.bias_add) may not take the
            # merged operands: stop merging there.
            if not _type_checks(following):
                break
            combined = following
            level += 1
        for branch, output in zip(branches, self.group_outputs(combined, branches, level - 1)):
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
# conv2d
class _Conv2DCombiner(_Combiner):
    """Concatenates the weights along O; following ops get their operands concatenated along
    the channel axis."""

    op_name = "nn.conv2d"

    def is_supported(self, call):
        return call.attrs.groups == 1

    @staticmethod
    def _kernel_hw(call):
        layout = call.attrs.kernel_layout
        shape = _shape(call.args[1])
        return shape[layout.index("H")], shape[layout.index("W")]

    @staticmethod
    def _out_channels(call):
        # a split kernel (OIHW16o) counts its blocks; its weights concatenate along the block
        # axis O (same block: can_combine compares kernel_layout), keeping the channel order
        return kernel_out_channels(_shape(call.args[1]), call.attrs.kernel_layout)

    def can_combine(self, a, b):
        fields = ("strides", "padding", "dilation", "groups", "data_layout", "kernel_layout",
                  "out_dtype", "out_layout")
        return (all(getattr(a.attrs, f) == getattr(b.attrs, f) for f in fields)
                and self._kernel_hw(a) == self._kernel_hw(b))

    def _channel_axis(self, call):
        attrs = call.attrs
        return (attrs.out_layout or attrs.data_layout).index("C")

    def make_combined_op(self, branches):
        root = branches[0][0]
        weights = [branch[0].args[1] for branch in branches]
        axis = root.attrs.kernel_layout.index("O")
        channels = sum(self._out_channels(branch[0]) for branch in branches)
        attrs = root.attrs.with_fields(channels=channels)
        self.channel_axis = self._channel_axis(root)
        return Call(root.op, [root.args[0], _transform.concatenate(weights, axis)], attrs)

    def is_arg_compatible(self, a, b, index):
        ta, tb = a.args[index].checked_type, b.args[index].checked_type
        out_a, out_b = _shape(a), _shape(b)
        if ta.dtype != tb.dtype or len(ta.shape) != len(tb.shape):
            return False
        pos = self.channel_axis - len(out_a) + len(ta.shape)
        if pos < 0 or ta.shape[pos] != out_a[self.channel_axis] or \
                tb.shape[pos] != out_b[self.channel_axis]:
            return False  # the channel axis must be there and not broadcast
        return all(ta.shape[i] == tb.shape[i] for i in range(len(ta.shape)) if i != pos)

    def make_combined_following(self, data, branches, depth, parent_index):
        call = branches[0][depth]
        ndim = len(_shape(call))
        args = []
        for i, arg in enumerate(call.args):
            if i == parent_index:
                args.append(data)
                continue
            axis = self.channel_axis - ndim + len(_shape(arg))
            args.append(_transform.concatenate([b[depth].args[i] for b in branches], axis))
        return Call(call.op, args, call.attrs, call.type_args)

    def group_outputs(self, data, branches, depth):
        outputs, start = [], 0
        lead = self.channel_axis
        for branch in branches:
            channels = self._out_channels(branch[0])
            outputs.append(_transform.strided_slice(
                data, [0] * lead + [start], [-1] * lead + [channels], [1] * (lead + 1),
                slice_mode="size"))
            start += channels
        return outputs


# ---------------------------------------------------------------------------------------------
# dense -> batch_matmul (TVM's ParallelDenseToBatchCombiner)
class _DenseToBatchCombiner(_Combiner):
    """Stacks data and weights into one batch_matmul; following operands are stacked too."""

    op_name = "nn.dense"

    def is_supported(self, call):
        return len(_shape(call.args[0])) == 2  # batch_matmul takes (batch, M, K)

    def can_combine(self, a, b):
        return (a.attrs.out_dtype == b.attrs.out_dtype
                and _shape(a.args[1]) == _shape(b.args[1])
                and _dtype(a.args[1]) == _dtype(b.args[1]))

    def make_combined_op(self, branches):
        data = _transform.stack([b[0].args[0] for b in branches], 0)
        weight = _transform.stack([b[0].args[1] for b in branches], 0)
        return _linear.batch_matmul(data, weight, branches[0][0].attrs.out_dtype)

    def is_arg_compatible(self, a, b, index):
        ta, tb = a.args[index].checked_type, b.args[index].checked_type
        return ta.dtype == tb.dtype and tuple(ta.shape) == tuple(tb.shape) and \
            len(ta.shape) <= len(_shape(a))

    def make_combined_following(self, data, branches, depth, parent_index):
        call = branches[0][depth]
        ndim = len(_shape(call))
        args = []
        for i, arg in enumerate(call.args):
            if i == parent_index:
                args.append(data)
                continue
            pieces = []
            for branch in branches:
                piece = branch[depth].args[i]
                missing = ndim - len(_shape(piece))
                # Lead with unit axes so each operand still broadcasts against its own slice
                # of the stacked output (TVM expands only 1-D operands).
                if missing:
                    piece = _transform.expand_dims(piece, 0, missing)
                pieces.append(piece)
            args.append(_transform.stack(pieces, 0))
        return Call(call.op, args, call.attrs, call.type_args)

    def group_outputs(self, data, branches, depth):
        parts = _transform.split(data, len(branches), 0)
        return [_transform.squeeze(parts[i], [0]) for i in range(len(branches))]


# ---------------------------------------------------------------------------------------------
# dense -> one wider dense (TVM's ParallelDenseToDenseCombiner)
class _DenseToDenseCombiner(_Combiner):
    """Concatenates the weights along the output units; following operands are concatenated
    along the last axis (repeated where they broadcast)."""

    op_name = "nn.dense"

    def can_combine(self, a, b):
        return (a.attrs.out_dtype == b.attrs.out_dtype
                and _shape(a.args[1])[1] == _shape(b.args[1])[1]
                and _dtype(a.args[1]) == _dtype(b.args[1]))

    def make_combined_op(self, branches):
        root = branches[0][0]
        weights = [b[0].args[1] for b in branches]
        units = sum(_shape(w)[0] for w in weights)
        return _linear.dense(root.args[0], _transform.concatenate(weights, 0), units,
                             root.attrs.out_dtype)

    def is_arg_compatible(self, a, b, index):
        ta, tb = a.args[index].checked_type, b.args[index].checked_type
        if ta.dtype != tb.dtype or len(ta.shape) != len(tb.shape):
            return False
        if len(_shape(a)) < len(ta.shape) or len(_shape(b)) < len(tb.shape):
            return False  # not elementwise/broadcast against the dense output
        return tuple(ta.shape[:-1]) == tuple(tb.shape[:-1])

    def make_combined_following(self, data, branches, depth, parent_index):
        call = branches[0][depth]
        args = []
        for i, arg in enumerate(call.args):
            if i == parent_index:
                args.append(data)
                continue
            arg_ndim = len(_shape(arg))
            axis = max(arg_ndim - 1, 0)
            pieces = []
            for branch in branches:
                out_dim = _shape(branch[depth].args[parent_index])[-1]
                piece = branch[depth].args[i]
                repeat = arg_ndim == 0
                if repeat:
                    piece = _transform.expand_dims(piece, -1, 1)
                elif out_dim > 1 and _shape(piece)[-1] == 1:
                    repeat = True
                if repeat:  # keep the broadcast right once the operands are concatenated
                    piece = _transform.repeat(piece, out_dim, axis)
                pieces.append(piece)
            args.append(_transform.concatenate(pieces, axis))
        return Call(call.op, args, call.attrs, call.type_args)

    def group_outputs(self, data, branches, depth):
        outputs, start = [], 0
        for branch in branches:
            shape = _shape(branch[depth])
            lead = len(shape) - 1
            outputs.append(_transform.strided_slice(
                data, [0] * lead + [start], [-1] * lead + [shape[-1]], [1] * (lead + 1),
                slice_mode="size"))
            start += shape[-1]
        return outputs


# ---------------------------------------------------------------------------------------------
# batch_matmul
class _BatchMatmulCombiner(_Combiner):
    """Concatenates the right operands along N; following operands along the last axis."""

    op_name = "nn.batch_matmul"

    def is_supported(self, call):
        return not call.attrs.transpose_a and call.attrs.transpose_b  # b is (batch, N, K)

    def can_combine(self, a, b):
        rhs_a, rhs_b = _shape(a.args[1]), _shape(b.args[1])
        return (_dtype(a.args[1]) == _dtype(b.args[1]) and _dtype(a) == _dtype(b)
                and a.attrs == b.attrs and len(rhs_a) == 3 and len(rhs_b) == 3
                and rhs_a[0] == rhs_b[0])

    def make_combined_op(self, branches):
        root = branches[0][0]
        weight = _transform.concatenate([b[0].args[1] for b in branches], 1)
        return _linear.batch_matmul(root.args[0], weight, root.attrs.out_dtype)

    def is_arg_compatible(self, a, b, index):
        # TVM accepts any operand; concatenating along the last axis is only right when that
        # axis is the output's feature axis, unbroadcast.
        ta, tb = a.args[index].checked_type, b.args[index].checked_type
        if ta.dtype != tb.dtype or len(ta.shape) != len(tb.shape) or not ta.shape:
            return False
        if ta.shape[-1] != _shape(a)[-1] or tb.shape[-1] != _shape(b)[-1]:
            return False
        return tuple(ta.shape[:-1]) == tuple(tb.shape[:-1])

    def make_combined_following(self, data, branches, depth, parent_index):
        call = branches[0][depth]
        args = [data if i == parent_index else
                _transform.concatenate([b[depth].args[i] for b in branches], -1)
                for i in range(len(call.args))]
        return Call(call.op, args, call.attrs, call.type_args)

    def group_outputs(self, data, branches, depth):
        outputs, start = [], 0
        for branch in branches:
            features = _shape(branch[0].args[1])[1]
            outputs.append(_transform.strided_slice(
                data, [0, 0, start], [-1, -1, features], [1, 1, 1], slice_mode="size"))
            start += features
        return outputs


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
    return _combine_pass(lambda: _Conv2DCombiner(min_num_branches), "CombineParallelConv2d")


def CombineParallelDense(min_num_branches=3, to_batch=True):
    """Merge at least ``min_num_branches`` dense ops reading the same input into a
    batch_matmul (``to_batch``) or one wider dense (function pass, opt level 4)."""
    combiner = _DenseToBatchCombiner if to_batch else _DenseToDenseCombiner
    return _combine_pass(lambda: combiner(min_num_branches), "CombineParallelDense")


def CombineParallelBatchMatmul(min_num_branches=3):
    """Merge at least ``min_num_branches`` batch_matmuls sharing their left operand (function
    pass, opt level 4)."""
    return _combine_pass(lambda: _BatchMatmulCombiner(min_num_branches),
                         "CombineParallelBatchMatmul")


register_pass_factory("CombineParallelConv2d", CombineParallelConv2D)

__all__ = ["CombineParallelConv2D", "CombineParallelDense", "CombineParallelBatchMatmul"]
