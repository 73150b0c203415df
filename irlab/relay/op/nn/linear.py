"""Matrix products: ``nn.dense`` (``data @ weight.T``), ``nn.contrib_dense_pack`` (dense with the
weight pre-packed in column panels), ``nn.matmul`` (with transposes) and ``nn.batch_matmul``
(3-D, batch dimension broadcast when one side has batch 1)."""

from __future__ import annotations

import re

import numpy as np

from irlab.ir.attrs import Attrs
from irlab.runtime.dtype import to_numpy_dtype
from irlab.ir.op import Op, OpPattern, register_op
from irlab.ir.type import TensorType
from irlab.relay.expr import Call
from irlab.relay.op import transform as _transform
from irlab.relay.op.nn._utils import acc_dtype, dtype_or_empty
from irlab.relay.op.op import register_alter_op_layout
from irlab.relay.op.op_common import checked_dtype, checked_shape, make_call, out_array
from irlab.relay.op.scale_axis import ScaleAxes, ScaleAxisRule


class DenseAttrs(Attrs):
    """Attributes of ``nn.dense``. ``units`` has no default in TVM, so it always prints."""

    _type_key = "relay.attrs.DenseAttrs"
    units: int
    out_dtype: str = ""


class DensePackAttrs(Attrs):
    """Attributes of ``nn.contrib_dense_pack``: ``weight_layout`` is ``NC{n}n``, the weight's
    rows (output units) split in blocks of ``n``."""

    _type_key = "relay.attrs.DensePackAttrs"
    units: int
    out_dtype: str = ""
    weight_layout: str = "NC"


class MatmulAttrs(Attrs):
    """Attributes of ``nn.matmul``."""

    _type_key = "relay.attrs.MatmulAttrs"
    units: int
    out_dtype: str = ""
    transpose_a: bool = False
    transpose_b: bool = False


class BatchMatmulAttrs(Attrs):
    """Attributes of ``nn.batch_matmul``. The C++ default of transpose_b is False while the
    Python constructor defaults to True, so ``transpose_b=True`` prints, as in TVM."""

    _type_key = "relay.attrs.BatchMatmulAttrs"
    out_dtype: str = ""
    transpose_a: bool = False
    transpose_b: bool = False


def _matmul_rel_impl(ctx, names, transpose_a, transpose_b):
    """Shared by dense (transpose_b=True) and matmul: a is (..., M, K) (or (..., K, M)), b is 2-D
    (N, K) if transpose_b else (K, N); the output is (..., M, N)."""
    attrs = ctx.attrs
    a_name, b_name = names
    a = ctx.tensor(0, a_name)
    min_rank = 2 if transpose_a else 1
    ctx.expect(a.ndim >= min_rank,
               f"{a_name} must have rank >= {min_rank}, got shape {a.shape}")
    reduce = a.shape[-2] if transpose_a else a.shape[-1]
    units = attrs.units
    if units is not None:
        ctx.expect(isinstance(units, int) and units >= 1, f"units must be >= 1, got {units}")
        if not ctx.known(1):
            # Infer an unannotated weight from units, as TVM's MatmulRel does.
            shape = (units, reduce) if transpose_b else (reduce, units)
            ctx.assign(1, TensorType(shape, a.dtype))
    b = ctx.tensor(1, b_name)
    layout = "(units, in_features)" if transpose_b else "(in_features, units)"
    ctx.expect(b.ndim == 2, f"{b_name} must be 2-D {layout}, got shape {b.shape}")
    b_reduce, b_units = (b.shape[1], b.shape[0]) if transpose_b else b.shape
    ctx.expect(b_reduce == reduce,
               f"inner dimensions differ: {a_name} has {reduce} features (shape {a.shape}) but "
               f"{b_name} expects {b_reduce} (shape {b.shape}, {layout})")
    if units is not None:
        ctx.expect(b_units == units,
                   f"units={units} but {b_name} has {b_units} units (shape {b.shape}, {layout})")
    shape = list(a.shape)
    if transpose_a:
        shape[-2] = a.shape[-1]
    shape[-1] = b_units
    return TensorType(tuple(shape), attrs.out_dtype or a.dtype)


def _dense_rel(ctx):
    return _matmul_rel_impl(ctx, ("data", "weight"), False, True)


