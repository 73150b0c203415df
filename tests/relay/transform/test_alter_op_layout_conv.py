"""The CPU AlterOpLayout hook of nn.conv2d with the NCHWc conv off
(``relay.x86.conv2d_NCHWc: False``; on, the default, is test_alter_op_layout_nchwc.py):
convolutions the packed schedule runs get an ``OIHW{n}o`` kernel (n from ``nchw_packed_tile``,
shared with the schedule), FoldConstant then packs constant weights once, and the built
kernels read them with no packing stage."""

import re

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.relay.op.strategy.conv import NCHWC_CONFIG
from irlab.target import Target
from irlab.topi.x86.conv2d import nchw_packed_tile
from _alter_layout import (alter, build, calls, interpret, lowered_kernels,
                           primitive_functions, run)

HOST = Target("llvm")  # these tests run the code they build: sized for the host
LANES = HOST.vector_width("float32")
PACK = re.compile(r"\bp\d+_global\b")  # the per-call packing buffer of the packed schedule
PACKED = {NCHWC_CONFIG: False}  # the packed NCHW schedule, not the NCHWc conv


def _conv_net(params_as_constants, rng, channels=(3, 2 * LANES, 4 * LANES), size=16):
    """conv(3x3) -> relu -> conv(3x3, stride 2) + bias: both convs packed-schedule sized."""
    c0, c1, c2 = channels
    x = relay.var("x", shape=(1, c0, size, size))
    arrays = {"w1": rng.uniform(-1, 1, (c1, c0, 3, 3)).astype("float32"),
              "w2": rng.uniform(-1, 1, (c2, c1, 3, 3)).astype("float32"),
              "b2": rng.uniform(-1, 1, (c2,)).astype("float32")}
    if params_as_constants:
        w1, w2, b2 = (relay.const(arrays[k]) for k in ("w1", "w2", "b2"))
        free = []
    else:
        w1, w2, b2 = (relay.var(k, shape=v.shape) for k, v in arrays.items())
        free = [w1, w2, b2]
    y = relay.nn.relu(relay.nn.conv2d(x, w1, padding=1))
    y = relay.nn.bias_add(relay.nn.conv2d(y, w2, strides=2, padding=1), b2)
    mod = irlab.IRModule.from_expr(relay.Function([x] + free, y))
    inputs = {"x": rng.uniform(-1, 1, (1, c0, size, size)).astype("float32")}
    if not params_as_constants:
        inputs.update(arrays)
    return relay.transform.InferType()(mod), inputs


def _expected_block(conv):
    return nchw_packed_tile(conv.checked_type.shape, HOST)[1]


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_alter_gives_packed_kernels_and_keeps_numerics(target):
    rng = np.random.default_rng(0)
    mod, inputs = _conv_net(False, rng)
    after = relay.transform.InferType()(alter(mod, target, PACKED))
    convs = calls(after["main"], "nn.conv2d")
    assert [c.attrs.kernel_layout for c in convs] == [
        f"OIHW{_expected_block(c)}o" for c in convs]
    transforms = calls(after["main"], "layout_transform")
    assert sorted(t.attrs.dst_layout for t in transforms) == sorted(
        c.attrs.kernel_layout for c in convs)
    assert all(t.attrs.src_layout == "OIHW" for t in transforms)
    np.testing.assert_allclose(interpret(after, inputs), interpret(mod, inputs),
                               rtol=1e-5, atol=1e-5)


def test_no_target_keeps_conv():
    mod, _ = _conv_net(False, np.random.default_rng(0))
    after = alter(mod, target=None)
    assert all(c.attrs.kernel_layout == "OIHW" for c in calls(after["main"], "nn.conv2d"))


@pytest.mark.parametrize("dshape,wshape,kwargs", [
    ((1, 8, 12, 12), (LANES + 1, 8, 3, 3), dict(padding=1)),        # channels fill no vector
    ((1, 8, 12, 12), (2 * LANES, 4, 3, 3), dict(padding=1, groups=2)),  # grouped
    ((1, 8, 12, 12), (8, 1, 3, 3), dict(padding=1, groups=8)),      # depthwise
    ((1, 12, 12, 8), (3, 3, 8, 2 * LANES), dict(padding=1, data_layout="NHWC",
                                                 kernel_layout="HWIO")),
    ((1, 8, 12, 12), (2 * LANES, 8, 3, 3), dict(padding=1, out_layout="NHWC")),
    ((1, 8, 12, 12), (2 * LANES, 8, 3, 3), dict(padding=1, out_dtype="float64")),
])
@pytest.mark.parametrize("config", [PACKED, {}], ids=["packed", "nchwc"])
def test_convs_the_packed_schedule_does_not_run_stay(dshape, wshape, kwargs, config):
    """Neither the packed NCHW schedule nor the NCHWc conv takes these."""
    x, w = relay.var("x", shape=dshape), relay.var("w", shape=wshape)
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(
        relay.Function([x, w], relay.nn.conv2d(x, w, **kwargs))))
    after = alter(mod, config=config)
    assert irlab.ir.structural_equal(after, mod)


