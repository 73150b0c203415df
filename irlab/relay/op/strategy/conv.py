"""Strategies of the convolution, pooling and local-normalization ops (TVM's
``strategy/generic.py`` + ``strategy/x86.py`` for conv2d, conv2d_transpose, pool2d...).

The generic strategy of each op is its TE compute with no schedule (the loops as written);
the ``"cpu"`` override adds the x86 schedules at plevel 15 so they win. conv2d picks its
implementation inside the strategy (``conv2d_kind``): depthwise (``groups == in channels ==
out channels``), NCHW/OIHW (im2col + GEMM for small images and for strided convolutions with
few output channels -- ``_use_im2col`` --, else the direct register-tiled schedule), NCHW with
a pre-packed ``OIHW{n}o`` kernel (what AlterOpLayout makes of the packed schedule's convs at
opt_level 3 with the NCHWc conv off: ``use_prepacked_kernel``), NHWC (HWIO/OHWI), or a plain
parallel fallback for grouped convolutions and other layouts. ``nn.contrib_conv2d_NCHWc``
(what AlterOpLayout makes of x86 convs by default: ``use_nchwc``) has one x86 schedule, as
has ``nn.contrib_conv2d_winograd_without_weight_transform`` (what it makes of 3x3 stride-1
ones under MetaSchedule: ``use_winograd``).
Measurements behind the choices: ``benchmarks/bench_conv.py``.
"""

from __future__ import annotations

from irlab.relay.op.op_strategy import OpStrategy, generic_func, register_compute, \
    register_strategy
from irlab.relay.op.strategy.generic import _no_schedule


def _pad(attrs):
    return tuple(attrs.padding)


# -- computes (fcompute(attrs, inputs, out_type)) ------------------------------------------
def compute_conv2d(attrs, inputs, out_type):
    from irlab import topi

    return [topi.nn.conv2d.conv2d(inputs[0], inputs[1], attrs.strides, _pad(attrs),
                                  attrs.dilation, attrs.groups, attrs.data_layout,
                                  attrs.kernel_layout, attrs.out_layout,
                                  out_type.dtype)]


def compute_conv2d_NCHWc(attrs, inputs, out_type):
    from irlab import topi

    return [topi.nn.conv2d.conv2d_NCHWc(inputs[0], inputs[1], attrs.strides, _pad(attrs),
                                        attrs.dilation, attrs.data_layout,
                                        attrs.out_layout or attrs.data_layout, out_type.dtype)]


def compute_conv2d_winograd_weight_transform(attrs, inputs, out_type):
    from irlab.topi.nn.winograd import conv2d_winograd_weight_transform

    return [conv2d_winograd_weight_transform(inputs[0], attrs.tile_size)]


def compute_conv2d_winograd_nchwc(attrs, inputs, out_type):
    from irlab.topi.nn.winograd import conv2d_NCHWc_winograd

    return [conv2d_NCHWc_winograd(inputs[0], inputs[1], attrs.tile_size, _pad(attrs),
                                  out_type.dtype)]


def compute_conv2d_nchw_im2col(attrs, inputs, out_type, bn=64):
    from irlab import topi

    return [topi.nn.conv2d.conv2d_nchw_im2col(inputs[0], inputs[1], attrs.strides,
                                              _pad(attrs), attrs.dilation, out_type.dtype,
                                              bn=bn)]


# Below this many output pixels (all images), im2col + GEMM beats the direct NCHW schedule:
# the GEMM reads the OIHW weight as it is, the direct schedule has to pack it on every call
# (benchmarks/bench_conv.py: ResNet-18's 7x7 layers; measured with that per-call packing,
# which AlterOpLayout + FoldConstant now do once at opt_level 3).
IM2COL_MAX_PIXELS = 64


def compute_conv2d_transpose(attrs, inputs, out_type):
    from irlab import topi

    return [topi.nn.conv2d.conv2d_transpose(
        inputs[0], inputs[1], attrs.strides, _pad(attrs), attrs.output_padding, attrs.dilation,
        attrs.groups, attrs.data_layout, attrs.kernel_layout, attrs.out_layout,
        out_type.dtype)]