def dense_pack_block(weight_layout) -> int | None:
    """``n`` of a ``NC{n}n`` weight layout; None for another layout."""
    match = re.fullmatch(r"NC(\d+)n", str(weight_layout))
    return int(match.group(1)) if match and int(match.group(1)) > 0 else None


def _dense_pack_rel(ctx):
    """data (..., K), weight (N // n, K, n) in layout ``NC{n}n`` -> (..., N) (TVM's
    DensePackRel)."""
    attrs = ctx.attrs
    block = dense_pack_block(attrs.weight_layout)
    ctx.expect(block is not None,
               f"contrib_dense_pack expects weight_layout NC<n>n (e.g. NC16n), got "
               f"{attrs.weight_layout!r}")
    data, weight = ctx.tensor(0, "data"), ctx.tensor(1, "weight")
    ctx.expect(data.ndim >= 1, f"data must have rank >= 1, got shape {data.shape}")
    ctx.expect(weight.ndim == 3,
               f"weight must be 3-D (units // {block}, in_features, {block}) for layout "
               f"{attrs.weight_layout}, got shape {weight.shape}")
    ctx.expect(weight.shape[2] == block,
               f"weight's last axis must be the block {block} of {attrs.weight_layout}, got "
               f"shape {weight.shape}")
    ctx.expect(weight.shape[1] == data.shape[-1],
               f"inner dimensions differ: data has {data.shape[-1]} features (shape "
               f"{data.shape}) but weight expects {weight.shape[1]} (shape {weight.shape}, "
               f"{attrs.weight_layout})")
    units = weight.shape[0] * block
    if attrs.units is not None:
        ctx.expect(attrs.units == units,
                   f"units={attrs.units} but weight has {units} units (shape {weight.shape})")
    return TensorType((*data.shape[:-1], units), attrs.out_dtype or data.dtype)


def _matmul_rel(ctx):
    return _matmul_rel_impl(ctx, ("tensor_a", "tensor_b"), bool(ctx.attrs.transpose_a),
                            bool(ctx.attrs.transpose_b))


def _batch_matmul_rel(ctx):
    attrs = ctx.attrs
    x, y = ctx.tensor(0, "x"), ctx.tensor(1, "y")
    ctx.expect(x.ndim == 3, f"batch_matmul expects 3-D x, got shape {x.shape}")
    ctx.expect(y.ndim == 3, f"batch_matmul expects 3-D y, got shape {y.shape}")
    xb, xm, xk = (x.shape[0], x.shape[2], x.shape[1]) if attrs.transpose_a else x.shape
    yb, yk, yn = (y.shape[0], y.shape[2], y.shape[1]) if attrs.transpose_b else y.shape
    ctx.expect(xb == yb or xb == 1 or yb == 1,
               f"batch dimensions differ: x has {xb} (shape {x.shape}), y has {yb} "
               f"(shape {y.shape}); they must be equal or one of them 1")
    ctx.expect(xk == yk,
               f"reduction dimensions differ: x has {xk} (shape {x.shape}, transpose_a="
               f"{bool(attrs.transpose_a)}) but y has {yk} (shape {y.shape}, transpose_b="
               f"{bool(attrs.transpose_b)})")
    return TensorType((max(xb, yb), xm, yn), attrs.out_dtype or x.dtype)


def _product(a, b, out_type, transpose_a, transpose_b):
    acc = acc_dtype(to_numpy_dtype(out_type.dtype))
    a, b = a.astype(acc), b.astype(acc)
    if transpose_a:
        a = np.swapaxes(a, -1, -2)
    if transpose_b:
        b = np.swapaxes(b, -1, -2)
    return out_array(np.matmul(a, b), out_type)


def _dense_reference(inputs, attrs, out_type):
    return _product(inputs[0], inputs[1], out_type, False, True)


def unpack_dense_weight(packed):
    """(N // n, K, n) -> (N, K): the ``NC`` weight of an ``NC{n}n`` one (numpy)."""
    blocks, k, n = packed.shape
    return np.ascontiguousarray(np.transpose(packed, (0, 2, 1)).reshape(blocks * n, k))


def _dense_pack_reference(inputs, attrs, out_type):
    return _product(inputs[0], unpack_dense_weight(inputs[1]), out_type, False, True)