def test_build_with_params_folds_the_packing():
    rng = np.random.default_rng(1)
    mod, inputs = _conv_net(False, rng)
    params = {k: inputs.pop(k) for k in ("w1", "w2", "b2")}
    want = relay.create_executor("debug", mod=mod, params=params).evaluate()(**inputs).numpy()
    lib = build(mod, params, 3, config=PACKED)
    main = lib.ir_mod["main"]
    assert not calls(main, "layout_transform")  # folded into the constants
    blocks = set()
    for func in primitive_functions(main):
        for conv in calls(func, "nn.conv2d"):
            blocks.add(conv.attrs.kernel_layout)
    assert blocks == {f"OIHW{nchw_packed_tile((1, 2 * LANES, 16, 16), HOST)[1]}o",
                      f"OIHW{nchw_packed_tile((1, 4 * LANES, 8, 8), HOST)[1]}o"}
    kernels = lowered_kernels(lib, "conv2d")
    assert len(kernels) == 2
    for name, text in kernels.items():
        assert not PACK.search(text), f"{name} still packs its weight"
    np.testing.assert_allclose(run(lib, inputs), want, rtol=1e-4, atol=1e-4)


def test_build_with_weights_as_inputs():
    rng = np.random.default_rng(2)
    mod, inputs = _conv_net(False, rng)
    want = interpret(mod, inputs)
    lib = build(mod, None, 3, config=PACKED)
    main = lib.ir_mod["main"]
    transforms = [c for f in primitive_functions(main) for c in calls(f, "layout_transform")]
    assert len(transforms) == 2  # the packing runs as kernels of their own
    assert not any(PACK.search(t) for t in lowered_kernels(lib, "conv2d").values())
    np.testing.assert_allclose(run(lib, inputs), want, rtol=1e-4, atol=1e-4)


def test_relay_optimize_uses_its_target():
    """relay.optimize(mod, target) runs AlterOpLayout under ``target`` (no ``with`` needed)."""
    mod, _ = _conv_net(True, np.random.default_rng(8))
    with irlab.transform.PassContext(opt_level=3, config=PACKED):
        out, _ = relay.optimize(mod, "llvm")
    convs = [c for f in primitive_functions(out["main"]) for c in calls(f, "nn.conv2d")]
    assert len(convs) == 2 and all(c.attrs.kernel_layout.endswith("o") for c in convs)
    assert not calls(out["main"], "layout_transform")


def test_c_target_build_packs_once():
    rng = np.random.default_rng(7)
    mod, inputs = _conv_net(True, rng)
    want = interpret(mod, inputs)
    with irlab.transform.PassContext(opt_level=3, config=PACKED):
        lib = relay.build(mod, "c")
    convs = [c for f in primitive_functions(lib.ir_mod["main"])
             for c in calls(f, "nn.conv2d")]
    assert len(convs) == 2 and all(c.attrs.kernel_layout != "OIHW" for c in convs)
    np.testing.assert_allclose(run(lib, inputs), want, rtol=1e-4, atol=1e-4)


