"""``nn.contrib_conv2d_NCHWc`` and the CPU AlterOpLayout path to it (on by default at
opt_level 3; ``PassContext(config={"relay.x86.conv2d_NCHWc": False})`` turns it off): the op's
type relation, reference and errors, the x86 schedule on AVX2 and AVX-512 code, and a
ResNet-like network that keeps the blocked layout from its first conv to its global pool,
numerically equal to the NCHW program."""

import numpy as np
import pytest

import irlab
from irlab import relay, te, tir
from irlab.errors import IrlabError
from irlab.relay.op.strategy.conv import NCHWC_CONFIG, WINOGRAD_CONFIG
from irlab.target import Target
from irlab.tir.stmt import ForKind
from irlab.topi.nn.conv2d import conv2d_NCHWc
from irlab.topi.x86.conv2d import nchwc_tile, schedule_conv2d_NCHWc
from _alter_layout import calls, interpret, primitive_functions, run

# Named targets, not the host's: AVX2 code (8 lanes) runs on every x86 host here; AVX-512
# code (16 lanes) is compiled and inspected.
AVX2, AVX512 = "llvm -mcpu=haswell", "llvm -mcpu=skylake-avx512"
TARGETS = [(AVX2, 8, True), (AVX512, 16, False)]  # (target, lanes, run the code)
# the default, said explicitly (as the Winograd rewrite's default, off without MetaSchedule:
# tests/relay/transform/test_winograd.py)
ON = {NCHWC_CONFIG: True, WINOGRAD_CONFIG: False}