def _matmul_reference(inputs, attrs, out_type):
    return _product(inputs[0], inputs[1], out_type, attrs.transpose_a, attrs.transpose_b)


def _batch_matmul_reference(inputs, attrs, out_type):
    return _product(inputs[0], inputs[1], out_type, attrs.transpose_a, attrs.transpose_b)


def _dense_scale_axes(call):
    """FoldScaleAxis: the weight is (units, in_features), so a data scale (along the last
    axis) folds into its columns, an output scale into its rows."""
    return ScaleAxes(data=len(call.args[0].checked_type.shape) - 1,
                     output=len(call.checked_type.shape) - 1, weight_of_data=1,
                     weight_of_output=0)


register_op("nn.dense", num_inputs=2,
            arguments=[("data", "Tensor", "Input data."), ("weight", "Tensor", "The weight.")],
            attrs_type=DenseAttrs, type_rel=_dense_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            reference=_dense_reference, support_level=1,
            description="Dense (fully connected) layer: data @ weight.T.",
            ).set_attrs(TScaleAxisRule=ScaleAxisRule.WEIGHT, FScaleAxisChannels=_dense_scale_axes)
register_op("nn.contrib_dense_pack", num_inputs=2,
            arguments=[("data", "Tensor", "Input data."),
                       ("weight", "3D Tensor", "The weight packed in layout NC<n>n.")],
            attrs_type=DensePackAttrs, type_rel=_dense_pack_rel,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, reference=_dense_pack_reference,
            support_level=10,
            description="Dense with the weight pre-packed (N // n, K, n): data @ unpack(w).T.")
register_op("nn.matmul", num_inputs=2,
            arguments=[("tensor_a", "Tensor", "The first input tensor."),
                       ("tensor_b", "Tensor", "The second input tensor.")],
            attrs_type=MatmulAttrs, type_rel=_matmul_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            reference=_matmul_reference, support_level=1,
            description="Matrix product of an N-D tensor and a 2-D tensor, each optionally "
                        "transposed.")
register_op("nn.batch_matmul", num_inputs=2,
            arguments=[("x", "3D Tensor", "The first input."),
                       ("y", "3D Tensor", "The second input.")],
            attrs_type=BatchMatmulAttrs, type_rel=_batch_matmul_rel,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, reference=_batch_matmul_reference,
            support_level=10, description="Batched matrix product of two 3-D tensors.")


def _units(units):
    return None if units is None else int(units)


def dense(data, weight, units=None, out_dtype=""):
    """Fully connected layer: ``data @ weight.T`` with weight of shape (units, in_features)."""
    attrs = DenseAttrs(units=_units(units), out_dtype=dtype_or_empty(out_dtype))
    return make_call("nn.dense", [data, weight], attrs)


def contrib_dense_pack(data, weight, weight_layout="NC", units=None, out_dtype=""):
    """Dense with a pre-packed weight of layout ``weight_layout`` = ``NC{n}n``, shape
    (units // n, in_features, n); what the CPU AlterOpLayout makes of ``nn.dense``."""
    attrs = DensePackAttrs(units=_units(units), out_dtype=dtype_or_empty(out_dtype),
                           weight_layout=str(weight_layout))
    return make_call("nn.contrib_dense_pack", [data, weight], attrs)


def matmul(tensor_a, tensor_b, units=None, out_dtype="", transpose_a=False, transpose_b=False):
    """Matrix product ``op(a) @ op(b)``. Like TVM, the (False, True) case builds ``nn.dense``."""
    if not transpose_a and transpose_b:
        return dense(tensor_a, tensor_b, units, out_dtype)
    attrs = MatmulAttrs(units=_units(units), out_dtype=dtype_or_empty(out_dtype),
                        transpose_a=bool(transpose_a), transpose_b=bool(transpose_b))
    return make_call("nn.matmul", [tensor_a, tensor_b], attrs)


def batch_matmul(tensor_a, tensor_b, out_dtype="", transpose_a=False, transpose_b=True):
    """Batched matrix product of 3-D tensors; by default ``b`` is given as (batch, N, K)."""
    attrs = BatchMatmulAttrs(out_dtype=dtype_or_empty(out_dtype), transpose_a=bool(transpose_a),
                             transpose_b=bool(transpose_b))
    return make_call("nn.batch_matmul", [tensor_a, tensor_b], attrs)