def test_opt_level_2_packs_per_call():
    """Without AlterOpLayout (opt_level < 3) the packed schedule packs on every call."""
    rng = np.random.default_rng(3)
    mod, inputs = _conv_net(True, rng)
    want = interpret(mod, inputs)
    lib = build(mod, None, 2, config=PACKED)
    kernels = lowered_kernels(lib, "conv2d")
    assert all(PACK.search(t) for t in kernels.values())
    np.testing.assert_allclose(run(lib, inputs), want, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------------------------
# passes that read kernel_layout, run on split-kernel convs (what AlterOpLayout leaves)
def _split_conv_module(make_body, shapes, rng):
    args = [relay.var(name, shape=shape) for name, shape in shapes.items()]
    mod = irlab.IRModule.from_expr(relay.Function(args, make_body(*args)))
    inputs = {name: rng.uniform(-1, 1, shape).astype("float32") for name, shape in shapes.items()}
    return relay.transform.InferType()(mod), inputs


def _check_pass(mod, inputs, pass_):
    with irlab.transform.PassContext(opt_level=3):
        after = relay.transform.InferType()(pass_(mod))
    np.testing.assert_allclose(interpret(after, inputs), interpret(mod, inputs),
                               rtol=1e-5, atol=1e-5)
    return after


def test_combine_parallel_conv2d_concatenates_split_kernels():
    def body(x, w1, w2):
        a = relay.nn.conv2d(x, w1, padding=1, kernel_layout="OIHW8o")
        b = relay.nn.conv2d(x, w2, padding=1, kernel_layout="OIHW8o")
        return relay.Tuple([relay.nn.relu(a), relay.nn.relu(b)])

    mod, inputs = _split_conv_module(body, {"x": (1, 4, 6, 6), "w1": (2, 4, 3, 3, 8),
                                            "w2": (1, 4, 3, 3, 8)}, np.random.default_rng(4))
    mod = irlab.IRModule.from_expr(mod["main"])
    with irlab.transform.PassContext(opt_level=3):
        after = relay.transform.InferType()(relay.transform.CombineParallelConv2D(2)(mod))
    (conv,) = calls(after["main"], "nn.conv2d")
    assert conv.attrs.channels == 24 and conv.attrs.kernel_layout == "OIHW8o"
    got = relay.create_executor("debug", mod=after).evaluate()(**inputs)
    want = relay.create_executor("debug", mod=mod).evaluate()(**inputs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)


def test_fold_scale_axis_leaves_split_kernels_alone():
    scale = relay.const(np.linspace(0.5, 2.0, 4).reshape(4, 1, 1).astype("float32"))

    def body(x, w):
        y = relay.nn.conv2d(relay.multiply(x, scale), w, padding=1, kernel_layout="OIHW8o")
        return relay.multiply(relay.nn.relu(y), relay.const(2.0))

    mod, inputs = _split_conv_module(body, {"x": (1, 4, 6, 6), "w": (2, 4, 3, 3, 8)},
                                     np.random.default_rng(5))
    after = _check_pass(mod, inputs, relay.transform.FoldScaleAxis())
    assert [c.attrs.kernel_layout for c in calls(after["main"], "nn.conv2d")] == ["OIHW8o"]


def test_convert_layout_from_split_kernel():
    mod, inputs = _split_conv_module(
        lambda x, w: relay.nn.relu(relay.nn.conv2d(x, w, padding=1, kernel_layout="OIHW8o")),
        {"x": (1, 4, 6, 6), "w": (2, 4, 3, 3, 8)}, np.random.default_rng(6))
    after = _check_pass(mod, inputs, relay.transform.ConvertLayout(
        {"nn.conv2d": ["NHWC", "default"]}))
    (conv,) = calls(after["main"], "nn.conv2d")
    assert (conv.attrs.data_layout, conv.attrs.kernel_layout) == ("NHWC", "HWIO")


def test_is_depthwise_with_split_kernel():
    from irlab.relay.op.nn.conv import is_depthwise_conv2d

    assert is_depthwise_conv2d((1, 16, 8, 8), "NCHW", (2, 1, 3, 3, 8), "OIHW8o", 16)
    assert not is_depthwise_conv2d((1, 16, 8, 8), "NCHW", (2, 1, 3, 3, 8), "OIHW4o", 16)


def test_small_images_get_packed_kernels_too():
    """Below 64 output pixels a conv whose weight would be packed on every call runs as
    im2col + GEMM; packed once by AlterOpLayout + FoldConstant, it runs the packed tile
    (no im2col copy), on the weight block the schedule asks for."""
    rng = np.random.default_rng(3)
    x = relay.var("x", shape=(1, 8, 4, 4))
    w = rng.uniform(-1, 1, (2 * LANES, 8, 3, 3)).astype("float32")
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(
        relay.Function([x], relay.nn.relu(relay.nn.conv2d(x, relay.const(w), padding=1)))))
    inputs = {"x": rng.uniform(-1, 1, (1, 8, 4, 4)).astype("float32")}
    after = relay.transform.InferType()(alter(mod, config=PACKED))
    (conv,) = calls(after["main"], "nn.conv2d")
    block = nchw_packed_tile(conv.checked_type.shape, HOST, packed_per_call=False)[1]
    assert conv.attrs.kernel_layout == f"OIHW{block}o"
    lib = build(mod, None, 3, config=PACKED)
    kernels = lowered_kernels(lib, "conv2d")
    assert kernels and not any(re.search(r"\bcol\b", t) or PACK.search(t)
                               for t in kernels.values())  # no im2col matrix, no packing
    np.testing.assert_allclose(run(lib, inputs), interpret(mod, inputs), rtol=1e-4, atol=1e-4)