def _compute_pool(kind):
    def compute(attrs, inputs, out_type):
        from irlab.topi.nn.pooling import pool2d

        return [pool2d(inputs[0], kind, attrs.pool_size, attrs.strides, attrs.dilation,
                       _pad(attrs), attrs.layout, attrs.ceil_mode,
                       getattr(attrs, "count_include_pad", False),
                       out_shape=tuple(int(d) for d in out_type.shape))]
    return compute


def _compute_global_pool(kind):
    def compute(attrs, inputs, out_type):
        from irlab.topi.nn.pooling import global_pool

        return [global_pool(inputs[0], kind, attrs.layout)]
    return compute


def _compute_adaptive_pool(kind):
    def compute(attrs, inputs, out_type):
        from irlab.topi.nn.pooling import adaptive_pool

        return [adaptive_pool(inputs[0], kind, tuple(attrs.output_size or ()), attrs.layout)]
    return compute


def compute_lrn(attrs, inputs, out_type):
    from irlab.topi.nn.pooling import lrn

    return [lrn(inputs[0], attrs.size, attrs.axis, attrs.alpha, attrs.beta, attrs.bias)]


def compute_instance_norm(attrs, inputs, out_type):
    from irlab.topi.nn.norm import instance_norm

    return [instance_norm(inputs[0], inputs[1], inputs[2], attrs.axis, attrs.epsilon,
                          attrs.center, attrs.scale)]


# -- strategies ----------------------------------------------------------------------------
def _schedule(name):
    """An fschedule(attrs, sch, outs, target) calling ``irlab.topi.x86.<name>`` lazily."""
    def fschedule(attrs, sch, outs, target):
        from irlab.topi import x86

        if name == "schedule_instance_norm_op":  # the TOPI-style schedule of topi.x86.norm
            return x86.schedule_instance_norm(sch, outs, target)
        return getattr(x86, name)(attrs, sch, outs, target)

    fschedule.__name__ = name
    return fschedule


def _pixels(out_type):
    shape = [int(d) for d in out_type.shape]
    return shape[0] * shape[2] * shape[3]


def _use_im2col(attrs, out_type, target):
    """NCHW conv2d as im2col + GEMM: small images (the direct schedule's weight packing does
    not pay), or strided convolutions whose output channels do not fill vectors (the direct
    schedule would then vectorize strided columns: 4-7 vs 25 GFLOPS on 64>24 56x56 3x3/2)."""
    from irlab.topi.x86.register_tile import vector_lanes

    if _pixels(out_type) < IM2COL_MAX_PIXELS:
        return True
    channels = int(out_type.shape[1])
    return int(attrs.strides[1]) > 1 and channels % vector_lanes(out_type.dtype, target) != 0


@generic_func
def conv2d_strategy(attrs, inputs, out_type, target):
    strategy = OpStrategy()
    strategy.add_implementation(compute_conv2d, _no_schedule, "conv2d.generic")
    return strategy


def conv2d_kind(attrs, inputs):
    """"depthwise", "nchw", "nchw_prepacked" (NCHW data, ``OIHW{n}o`` kernel), "nhwc" or
    "other" for a conv2d call (``inputs``: tensors or types with a shape)."""
    from irlab.relay.op.nn._utils import kernel_out_channels
    from irlab.tir.data_layout import split_kernel_layout

    data_layout, kernel_layout = attrs.data_layout, attrs.kernel_layout
    in_ch = int(inputs[0].shape[data_layout.index("C")])
    out_ch = kernel_out_channels(inputs[1].shape, kernel_layout)
    out_layout = attrs.out_layout or data_layout
    if attrs.groups > 1 and attrs.groups == in_ch == out_ch:
        return "depthwise"
    if attrs.groups != 1 or out_layout != data_layout:
        return "other"
    primal, block = split_kernel_layout(kernel_layout)
    if data_layout == "NCHW" and primal == "OIHW":
        return "nchw" if block is None else "nchw_prepacked"
    if data_layout == "NHWC" and kernel_layout in ("HWIO", "OHWI"):
        return "nhwc"
    return "other"


# PassContext key of the NCHWc conv2d, on by default as in TVM: ResNet-18 ran in 0.85-0.99x
# (median 0.92x) the time of the packed NCHW schedule at 1 and 2 threads in five runs of
# benchmarks/bench_e2e.py --compare-nchw (interleaved; Xeon Emerald Rapids, AVX-512).
# False keeps NCHW + OIHW{n}o.
NCHWC_CONFIG = "relay.x86.conv2d_NCHWc"