# ---------------------------------------------------------------------------------------------
# layout hooks (TVM's topi/x86/dense_alter_op.py)
@register_alter_op_layout("nn.dense", target="cpu")
def alter_op_layout_dense_cpu(attrs, inputs, tinfos, out_type):
    """CPU targets (llvm, c): a float32 dense the packed schedule would run becomes
    ``nn.contrib_dense_pack`` on the weight in layout ``NC{n}n`` (``use_prepacked_dense`` picks
    n), so the weight is packed once -- by FoldConstant when it is a constant -- instead of on
    every call (TVM's x86 ``_alter_dense_layout``). Before::

        nn.dense(%x, meta[relay.Constant][0], units=256)

    After AlterOpLayout (then FoldConstant packs the constant)::

        %0 = layout_transform(meta[relay.Constant][0], src_layout="NC", dst_layout="NC64n");
        nn.contrib_dense_pack(%x, %0, units=None, weight_layout="NC64n")
    """
    from irlab.relay.op.strategy.dense import use_prepacked_dense
    from irlab.relay.op.transform import layout_transform
    from irlab.target import Target

    target = Target.current(allow_none=True)
    block = None if target is None else use_prepacked_dense(attrs, tinfos, out_type, target)
    if block is None:
        return None
    layout = f"NC{block}n"
    weight = layout_transform(inputs[1], "NC", layout)
    return contrib_dense_pack(inputs[0], weight, layout, None, attrs.out_dtype)


# ---------------------------------------------------------------------------------------------
# CombineParallelDense / CombineParallelBatchMatmul: how sibling ops merge into one
class DenseToBatchCombiner:
    """Stacks data and weights into one batch_matmul; following operands are stacked too."""

    def is_supported(self, call):
        return len(checked_shape(call.args[0])) == 2  # batch_matmul takes (batch, M, K)

    def can_combine(self, a, b):
        return (a.attrs.out_dtype == b.attrs.out_dtype
                and checked_shape(a.args[1]) == checked_shape(b.args[1])
                and checked_dtype(a.args[1]) == checked_dtype(b.args[1]))

    def make_combined_op(self, branches):
        data = _transform.stack([b[0].args[0] for b in branches], 0)
        weight = _transform.stack([b[0].args[1] for b in branches], 0)
        return batch_matmul(data, weight, branches[0][0].attrs.out_dtype)

    def is_arg_compatible(self, a, b, index):
        ta, tb = a.args[index].checked_type, b.args[index].checked_type
        return ta.dtype == tb.dtype and tuple(ta.shape) == tuple(tb.shape) and \
            len(ta.shape) <= len(checked_shape(a))

    def make_combined_following(self, data, branches, depth, parent_index):
        call = branches[0][depth]
        ndim = len(checked_shape(call))
        args = []
        for i, arg in enumerate(call.args):
            if i == parent_index:
                args.append(data)
                continue
            pieces = []
            for branch in branches:
                piece = branch[depth].args[i]
                missing = ndim - len(checked_shape(piece))
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


class DenseToDenseCombiner:
    """Concatenates the weights along the output units; following operands are concatenated
    along the last axis (repeated where they broadcast)."""

    def is_supported(self, call):
        return True

    def can_combine(self, a, b):
        return (a.attrs.out_dtype == b.attrs.out_dtype
                and checked_shape(a.args[1])[1] == checked_shape(b.args[1])[1]
                and checked_dtype(a.args[1]) == checked_dtype(b.args[1]))

    def make_combined_op(self, branches):
        root = branches[0][0]
        weights = [b[0].args[1] for b in branches]
        units = sum(checked_shape(w)[0] for w in weights)
        return dense(root.args[0], _transform.concatenate(weights, 0), units,
                             root.attrs.out_dtype)

    def is_arg_compatible(self, a, b, index):
        ta, tb = a.args[index].checked_type, b.args[index].checked_type
        if ta.dtype != tb.dtype or len(ta.shape) != len(tb.shape):
            return False
        if len(checked_shape(a)) < len(ta.shape) or len(checked_shape(b)) < len(tb.shape):
            return False  # not elementwise/broadcast against the dense output
        return tuple(ta.shape[:-1]) == tuple(tb.shape[:-1])

    def make_combined_following(self, data, branches, depth, parent_index):
        call = branches[0][depth]
        args = []
        for i, arg in enumerate(call.args):
            if i == parent_index:
                args.append(data)
                continue
            arg_ndim = len(checked_shape(arg))
            axis = max(arg_ndim - 1, 0)
            pieces = []
            for branch in branches:
                out_dim = checked_shape(branch[depth].args[parent_index])[-1]
                piece = branch[depth].args[i]
                repeat = arg_ndim == 0
                if repeat:
                    piece = _transform.expand_dims(piece, -1, 1)
                elif out_dim > 1 and checked_shape(piece)[-1] == 1:
                    repeat = True
                if repeat:  # keep the broadcast right once the operands are concatenated
                    piece = _transform.repeat(piece, out_dim, axis)
                pieces.append(piece)
            args.append(_transform.concatenate(pieces, axis))
        return Call(call.op, args, call.attrs, call.type_args)

    def group_outputs(self, data, branches, depth):
        outputs, start = [], 0
        for branch in branches:
            shape = checked_shape(branch[depth])
            lead = len(shape) - 1
            outputs.append(_transform.strided_slice(
                data, [0] * lead + [start], [-1] * lead + [shape[-1]], [1] * (lead + 1),
                slice_mode="size"))
            start += shape[-1]
        return outputs


