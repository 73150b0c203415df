"""Strategies of the matrix products, softmax and the normalizations (generic + "cpu").

The generic implementations run the TE compute's loops as written (plevel 10). The CPU
overrides add the x86 schedules at plevel 15: for the products, the packed compute
(``bn``-column panels) with the register-tile schedule when ``N`` is a multiple of 16,
otherwise the plain compute with the simple parallel schedule. ``nn.contrib_dense_pack`` (what
AlterOpLayout makes of those packed denses at opt_level 3: ``use_prepacked_dense``) runs the same
register tile on its pre-packed weight.
"""

from __future__ import annotations

from irlab.relay.op.op_strategy import OpStrategy, generic_func
from irlab.relay.op.strategy.generic import _no_schedule, wrap_topi_schedule

CPU_PLEVEL = 15


# -- computes (attrs, inputs, out_type) -> [tensors] ------------------------------------------
def _out_dtype(attrs, out_type):
    return getattr(attrs, "out_dtype", "") or out_type.dtype


def dense_compute(attrs, inputs, out_type, bn=None):
    from irlab import topi

    return [topi.nn.dense(inputs[0], inputs[1], _out_dtype(attrs, out_type), bn=bn)]


def dense_pack_compute(attrs, inputs, out_type):
    from irlab import topi

    return [topi.nn.dense_pack(inputs[0], inputs[1], _out_dtype(attrs, out_type))]


def matmul_compute(attrs, inputs, out_type, bn=None):
    from irlab import topi

    return [topi.nn.matmul(inputs[0], inputs[1], attrs.transpose_a, attrs.transpose_b,
                                 _out_dtype(attrs, out_type), bn=bn)]


def batch_matmul_compute(attrs, inputs, out_type, bn=None):
    from irlab import topi

    return [topi.nn.batch_matmul(inputs[0], inputs[1], attrs.transpose_a,
                                       attrs.transpose_b, _out_dtype(attrs, out_type), bn=bn)]


def softmax_compute(attrs, inputs, out_type):
    from irlab.topi.nn import softmax

    return [softmax.softmax(inputs[0], attrs.axis)]


def fast_softmax_compute(attrs, inputs, out_type):
    from irlab.topi.nn import softmax

    return [softmax.fast_softmax(inputs[0], attrs.axis)]


def log_softmax_compute(attrs, inputs, out_type):
    from irlab.topi.nn import softmax

    return [softmax.log_softmax(inputs[0], attrs.axis)]


def layer_norm_compute(attrs, inputs, out_type):
    from irlab.topi.nn import norm

    return [norm.layer_norm(*inputs, axis=attrs.axis, epsilon=attrs.epsilon,
                            center=attrs.center, scale=attrs.scale)]


def instance_norm_compute(attrs, inputs, out_type):
    from irlab.topi.nn import norm

    return [norm.instance_norm(*inputs, axis=attrs.axis, epsilon=attrs.epsilon,
                               center=attrs.center, scale=attrs.scale)]


def batch_norm_compute(attrs, inputs, out_type):
    from irlab.topi.nn import norm

    return norm.batch_norm(*inputs, axis=attrs.axis, epsilon=attrs.epsilon,
                           center=attrs.center, scale=attrs.scale)


# -- products ----------------------------------------------------------------------------------
def _product_n(out_type):
    return int(out_type.shape[-1]) if len(out_type.shape) else 1


def packed_columns(out_type, target):
    """The panel width ``bn`` the CPU product schedule packs its second operand in for an output
    of ``out_type`` on ``target`` (``dense_tile``), or None when it runs unpacked (the simple
    schedule)."""
    from irlab.topi.x86.dense import dense_tile

    shape = tuple(int(d) for d in out_type.shape)
    tile = dense_tile(shape[-2], shape[-1], target, out_type.dtype) if len(shape) >= 2 else None
    return None if tile is None else tile[1]


def use_prepacked_dense(attrs, tinfos, out_type, target):
    """The block ``n`` AlterOpLayout gives a CPU ``nn.dense``'s weight (``NC{n}n``, packed once
    by FoldConstant, the call becoming ``nn.contrib_dense_pack``), or None to keep it: float32,
    2-D data (as TVM's dense_pack), where the dense strategy would pack the weight on every call
    (``packed_columns``, which the strategy asks too, so hook and schedule agree)."""
    data, weight = tinfos[0], tinfos[1]
    if len(data.shape) != 2 or len(weight.shape) != 2:
        return None
    if {str(data.dtype), str(weight.dtype), str(out_type.dtype)} != {"float32"}:
        return None
    return packed_columns(out_type, target)