def use_nchwc(attrs, tinfos, out_type, target):
    """``(x, y)``, the input- and output-channel blocks AlterOpLayout gives an x86 conv2d
    (``nn.contrib_conv2d_NCHWc`` on ``NCHW{x}c`` data, ``OIHW{x}i{y}o`` kernel, ``NCHW{y}c``
    output, as TVM's x86 ``conv2d_NCHWc``), or None to keep it: NCHW/OIHW float32 with one
    group whose output channels fill vectors. ``y`` is the vector lanes; ``x`` too when the
    input channels are a multiple of them (the layout the conv before wrote), else 1: NCHW
    data is already ``NCHW1c`` but for a unit axis, so an RGB image needs no copy (the layout
    rewriter makes that transform an ``expand_dims``, a no-op in the graph executor), where
    TVM's ``NCHW3c`` copies it (0.4 ms for ResNet-18's 224x224 input). None as well under
    ``PassContext(config={"relay.x86.conv2d_NCHWc": False})`` (the packed NCHW schedule with an
    ``OIHW{n}o`` kernel runs then)."""
    from irlab.topi.x86.register_tile import vector_lanes
    from irlab.transform import PassContext

    if not PassContext.current().config.get(NCHWC_CONFIG, True):
        return None
    data, weight = tinfos[0], tinfos[1]
    if attrs.data_layout != "NCHW" or attrs.kernel_layout != "OIHW" or attrs.groups != 1:
        return None
    if (attrs.out_layout or "NCHW") != "NCHW":
        return None
    if {str(data.dtype), str(weight.dtype), str(out_type.dtype)} != {"float32"}:
        return None
    if conv2d_kind(attrs, [data, weight]) != "nchw":
        return None
    lanes = vector_lanes(out_type.dtype, target)
    if int(out_type.shape[1]) % lanes:
        return None
    return (lanes if int(data.shape[1]) % lanes == 0 else 1), lanes


# PassContext key of the Winograd conv2d: 3x3 stride-1 convs that AlterOpLayout blocks
# (use_nchwc) become Winograd F(m, 3), the kernel transformed once by FoldConstant. Unset, it
# follows "relay.backend.use_meta_schedule", as TVM's x86 strategy offers Winograd only to
# its auto-schedulers: ResNet-18 then runs in 0.65 / 0.78x onnxruntime's time at 1 / 2
# threads against 1.16 / 1.09x with the direct convs (one interleaved bench_e2e run), but its
# cold relay.build takes 2.9-4.5 s instead of ~2 s (12 Winograd kernels of six stages each
# to schedule and lower in Python; Xeon Emerald Rapids, bench_e2e.py --compare-winograd and
# bench_build.py). True / False force it on / off.
WINOGRAD_CONFIG = "relay.x86.conv2d_winograd"
WINOGRAD_MIN_CHANNELS = 32  # input and output channels (below, the GEMMs are too short)


def use_winograd(attrs, tinfos, out_type, blocks, constant_kernel):
    """The tile size m of Winograd F(m, 3) AlterOpLayout gives an x86 conv2d that ``use_nchwc``
    blocks as ``blocks``, or None to keep the direct ``nn.contrib_conv2d_NCHWc``: a 3x3,
    stride-1, dilation-1 conv with a constant kernel (transformed once by FoldConstant; TVM's
    x86 build has no Winograd), input channels in whole blocks, >= WINOGRAD_MIN_CHANNELS
    channels. m = 4 (4x fewer products) on outputs of 16+ rows and columns, else 2 (2.25x
    fewer; the 4 x 4 tiles of m = 4 waste more of a small output). Measured on ResNet-18's
    layers, 1 thread, against the NCHWc conv (Xeon Emerald Rapids, AVX-512): 64x56x56 0.49x
    the time (m = 4), 128x28x28 0.40x (m = 4; 0.63x with m = 2), 256x14x14 0.60x (m = 2;
    0.63x with m = 4), 512x7x7 0.86x (m = 2; 0.97x with m = 4). On when
    ``WINOGRAD_CONFIG`` says so, or (unset) under ``relay.backend.use_meta_schedule``:
    ``compile_relay`` / ``tune_relay``, or ``PassContext(config={"relay.x86.conv2d_winograd":
    True})``."""
    from irlab.transform import PassContext

    config = PassContext.current().config
    enabled = config.get(WINOGRAD_CONFIG)
    if enabled is None:
        enabled = bool(config.get("relay.backend.use_meta_schedule", False))
    if not enabled or not constant_kernel:
        return None
    x, y = blocks
    data, weight = tinfos[0], tinfos[1]
    if x != y or tuple(int(d) for d in weight.shape[2:]) != (3, 3):
        return None
    if tuple(attrs.strides) != (1, 1) or tuple(attrs.dilation) != (1, 1):
        return None
    if min(int(data.shape[1]), int(weight.shape[0])) < WINOGRAD_MIN_CHANNELS:
        return None
    out_h, out_w = int(out_type.shape[2]), int(out_type.shape[3])
    return 4 if min(out_h, out_w) >= 16 else 2