class BatchMatmulParallelCombiner:
    """Concatenates the right operands along N; following operands along the last axis."""

    def is_supported(self, call):
        return not call.attrs.transpose_a and call.attrs.transpose_b  # b is (batch, N, K)

    def can_combine(self, a, b):
        rhs_a, rhs_b = checked_shape(a.args[1]), checked_shape(b.args[1])
        return (checked_dtype(a.args[1]) == checked_dtype(b.args[1])
                and checked_dtype(a) == checked_dtype(b)
                and a.attrs == b.attrs and len(rhs_a) == 3 and len(rhs_b) == 3
                and rhs_a[0] == rhs_b[0])

    def make_combined_op(self, branches):
        root = branches[0][0]
        weight = _transform.concatenate([b[0].args[1] for b in branches], 1)
        return batch_matmul(root.args[0], weight, root.attrs.out_dtype)

    def is_arg_compatible(self, a, b, index):
        # TVM accepts any operand; concatenating along the last axis is only right when that
        # axis is the output's feature axis, unbroadcast.
        ta, tb = a.args[index].checked_type, b.args[index].checked_type
        if ta.dtype != tb.dtype or len(ta.shape) != len(tb.shape) or not ta.shape:
            return False
        if ta.shape[-1] != checked_shape(a)[-1] or tb.shape[-1] != checked_shape(b)[-1]:
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
            features = checked_shape(branch[0].args[1])[1]
            outputs.append(_transform.strided_slice(
                data, [0, 0, start], [-1, -1, features], [1, 1, 1], slice_mode="size"))
            start += features
        return outputs


def _dense_combiner(to_batch=True):
    """Dense siblings become one batch_matmul over stacked operands (``to_batch``, TVM's
    ParallelDenseToBatchCombiner) or one wider dense (ParallelDenseToDenseCombiner)."""
    return DenseToBatchCombiner() if to_batch else DenseToDenseCombiner()


Op.get("nn.dense").set_attr("FCombineParallel", _dense_combiner)
Op.get("nn.batch_matmul").set_attr("FCombineParallel", BatchMatmulParallelCombiner)

__all__ = ["DenseAttrs", "DensePackAttrs", "MatmulAttrs", "BatchMatmulAttrs", "dense",
           "contrib_dense_pack", "dense_pack_block", "unpack_dense_weight", "matmul",
           "batch_matmul"]


def _register_computes():
    from irlab.relay.op.op_strategy import register_compute, register_strategy
    from irlab.relay.op.strategy import dense as S

    register_compute("nn.dense", S.dense_compute)
    register_strategy("nn.dense", S.dense_strategy)
    register_compute("nn.contrib_dense_pack", S.dense_pack_compute)
    register_strategy("nn.contrib_dense_pack", S.dense_pack_strategy)
    register_compute("nn.matmul", S.matmul_compute)
    register_strategy("nn.matmul", S.matmul_strategy)
    register_compute("nn.batch_matmul", S.batch_matmul_compute)
    register_strategy("nn.batch_matmul", S.batch_matmul_strategy)


_register_computes()
