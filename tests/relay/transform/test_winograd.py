"""Winograd F(m, 3) convolution: the TE compute (``topi.nn.winograd``) and its x86 schedule
against a direct convolution in numpy, the two Relay ops (type relations, references,
errors), and the AlterOpLayout rewrite of x86 3x3 stride-1 convs (on under MetaSchedule or by
config) with the whole program numerically equal to the reference interpreter."""

import numpy as np
import pytest

import irlab
from irlab import relay, te, tir
from irlab.errors import IrlabError
from irlab.relay.op.strategy.conv import WINOGRAD_CONFIG
from irlab.target import Target
from irlab.topi.nn.winograd import (conv2d_NCHWc_winograd, conv2d_winograd_weight_transform,
                                    winograd_matrices)
from irlab.topi.x86.conv2d_winograd import schedule_conv2d_NCHWc_winograd
from _alter_layout import alter, calls, interpret, primitive_functions, run

AVX2, AVX512 = "llvm -mcpu=haswell", "llvm -mcpu=skylake-avx512"


def direct_conv(data, weight, pad):
    """NCHW/OIHW stride-1 conv in float64 numpy; pad = (top, left, bottom, right)."""
    top, left, bottom, right = pad
    padded = np.pad(data.astype("float64"), ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, _, h, w = padded.shape
    out = np.zeros((n, weight.shape[0], h - 2, w - 2))
    for a in range(3):
        for b in range(3):
            out += np.einsum("nchw,kc->nkhw", padded[:, :, a:a + h - 2, b:b + w - 2],
                             weight[:, :, a, b].astype("float64"))
    return out


def blocked(x, block):
    n, c, h, w = x.shape
    return x.reshape(n, c // block, block, h, w).transpose(0, 1, 3, 4, 2).copy()


def unblocked(x):
    n, c, h, w, b = x.shape
    return x.transpose(0, 1, 4, 2, 3).reshape(n, c * b, h, w)


def transformed_kernel(weight, m, x, y):
    """G w G^T in numpy, blocked as (m + 2, m + 2, O / y, I / x, x, y)."""
    _, g, _ = (np.array(t, dtype="float64") for t in winograd_matrices(m))
    u = np.einsum("ea,oiab,fb->efoi", g, weight.astype("float64"), g)
    alpha, o, i = m + 2, weight.shape[0], weight.shape[1]
    return u.reshape(alpha, alpha, o // y, y, i // x, x).transpose(0, 1, 2, 4, 5, 3) \
        .astype("float32").copy()


def test_matrices_make_a_3x3_convolution_of_each_tile():
    rng = np.random.default_rng(0)
    for m in (2, 4):
        bt, g, at = (np.array(t, dtype="float64") for t in winograd_matrices(m))
        d, w = rng.standard_normal((m + 2, m + 2)), rng.standard_normal((3, 3))
        y = at @ ((g @ w @ g.T) * (bt @ d @ bt.T)) @ at.T
        direct = [[(d[i:i + 3, j:j + 3] * w).sum() for j in range(m)] for i in range(m)]
        np.testing.assert_allclose(y, direct, atol=1e-12)
    with pytest.raises(IrlabError, match="tile_size must be one of"):
        winograd_matrices(3)


def _compiled(m, dshape, kshape, pad, target, schedule):
    d = te.placeholder(dshape, name="data")
    u = te.placeholder(kshape, name="u")
    out = conv2d_NCHWc_winograd(d, u, m, pad)
    sch = tir.Schedule(te.create_prim_func([d, u, out]))
    if schedule:
        tgt = Target(target)
        with tgt:
            schedule_conv2d_NCHWc_winograd(None, sch, [out], tgt)
    return sch, out


@pytest.mark.parametrize("m,c,k,hw,pad,batch,schedule", [
    (4, 16, 16, (10, 10), (1, 1, 1, 1), 1, False),
    (2, 16, 32, (7, 9), (1, 1, 1, 1), 2, False),
    (4, 32, 16, (13, 6), (0, 2, 1, 0), 1, True),   # outputs not whole tiles, uneven padding
    (2, 32, 32, (7, 7), (1, 1, 1, 1), 1, True),
    (4, 64, 32, (16, 16), (1, 1, 1, 1), 2, True),
])
def test_winograd_equals_the_direct_convolution(m, c, k, hw, pad, batch, schedule):
    """Unscheduled and with the x86 schedule (AVX2 code, which runs on every x86 host)."""
    rng = np.random.default_rng(1)
    lanes = 8
    data = rng.standard_normal((batch, c) + hw).astype("float32")
    weight = rng.standard_normal((k, c, 3, 3)).astype("float32")
    u = transformed_kernel(weight, m, lanes, lanes)
    sch, out = _compiled(m, (batch, c // lanes) + hw + (lanes,), u.shape, pad, AVX2, schedule)
    f = irlab.build(sch.mod, target=AVX2)
    got = irlab.nd.empty(tuple(int(s) for s in out.shape))
    f(irlab.nd.array(blocked(data, lanes)), irlab.nd.array(u), got)
    want = direct_conv(data, weight, pad)
    scale = np.abs(want).max()
    tol = 1e-5 if m == 4 else 2e-6  # m = 4 scales values by up to 8 before summing them
    np.testing.assert_allclose(unblocked(got.numpy()) / scale, want / scale, atol=tol)
    if schedule:
        for _ in range(3):  # the temporaries a call caches are reused: the same result
            f(irlab.nd.array(blocked(data, lanes)), irlab.nd.array(u), got)
        np.testing.assert_allclose(unblocked(got.numpy()) / scale, want / scale, atol=tol)


def test_avx512_schedule_is_vector_code_with_the_coefficients_folded():
    """Compiled and inspected (the host may lack AVX-512): three parallel loop nests, the
    GEMM's register tile in zmm FMAs, the transforms' Select chains gone."""
    sch, _ = _compiled(4, (1, 4, 56, 56, 16), (6, 6, 4, 4, 16, 16), (1, 1, 1, 1), AVX512,
                       True)
    text = sch.mod.script()
    assert text.count("T.parallel") == 3 and "T.vectorized(16)" in text
    lib = irlab.build(sch.mod, target=AVX512)
    ll = lib.get_source("ll")
    assert "select" not in "".join(line for line in ll.splitlines() if "fmul" in line)
    asm = lib.get_source("asm")
    assert "vfmadd231ps" in asm and "%zmm" in asm


def test_weight_transform_compute_and_reference_agree():
    rng = np.random.default_rng(2)
    weight = rng.standard_normal((8, 4, 3, 3)).astype("float32")
    for m in (2, 4):
        w = te.placeholder(weight.shape, name="w")
        u = conv2d_winograd_weight_transform(w, m)
        f = irlab.build(te.create_prim_func([w, u]), target="llvm")
        got = irlab.nd.empty((m + 2, m + 2, 8, 4))
        f(irlab.nd.array(weight), got)
        wv = relay.var("w", shape=weight.shape)
        call = relay.nn.contrib_conv2d_winograd_weight_transform(wv, m)
        mod = irlab.IRModule.from_expr(relay.Function([wv], call))
        ref = interpret(mod, {"w": weight})
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-5)
        g = np.array(winograd_matrices(m)[1], dtype="float64")
        want = np.einsum("ea,oiab,fb->efoi", g, weight.astype("float64"), g)
        np.testing.assert_allclose(ref, want, rtol=1e-5, atol=1e-5)


def _winograd_call(dshape, kshape, **kwargs):
    data = relay.var("data", shape=dshape)
    weight = relay.var("weight", shape=kshape)
    call = relay.nn.contrib_conv2d_winograd_without_weight_transform(data, weight, **kwargs)
    return irlab.IRModule.from_expr(relay.Function([data, weight], call))


def test_op_reference_equals_the_direct_convolution():
    rng = np.random.default_rng(3)
    data = rng.standard_normal((2, 16, 9, 7)).astype("float32")
    weight = rng.standard_normal((8, 16, 3, 3)).astype("float32")
    for m in (2, 4):
        u = transformed_kernel(weight, m, 8, 8)
        mod = relay.transform.InferType()(_winograd_call(
            (2, 2, 9, 7, 8), u.shape, tile_size=m, padding=(1, 0, 2, 1),
            data_layout="NCHW8c", kernel_layout="HWOI8i8o", out_layout="NCHW8c"))
        assert mod["main"].body.checked_type.shape == (2, 1, 10, 6, 8)
        got = interpret(mod, {"data": blocked(data, 8), "weight": u})
        np.testing.assert_allclose(unblocked(got), direct_conv(data, weight, (1, 0, 2, 1)),
                                   rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dshape,kshape,kwargs,message", [
    ((1, 2, 8, 8, 8), (6, 6, 1, 2, 8, 8), dict(data_layout="NCHW", kernel_layout="HWOI8i8o"),
     "data_layout 'NCHW'"),
    ((1, 2, 8, 8, 8), (6, 6, 1, 2, 8, 8), dict(tile_size=3), "tile_size must be one of"),
    ((1, 2, 8, 8, 8), (4, 4, 1, 2, 8, 8), dict(), r"transformed kernel \(6, 6"),
    ((1, 2, 8, 8, 8), (6, 6, 1, 3, 8, 8), dict(), "input channels differ"),
    ((1, 2, 8, 8, 8), (6, 6, 1, 2, 8, 8), dict(strides=2), "stride-1"),
])
def test_bad_winograd_calls_are_named(dshape, kshape, kwargs, message):
    args = dict(tile_size=4, padding=1, data_layout="NCHW8c", kernel_layout="HWOI8i8o",
                out_layout="NCHW8c")
    args.update(kwargs)
    with pytest.raises(IrlabError, match=message):
        relay.transform.InferType()(_winograd_call(dshape, kshape, **args))
    weight = relay.var("w", shape=(4, 4, 5, 5))
    mod = irlab.IRModule.from_expr(relay.Function(
        [weight], relay.nn.contrib_conv2d_winograd_weight_transform(weight, 4)))
    with pytest.raises(IrlabError, match="OIHW 3x3 kernel"):
        relay.transform.InferType()(mod)


def _block(rng, c=32, size=16):
    """conv 3x3 + bias -> relu -> conv 3x3 + the input -> relu, then a stride-2 conv (which
    stays direct), on 32 channels: whole vectors of AVX2 and AVX-512."""
    x = relay.var("x", shape=(1, c, size, size))
    w = [relay.const(rng.uniform(-0.2, 0.2, (c, c, 3, 3)).astype("float32")) for _ in range(3)]
    bias = relay.const(rng.uniform(-1, 1, (c, 1, 1)).astype("float32"))
    y = relay.nn.relu(relay.add(relay.nn.conv2d(x, w[0], padding=1), bias))
    y = relay.nn.relu(relay.add(relay.nn.conv2d(y, w[1], padding=1), x))
    y = relay.nn.conv2d(y, w[2], strides=2, padding=1)
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(relay.Function([x], y)))
    return mod, {"x": rng.uniform(-1, 1, (1, c, size, size)).astype("float32")}


@pytest.mark.parametrize("config,winograd", [
    ({}, 0), ({"relay.backend.use_meta_schedule": True}, 2), ({WINOGRAD_CONFIG: True}, 2),
    ({"relay.backend.use_meta_schedule": True, WINOGRAD_CONFIG: False}, 0),
], ids=["default", "meta-schedule", "on", "off"])
def test_alter_op_layout_rewrites_3x3_stride_1_convs(config, winograd):
    mod, _ = _block(np.random.default_rng(4))
    after = alter(mod, AVX2, config)
    main = after["main"]
    assert len(calls(main, "nn.contrib_conv2d_winograd_without_weight_transform")) == winograd
    assert len(calls(main, "nn.contrib_conv2d_winograd_weight_transform")) == winograd
    assert len(calls(main, "nn.contrib_conv2d_NCHWc")) == 3 - winograd  # the stride-2 one
    for call in calls(main, "nn.contrib_conv2d_winograd_without_weight_transform"):
        assert (call.attrs.data_layout, call.attrs.kernel_layout, call.attrs.tile_size) == (
            "NCHW8c", "HWOI8i8o", 4)


def test_small_outputs_take_tile_size_2_and_few_channels_stay_direct():
    rng = np.random.default_rng(5)
    mod, _ = _block(rng, c=32, size=8)
    after = alter(mod, AVX2, {WINOGRAD_CONFIG: True})
    sizes = {c.attrs.tile_size
             for c in calls(after["main"], "nn.contrib_conv2d_winograd_without_weight_transform")}
    assert sizes == {2}
    mod, _ = _block(rng, c=16, size=16)
    after = alter(mod, AVX2, {WINOGRAD_CONFIG: True})
    assert not calls(after["main"], "nn.contrib_conv2d_winograd_without_weight_transform")


@pytest.mark.parametrize("size", [16, 8])
def test_network_with_winograd_equals_the_reference(size):
    """Built for AVX2 (runs here) with the kernels transformed by FoldConstant, the epilogues
    (bias, residual, ReLU) fused into the output transform."""
    rng = np.random.default_rng(6)
    mod, inputs = _block(rng, size=size)
    with irlab.transform.PassContext(opt_level=3, config={WINOGRAD_CONFIG: True}):
        lib = relay.build(mod, AVX2)
    main = lib.ir_mod["main"]
    fused = [f for f in primitive_functions(main)
             if calls(f, "nn.contrib_conv2d_winograd_without_weight_transform")]
    assert len(fused) == 2 and all(calls(f, "nn.relu") for f in fused)
    assert not calls(main, "nn.contrib_conv2d_winograd_weight_transform")  # folded
    np.testing.assert_allclose(run(lib, inputs), interpret(mod, inputs), rtol=1e-4, atol=1e-4)