def use_prepacked_kernel(attrs, tinfos, out_type, target):
    """The output-channel block ``n`` AlterOpLayout gives a conv2d's kernel (``OIHW{n}o``, packed
    once by FoldConstant), or None to keep it: NCHW/OIHW float32 with one group whose output
    channels fill vectors (``nchw_packed_tile`` decides and chooses the block, for the hook and
    the schedule alike). Small images too: im2col + GEMM beat the packed schedule there only
    because the latter packed the weight on every call."""
    from irlab.topi.x86.conv2d import nchw_packed_tile

    data, weight = tinfos[0], tinfos[1]
    if attrs.data_layout != "NCHW" or attrs.kernel_layout != "OIHW" or attrs.groups != 1:
        return None
    if (attrs.out_layout or "NCHW") != "NCHW":
        return None
    dtypes = {str(data.dtype), str(weight.dtype), str(out_type.dtype)}
    if dtypes != {"float32"}:
        return None
    if conv2d_kind(attrs, [data, weight]) != "nchw":
        return None
    tile = nchw_packed_tile(out_type.shape, target, out_type.dtype, packed_per_call=False)
    return None if tile is None else tile[1]


@conv2d_strategy.register("cpu")
def _conv2d_strategy_cpu(attrs, inputs, out_type, target):
    strategy = OpStrategy()
    kind = conv2d_kind(attrs, inputs)
    strategy.add_implementation(compute_conv2d, _no_schedule, "conv2d.generic")
    if kind == "nchw" and _use_im2col(attrs, out_type, target):
        from irlab.topi.x86.conv2d import im2col_panel

        bn = im2col_panel(target, out_type.dtype)
        strategy.add_implementation(lambda a, i, o: compute_conv2d_nchw_im2col(a, i, o, bn=bn),
                                    _schedule("schedule_conv2d_nchw_im2col"),
                                    "conv2d_nchw_im2col.x86", plevel=15)
    else:
        strategy.add_implementation(compute_conv2d, _schedule(f"schedule_conv2d_{kind}"),
                                    f"conv2d_{kind}.x86", plevel=15)
    return strategy


@generic_func
def conv2d_NCHWc_strategy(attrs, inputs, out_type, target):
    strategy = OpStrategy()
    strategy.add_implementation(compute_conv2d_NCHWc, _no_schedule, "conv2d_NCHWc.generic")
    return strategy


@conv2d_NCHWc_strategy.register("cpu")
def _conv2d_NCHWc_strategy_cpu(attrs, inputs, out_type, target):
    strategy = OpStrategy()
    strategy.add_implementation(compute_conv2d_NCHWc, _no_schedule, "conv2d_NCHWc.generic")
    strategy.add_implementation(compute_conv2d_NCHWc, _schedule("schedule_conv2d_NCHWc"),
                                "conv2d_NCHWc.x86", plevel=15)
    return strategy


@generic_func
def conv2d_winograd_weight_transform_strategy(attrs, inputs, out_type, target):
    """The loops as written, on every target: FoldConstant computes a constant kernel's
    transform with the op's reference; compiled, it runs only for a kernel given at run time."""
    strategy = OpStrategy()
    strategy.add_implementation(compute_conv2d_winograd_weight_transform, _no_schedule,
                                "conv2d_winograd_weight_transform.generic")
    return strategy