def _product_strategy(name, compute, target_cpu):
    def strategy(attrs, inputs, out_type, target):
        s = OpStrategy()
        s.add_implementation(compute, _no_schedule, f"{name}.generic")
        if not target_cpu:
            return s
        from irlab.topi.x86.dense import schedule_dense, schedule_dense_simple

        bn = packed_columns(out_type, target)
        if bn is not None:
            s.add_implementation(lambda a, i, o: compute(a, i, o, bn=bn),
                                 wrap_topi_schedule(schedule_dense), f"{name}_pack.x86",
                                 plevel=CPU_PLEVEL)
        else:
            s.add_implementation(compute, wrap_topi_schedule(schedule_dense_simple),
                                 f"{name}.x86", plevel=CPU_PLEVEL)
        return s

    return strategy


dense_strategy = generic_func(_product_strategy("dense", dense_compute, False))
dense_strategy.register("cpu", _product_strategy("dense", dense_compute, True))
def _dense_pack_strategy(attrs, inputs, out_type, target):
    s = OpStrategy()
    s.add_implementation(dense_pack_compute, _no_schedule, "dense_pack.generic")
    return s


def _dense_pack_strategy_cpu(attrs, inputs, out_type, target):
    from irlab.topi.x86.dense import schedule_dense_prepacked

    s = _dense_pack_strategy(attrs, inputs, out_type, target)
    s.add_implementation(dense_pack_compute, wrap_topi_schedule(schedule_dense_prepacked),
                         "dense_pack.x86", plevel=CPU_PLEVEL)
    return s


dense_pack_strategy = generic_func(_dense_pack_strategy)
dense_pack_strategy.register("cpu", _dense_pack_strategy_cpu)
matmul_strategy = generic_func(_product_strategy("matmul", matmul_compute, False))
matmul_strategy.register("cpu", _product_strategy("matmul", matmul_compute, True))
batch_matmul_strategy = generic_func(_product_strategy("batch_matmul", batch_matmul_compute,
                                                       False))
batch_matmul_strategy.register("cpu", _product_strategy("batch_matmul", batch_matmul_compute,
                                                        True))


# -- row-wise reductions -----------------------------------------------------------------------
def _rows_strategy(name, compute, schedule_name):
    def generic(attrs, inputs, out_type, target):
        s = OpStrategy()
        s.add_implementation(compute, _no_schedule, f"{name}.generic")
        return s

    def cpu(attrs, inputs, out_type, target):
        from irlab.topi import x86

        s = generic(attrs, inputs, out_type, target)
        s.add_implementation(compute, wrap_topi_schedule(getattr(x86, schedule_name)),
                             f"{name}.x86", plevel=CPU_PLEVEL)
        return s

    g = generic_func(generic)
    g.register("cpu", cpu)
    return g


softmax_strategy = _rows_strategy("softmax", softmax_compute, "schedule_softmax")
fast_softmax_strategy = _rows_strategy("fast_softmax", fast_softmax_compute, "schedule_softmax")
log_softmax_strategy = _rows_strategy("log_softmax", log_softmax_compute, "schedule_softmax")
layer_norm_strategy = _rows_strategy("layer_norm", layer_norm_compute, "schedule_layer_norm")
instance_norm_strategy = _rows_strategy("instance_norm", instance_norm_compute,
                                        "schedule_instance_norm")
batch_norm_strategy = _rows_strategy("batch_norm", batch_norm_compute, "schedule_injective")


def _dropout_compute(attrs, inputs, out_type):
    from irlab.topi.nn import activation

    return activation.dropout(inputs[0])


dropout_strategy = _rows_strategy("dropout", _dropout_compute, "schedule_injective")


__all__ = ["dense_strategy", "dense_pack_strategy", "dense_pack_compute", "packed_columns",
           "use_prepacked_dense", "matmul_strategy", "batch_matmul_strategy", "softmax_strategy",
           "fast_softmax_strategy", "log_softmax_strategy", "layer_norm_strategy",
           "instance_norm_strategy", "batch_norm_strategy", "dropout_strategy",
           "dense_compute", "matmul_compute", "batch_matmul_compute", "softmax_compute",
           "log_softmax_compute", "layer_norm_compute", "instance_norm_compute",
           "batch_norm_compute"]
