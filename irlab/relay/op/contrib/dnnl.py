"""What the ``dnnl`` external compiler (oneDNN) takes, as TVM's ``relay.op.contrib.dnnl``:
float32 NCHW convolutions and dense layers with an optional bias and fused ReLU
(composites ``dnnl.conv2d_bias_relu`` ...), ReLU, add (one operand may broadcast), and
2-D max/average pooling (global too).

``partition_for_dnnl(mod, params)`` binds the weights, folds batch normalization into the
convolutions (SimplifyInference, FoldScaleAxis, FoldConstant: a folded batch_norm is a
``conv2d`` followed by ``add`` of a per-channel constant, i.e. ``dnnl.conv2d_bias``), then
runs the BYOC flow: MergeComposite -> AnnotateTarget -> MergeCompilerRegions ->
PartitionGraph. ``relay.build`` hands each ``Compiler="dnnl"`` function to ``relay.ext.dnnl``.
"""

from __future__ import annotations

import warnings

from irlab.ir.type import TensorType
from irlab.relay.dataflow_pattern import is_op, wildcard
from irlab.relay.op.contrib.register import register_op_attr, register_pattern_table

COMPILER = "dnnl"
_POOLS = ("nn.max_pool2d", "nn.avg_pool2d", "nn.global_max_pool2d", "nn.global_avg_pool2d")


def _shape(expr) -> tuple | None:
    ty = expr.checked_type
    if not isinstance(ty, TensorType) or ty.dtype != "float32":
        return None
    return tuple(int(d) for d in ty.shape)


def _all_float32(call) -> bool:
    """oneDNN gets float32 tensors only (the types the codegen emits)."""
    return all(_shape(e) is not None for e in (*call.args, call))


def _conv2d(call) -> bool:
    a = call.attrs
    return (_all_float32(call) and a.data_layout == "NCHW" and a.kernel_layout == "OIHW"
            and (a.out_layout or "NCHW") == "NCHW" and (a.out_dtype or "float32") == "float32"
            and len(_shape(call.args[0])) == 4)


def _dense(call) -> bool:
    return (_all_float32(call) and (call.attrs.out_dtype or "float32") == "float32"
            and len(_shape(call.args[0])) == 2)


def _add(call) -> bool:
    """One operand has the result's shape; the other broadcasts into it (up to 5-D)."""
    if not _all_float32(call):
        return False
    out, shapes = _shape(call), [_shape(a) for a in call.args]
    if not 1 <= len(out) <= 5 or out not in shapes:
        return False
    other = shapes[1] if shapes[0] == out else shapes[0]
    other = (1,) * (len(out) - len(other)) + other
    return all(o in (1, n) for o, n in zip(other, out))


def _relu(call) -> bool:
    return _all_float32(call) and 1 <= len(_shape(call)) <= 5


def _pool(call) -> bool:
    a = call.attrs
    if not _all_float32(call) or a.layout != "NCHW" or len(_shape(call)) != 4:
        return False
    if getattr(a, "out_layout", "") not in ("", "NCHW"):
        return False
    # ceil_mode becomes extra right padding, which oneDNN would count in the average
    if getattr(a, "ceil_mode", False) and getattr(a, "count_include_pad", False):
        return False
    return not _window_in_padding(a, _shape(call.args[0]), _shape(call))


def _window_in_padding(attrs, in_shape, out_shape) -> bool:
    """Whether some pooling window lies wholly in the padding (Relay gives -inf or 0 there,
    oneDNN the lowest float)."""
    if not hasattr(attrs, "pool_size"):  # global pooling
        return False
    padding = [int(p) for p in attrs.padding]
    low = padding[:2] if len(padding) >= 2 else padding * 2
    for axis in range(2):
        extent = (int(attrs.pool_size[axis]) - 1) * int(attrs.dilation[axis]) + 1
        last_start = (out_shape[2 + axis] - 1) * int(attrs.strides[axis]) - low[axis]
        if low[axis] >= extent or last_start >= in_shape[2 + axis]:
            return True
    return False


for _name, _check in [("nn.conv2d", _conv2d), ("nn.dense", _dense), ("add", _add),
                      ("nn.relu", _relu), *((p, _pool) for p in _POOLS)]:
    register_op_attr(_name, f"target.{COMPILER}", _check)