def to_nchwc(x, block):
    n, c, h, w = x.shape
    return x.reshape(n, c // block, block, h, w).transpose(0, 1, 3, 4, 2).copy()


def to_kernel(w, x, y):
    o, i, kh, kw = w.shape
    return w.reshape(o // y, y, i // x, x, kh, kw).transpose(0, 2, 4, 5, 3, 1).copy()


def from_nchwc(x):
    n, c, h, w, b = x.shape
    return x.transpose(0, 1, 4, 2, 3).reshape(n, c * b, h, w)


def _conv_call(x, y, dshape, wshape, **kwargs):
    data = relay.var("data", shape=dshape)
    weight = relay.var("weight", shape=wshape)
    call = relay.nn.contrib_conv2d_nchwc(data, weight, data_layout=f"NCHW{x}c",
                                         kernel_layout=f"OIHW{x}i{y}o", out_layout=f"NCHW{y}c",
                                         **kwargs)
    return irlab.IRModule.from_expr(relay.Function([data, weight], call))


@pytest.mark.parametrize("x,y,c,o,size,kwargs", [
    (4, 8, 8, 16, 9, dict(padding=1)),
    (1, 8, 3, 8, 11, dict(strides=2, padding=3)),
    (8, 8, 16, 8, 10, dict(strides=(2, 1), padding=(0, 1, 2, 0), dilation=2)),
])
def test_reference_and_compiled_match_conv2d(x, y, c, o, size, kwargs):
    rng = np.random.default_rng(0)
    data = rng.uniform(-1, 1, (1, c, size, size)).astype("float32")
    weight = rng.uniform(-1, 1, (o, c, 3, 3)).astype("float32")
    d, w = relay.var("d", shape=data.shape), relay.var("w", shape=weight.shape)
    plain = irlab.IRModule.from_expr(relay.Function([d, w], relay.nn.conv2d(d, w, **kwargs)))
    want = interpret(plain, {"d": data, "w": weight})
    mod = relay.transform.InferType()(_conv_call(x, y, (1, c // x, size, size, x),
                                                 (o // y, c // x, 3, 3, x, y), **kwargs))
    assert mod["main"].body.checked_type.shape == (1, o // y) + want.shape[2:] + (y,)
    inputs = {"data": to_nchwc(data, x), "weight": to_kernel(weight, x, y)}
    np.testing.assert_allclose(from_nchwc(interpret(mod, inputs)), want, rtol=1e-5, atol=1e-5)
    with irlab.transform.PassContext(opt_level=3):
        lib = relay.build(mod, AVX2)
    np.testing.assert_allclose(from_nchwc(run(lib, inputs)), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dshape,wshape,kwargs,message", [
    ((1, 2, 8, 8, 4), (2, 2, 3, 3, 4, 8), dict(data_layout="NCHW", kernel_layout="OIHW4i8o",
                                               out_layout="NCHW8c"), "data_layout 'NCHW'"),
    ((1, 2, 8, 8, 4), (2, 2, 3, 3, 4, 8), dict(data_layout="NCHW4c", kernel_layout="OIHW8i8o",
                                               out_layout="NCHW8c"), "expected OIHW4i8o"),
    ((1, 2, 8, 8, 4), (2, 3, 3, 3, 4, 8), dict(data_layout="NCHW4c", kernel_layout="OIHW4i8o",
                                               out_layout="NCHW8c"), "input channels differ"),
    ((1, 2, 8, 8), (2, 2, 3, 3, 4, 8), dict(data_layout="NCHW4c", kernel_layout="OIHW4i8o",
                                            out_layout="NCHW8c"), "5-D data"),
])
def test_bad_layouts_and_shapes_are_named(dshape, wshape, kwargs, message):
    data, weight = relay.var("data", shape=dshape), relay.var("weight", shape=wshape)
    call = relay.nn.contrib_conv2d_nchwc(data, weight, **kwargs)
    mod = irlab.IRModule.from_expr(relay.Function([data, weight], call))
    with pytest.raises(IrlabError, match=message):
        relay.transform.InferType()(mod)


@pytest.mark.parametrize("target,lanes", [("llvm -mcpu=haswell", 8),
                                          ("llvm -mcpu=skylake-avx512", 16)])
def test_schedule_stores_whole_vectors(target, lanes):
    """The register tile's write-back stores whole vectors of the output's channel block
    (compiled and inspected: the host may lack AVX-512)."""
    tgt = Target(target)
    d = te.placeholder((1, 4, 14, 14, lanes), name="data")
    w = te.placeholder((4, 4, 3, 3, lanes, lanes), name="w")
    out = conv2d_NCHWc(d, w, (1, 1), (1, 1), (1, 1), f"NCHW{lanes}c", f"NCHW{lanes}c")
    sch = tir.Schedule(te.create_prim_func([d, w, out]))
    with tgt:
        schedule_conv2d_NCHWc(None, sch, [out], tgt)
    text = sch.mod.script()
    assert f"T.vectorized({lanes})" in text and "T.parallel" in text
    ow_bn, blocks = nchwc_tile(out.shape, tgt)
    # the accumulators are zeroed as whole vectors by unrolled statements, not scalar loops
    init = sch.get_loops(sch.get_block("conv2d_NCHWc_init"))
    kinds = [sch.get(loop).kind for loop in init[-3:]]
    assert kinds == [ForKind.UNROLLED, ForKind.UNROLLED, ForKind.VECTORIZED]
    assert 14 % ow_bn == 0 and 4 % blocks == 0 and ow_bn * blocks <= tgt.num_vector_registers
    asm = irlab.build(sch.mod, target=tgt).get_source("asm")
    register = "zmm" if lanes == 16 else "ymm"
    assert "vfmadd231ps" in asm and f"%{register}" in asm


def _resnet_like(rng):
    """conv 3>32 3x3/2 + relu -> max pool 3x3/2 -> [conv 3x3 + bias -> relu -> conv 3x3 +
    bias + the block's input -> relu] -> global avg pool -> flatten -> dense (32 channels:
    whole vectors of AVX2 and AVX-512)."""
    c = 32
    x = relay.var("x", shape=(1, 3, 32, 32))
    consts = {"w0": (c, 3, 3, 3), "w1": (c, c, 3, 3), "w2": (c, c, 3, 3), "b1": (c, 1, 1),
              "b2": (c, 1, 1), "fc": (10, c)}
    k = {name: relay.const(rng.uniform(-0.3, 0.3, shape).astype("float32"))
         for name, shape in consts.items()}
    y = relay.nn.relu(relay.nn.conv2d(x, k["w0"], strides=2, padding=1))
    y = relay.nn.max_pool2d(y, (3, 3), strides=(2, 2), padding=(1, 1))
    z = relay.nn.relu(relay.add(relay.nn.conv2d(y, k["w1"], padding=1), k["b1"]))
    z = relay.add(relay.add(relay.nn.conv2d(z, k["w2"], padding=1), k["b2"]), y)
    z = relay.nn.batch_flatten(relay.nn.global_avg_pool2d(relay.nn.relu(z)))
    out = relay.nn.dense(z, k["fc"])
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(relay.Function([x], out)))
    return mod, {"x": rng.uniform(-1, 1, (1, 3, 32, 32)).astype("float32")}


@pytest.mark.parametrize("target,lanes,runs", TARGETS, ids=["avx2", "avx512"])
def test_network_keeps_the_blocked_layout_and_its_numerics(target, lanes, runs):
    rng = np.random.default_rng(3)
    mod, inputs = _resnet_like(rng)
    with irlab.transform.PassContext(opt_level=3, config=ON):
        lib = relay.build(mod, target)
    main = lib.ir_mod["main"]
    convs = [cl for f in primitive_functions(main) for cl in calls(f, "nn.contrib_conv2d_NCHWc")]
    assert sorted((cl.attrs.data_layout, cl.attrs.kernel_layout) for cl in convs) == sorted([
        ("NCHW1c", f"OIHW1i{lanes}o"), (f"NCHW{lanes}c", f"OIHW{lanes}i{lanes}o"),
        (f"NCHW{lanes}c", f"OIHW{lanes}i{lanes}o")])
    assert not [cl for f in primitive_functions(main) for cl in calls(f, "nn.conv2d")]
    pools = [cl for f in primitive_functions(main)
             for name in ("nn.max_pool2d", "nn.global_avg_pool2d") for cl in calls(f, name)]
    assert {p.attrs.layout for p in pools} == {f"NCHW{lanes}c"}
    # the RGB input becomes NCHW1c by a reshape (no copy); the one transform left is the
    # pooled vector's way back to NCHW before flatten
    transforms = [cl for f in primitive_functions(main) for cl in calls(f, "layout_transform")]
    assert [(t.attrs.src_layout, t.attrs.dst_layout) for t in transforms] == [
        (f"NCHW{lanes}c", "NCHW")]
    if runs:
        np.testing.assert_allclose(run(lib, inputs), interpret(mod, inputs), rtol=1e-4,
                                   atol=1e-4)


@pytest.mark.parametrize("config,nchwc", [({}, True), ({NCHWC_CONFIG: False}, False)],
                         ids=["default", "off"])
def test_on_by_default_off_by_config(config, nchwc):
    mod, _ = _resnet_like(np.random.default_rng(4))
    with irlab.transform.PassContext(opt_level=3, config=config):
        with Target(AVX2):
            after = relay.transform.AlterOpLayout()(mod)
    assert len(calls(after["main"], "nn.contrib_conv2d_NCHWc")) == (3 if nchwc else 0)
    assert len(calls(after["main"], "nn.conv2d")) == (0 if nchwc else 3)


@pytest.mark.parametrize("target,lanes,runs", TARGETS, ids=["avx2", "avx512"])
def test_unit_axis_transform_is_a_reshape(target, lanes, runs):
    """NCHW -> NCHW1c only appends a unit axis: the rewriter writes it as expand_dims."""
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.const(np.ones((lanes, 3, 3, 3), "float32"))
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(
        relay.Function([x], relay.nn.conv2d(x, w, padding=1))))
    with irlab.transform.PassContext(opt_level=3, config=ON):
        with Target(target):
            after = relay.transform.AlterOpLayout()(mod)
    assert len(calls(after["main"], "expand_dims")) == 1
    assert [(t.attrs.src_layout, t.attrs.dst_layout)
            for t in calls(after["main"], "layout_transform")] == [
        ("OIHW", f"OIHW1i{lanes}o"), (f"NCHW{lanes}c", "NCHW")]


def test_padding_is_split_between_threads_by_rows():
    """An NCHW16c padding runs in parallel over (n, h), the channel blocks inside: the bands
    of rows the conv after it splits between its threads, so each reads what it padded."""
    from irlab.topi.nn.conv2d import pad_nd
    from irlab.topi.x86.conv2d import schedule_pad

    data = te.placeholder((1, 4, 56, 56, 16), name="data")
    padded = pad_nd(data, [0, 0, 1, 1, 0], [0, 0, 1, 1, 0])
    sch = tir.Schedule(te.create_prim_func([data, padded]))
    schedule_pad(sch, [padded], Target("llvm -mcpu=skylake-avx512 -num-cores=2"))
    loops = [sch.get(loop) for loop in sch.get_loops(sch.get_block("pad_temp"))]
    assert [int(loop.extent) for loop in loops] == [58, 4, 58, 16]
    assert loops[0].kind == ForKind.PARALLEL and loops[-1].kind == ForKind.VECTORIZED
    a = np.random.default_rng(0).standard_normal((1, 4, 56, 56, 16)).astype("float32")
    lib = irlab.build(sch.mod, target="llvm -mcpu=haswell")
    out = irlab.nd.empty((1, 4, 58, 58, 16), "float32")
    lib(irlab.nd.array(a), out)
    np.testing.assert_array_equal(out.numpy(), np.pad(a, [(0, 0), (0, 0), (1, 1), (1, 1), (0, 0)]))