@generic_func
def conv2d_transpose_strategy(attrs, inputs, out_type, target):
    strategy = OpStrategy()
    strategy.add_implementation(compute_conv2d_transpose, _no_schedule,
                                "conv2d_transpose.generic")
    return strategy


@conv2d_transpose_strategy.register("cpu")
def _conv2d_transpose_strategy_cpu(attrs, inputs, out_type, target):
    strategy = OpStrategy()
    strategy.add_implementation(compute_conv2d_transpose,
                                _schedule("schedule_conv2d_transpose"),
                                "conv2d_transpose.x86", plevel=15)
    return strategy


def _simple_strategy(name, fcompute, schedule_name):
    @generic_func
    def strategy(attrs, inputs, out_type, target):
        s = OpStrategy()
        s.add_implementation(fcompute, _no_schedule, f"{name}.generic")
        return s

    @strategy.register("cpu")
    def _cpu(attrs, inputs, out_type, target):
        s = OpStrategy()
        s.add_implementation(fcompute, _schedule(schedule_name), f"{name}.x86", plevel=15)
        return s

    strategy.__name__ = f"{name}_strategy"
    return strategy


pool_strategies = {
    "nn.max_pool2d": _simple_strategy("max_pool2d", _compute_pool("max"), "schedule_pool"),
    "nn.avg_pool2d": _simple_strategy("avg_pool2d", _compute_pool("avg"), "schedule_pool"),
    "nn.global_max_pool2d": _simple_strategy("global_max_pool2d", _compute_global_pool("max"),
                                             "schedule_pool"),
    "nn.global_avg_pool2d": _simple_strategy("global_avg_pool2d", _compute_global_pool("avg"),
                                             "schedule_pool"),
    "nn.adaptive_max_pool2d": _simple_strategy("adaptive_max_pool2d",
                                               _compute_adaptive_pool("max"), "schedule_pool"),
    "nn.adaptive_avg_pool2d": _simple_strategy("adaptive_avg_pool2d",
                                               _compute_adaptive_pool("avg"), "schedule_pool"),
}
conv2d_winograd_nchwc_strategy = _simple_strategy(
    "conv2d_NCHWc_winograd", compute_conv2d_winograd_nchwc, "schedule_conv2d_NCHWc_winograd")
lrn_strategy = _simple_strategy("lrn", compute_lrn, "schedule_lrn")
instance_norm_strategy = _simple_strategy("instance_norm", compute_instance_norm,
                                          "schedule_instance_norm_op")


def register(op_name, fcompute, fstrategy, level=10):
    register_compute(op_name, fcompute, level)
    register_strategy(op_name, fstrategy, level)


def register_conv():
    register("nn.conv2d", compute_conv2d, conv2d_strategy)
    register("nn.contrib_conv2d_NCHWc", compute_conv2d_NCHWc, conv2d_NCHWc_strategy)


def register_winograd():
    register("nn.contrib_conv2d_winograd_weight_transform",
             compute_conv2d_winograd_weight_transform, conv2d_winograd_weight_transform_strategy)
    register("nn.contrib_conv2d_winograd_without_weight_transform",
             compute_conv2d_winograd_nchwc, conv2d_winograd_nchwc_strategy)


def register_conv_transpose():
    register("nn.conv2d_transpose", compute_conv2d_transpose, conv2d_transpose_strategy)


def register_pooling():
    computes = {"nn.max_pool2d": _compute_pool("max"), "nn.avg_pool2d": _compute_pool("avg"),
                "nn.global_max_pool2d": _compute_global_pool("max"),
                "nn.global_avg_pool2d": _compute_global_pool("avg"),
                "nn.adaptive_max_pool2d": _compute_adaptive_pool("max"),
                "nn.adaptive_avg_pool2d": _compute_adaptive_pool("avg")}
    for name, strategy in pool_strategies.items():
        register(name, computes[name], strategy)


def register_local_norm():
    register("nn.lrn", compute_lrn, lrn_strategy)
    register("nn.instance_norm", compute_instance_norm, instance_norm_strategy)


__all__ = ["conv2d_strategy", "conv2d_NCHWc_strategy", "conv2d_transpose_strategy",
           "pool_strategies", "lrn_strategy",
           "instance_norm_strategy", "conv2d_kind", "use_prepacked_kernel", "use_nchwc",
           "NCHWC_CONFIG"]