def _per_channel_bias(bias_shape, channels, axis_from_end) -> bool:
    """Whether a bias of ``bias_shape`` adds one value per output channel."""
    dims = [d for d in bias_shape]
    while dims and dims[0] == 1 and len(dims) > axis_from_end:
        dims.pop(0)
    return len(dims) == axis_from_end and dims[0] == channels and all(d == 1 for d in dims[1:])


def _bias_ok(expr, main, axis_from_end) -> bool:
    """``add``/``bias_add`` of a per-channel bias to ``main`` (axis 1 of the result)."""
    bias_shape, channels = _shape(expr.args[1]), _shape(main)[1]
    if bias_shape is None:
        return False
    if expr.op.name == "nn.bias_add":
        rank = len(_shape(main))
        return int(expr.attrs.axis) % rank == 1 and bias_shape == (channels,)
    return _per_channel_bias(bias_shape, channels, axis_from_end)


def split_composite(body):
    """``(main call, bias expr or None, relu)`` of a ``conv2d``/``dense`` composite body:
    ``[relu](["add"|"bias_add"](main, bias))``."""
    expr, bias, relu = body, None, False
    if _op_name(expr) == "nn.relu":
        relu, expr = True, expr.args[0]
    if _op_name(expr) in ("add", "nn.bias_add"):
        expr, bias = expr.args
    return expr, bias, relu


def _op_name(expr):
    op = getattr(expr, "op", None)
    return getattr(op, "name", None)


def _composite_check(main_check, axis_from_end):
    """The check of a composite: its main op is supported, its bias is per channel."""
    def check(expr):
        main, bias, _ = split_composite(expr)
        if not main_check(main):
            return False
        biased = expr.args[0] if _op_name(expr) == "nn.relu" else expr
        return bias is None or _bias_ok(biased, main, axis_from_end)
    return check


def _with_bias(main):
    return is_op("nn.bias_add")(main, wildcard()) | is_op("add")(main, wildcard())


@register_pattern_table(COMPILER)
def pattern_table():
    """Composites oneDNN runs as one primitive (bias and ReLU fused), largest first."""
    table = []
    for name, op, check, axis_from_end in (("conv2d", "nn.conv2d", _conv2d, 3),
                                           ("dense", "nn.dense", _dense, 1)):
        main = is_op(op)(wildcard(), wildcard())
        biased = _with_bias(main)
        table += [(f"{COMPILER}.{name}_bias_relu", is_op("nn.relu")(biased),
                   _composite_check(check, axis_from_end)),
                  (f"{COMPILER}.{name}_bias", biased, _composite_check(check, axis_from_end)),
                  (f"{COMPILER}.{name}_relu", is_op("nn.relu")(main),
                   _composite_check(check, axis_from_end))]
    return table


def partition_for_dnnl(mod, params=None):
    """Offload what oneDNN supports: bind ``params``, fold batch norms into the convolutions,
    then composites first, single operators next, merged into as few regions as possible."""
    from irlab.relay import transform
    from irlab.relay.build_module import bind_params_by_name
    from irlab.relay.op.contrib.register import get_pattern_table
    from irlab.transform import PassContext, Sequential

    if params:
        mod = mod.copy()
        mod["main"] = bind_params_by_name(mod["main"], params)
    fold = Sequential([transform.InferType(), transform.SimplifyInference(),
                       transform.FoldConstant(), transform.FoldScaleAxis(),
                       transform.FoldConstant()])
    with PassContext(opt_level=3):
        mod = fold(mod)
    seq = Sequential([transform.InferType(),
                      transform.MergeComposite(get_pattern_table(COMPILER)),
                      transform.AnnotateTarget([COMPILER]),
                      transform.MergeCompilerRegions(),
                      transform.PartitionGraph()])
    with warnings.catch_warnings():
        # the table lists alternatives (conv2d and dense, with and without bias/ReLU): a
        # model rarely uses all of them, and saying so for each would be noise
        warnings.simplefilter("ignore", transform.UnmatchedPatternWarning)
        return seq(mod)


__all__ = ["partition_for_dnnl", "pattern_table", "split_composite"]
