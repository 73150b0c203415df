"""nn.conv2d with its kernel's output channels split into blocks (``OIHW16o``: weight shape
``(O // 16, I, KH, KW, 16)``): type relation, the numpy reference against a convolution of the
unpacked weight, relay.build against the interpreter, and rejections naming the layout."""

import itertools

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.contrib import graph_executor
from irlab.errors import IrlabError
from irlab.ir.op import Op
from irlab.ir.type import IncompleteType, TensorType
from irlab.relay.op.nn._utils import kernel_out_channels, split_kernel_layout, unpack_kernel
from irlab.relay.type_relation import TypeRelationError, infer_call_type, solve_relation

OP = Op.get("nn.conv2d")
X, W = relay.var("x"), relay.var("w")


def attrs_of(**kwargs):
    return relay.nn.conv2d(X, W, **kwargs).attrs


def pack(w_oihw, layout):
    """An OIHW weight in ``layout`` (a permutation of OIHW, then ``{n}o``), built independently
    of the code under test: permute, split O into (O // n, n), move n last."""
    primal = layout.rstrip("0123456789o")
    block = int(layout[len(primal):-1])
    w = w_oihw.transpose(["OIHW".index(c) for c in primal])
    o_axis = primal.index("O")
    shape = list(w.shape)
    split = shape[:o_axis] + [shape[o_axis] // block, block] + shape[o_axis + 1:]
    return np.moveaxis(w.reshape(split), o_axis + 1, -1)


def conv_nchw(x, w, strides, padding, dilation):
    """out[n, o, y, x] = sum xpad[n, c, y*sh + i*dh, x*sw + j*dw] * w[o, c, i, j] (float64)."""
    top, left, bottom, right = padding
    xpad = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    o, _, kh, kw = w.shape
    oh = (xpad.shape[2] - (kh - 1) * dilation[0] - 1) // strides[0] + 1
    ow = (xpad.shape[3] - (kw - 1) * dilation[1] - 1) // strides[1] + 1
    out = np.zeros((x.shape[0], o, oh, ow))
    for i, j in itertools.product(range(kh), range(kw)):
        y0, x0 = i * dilation[0], j * dilation[1]
        patch = xpad[:, :, y0:y0 + (oh - 1) * strides[0] + 1:strides[0],
                     x0:x0 + (ow - 1) * strides[1] + 1:strides[1]]
        out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j].astype(np.float64))
    return out


# ---------------------------------------------------------------------------------------------
# layout helpers
@pytest.mark.parametrize("layout,expected", [
    ("OIHW", ("OIHW", None)), ("HWIO", ("HWIO", None)), ("OIHW16o", ("OIHW", 16)),
    ("HWIO8o", ("HWIO", 8)), ("OHWI4o", ("OHWI", 4))])
def test_split_kernel_layout(layout, expected):
    assert split_kernel_layout(layout) == expected


@pytest.mark.parametrize("layout", ["OIHW0o", "OIHWo", "OIHW16i", "OI16oHW", "OIHW16o4i",
                                    "OIH", "OIHW16c", "OIHWW16o", "oIHW"])
def test_split_kernel_layout_rejects(layout):
    with pytest.raises(IrlabError, match=f"kernel_layout '{layout}' is not supported"):
        split_kernel_layout(layout)


def test_unpack_and_out_channels():
    w = np.arange(32 * 3 * 2 * 2, dtype="float32").reshape(32, 3, 2, 2)
    for layout in ("OIHW8o", "HWIO16o", "OHWI4o", "IOHW32o"):
        packed = pack(w, layout)
        assert kernel_out_channels(packed.shape, layout) == 32
        primal = layout.rstrip("0123456789o")
        unpacked = unpack_kernel(packed, layout)
        np.testing.assert_array_equal(unpacked.transpose([primal.index(c) for c in "OIHW"]), w)
    assert unpack_kernel(w, "OIHW") is w


# ---------------------------------------------------------------------------------------------
# type relation
@pytest.mark.parametrize("layout", ["OIHW16o", "HWIO8o", "OHWI32o"])
def test_relation_counts_blocks(layout):
    w = pack(np.zeros((32, 5, 3, 1)), layout)
    out = infer_call_type(OP, [TensorType((2, 5, 9, 7)), TensorType(w.shape)],
                          attrs_of(kernel_layout=layout, strides=(2, 1), padding=1))
    assert out == TensorType((2, 32, 5, 9), "float32")


def test_relation_infers_split_weight_from_attrs():
    out, (_, weight) = solve_relation(OP, [TensorType((1, 4, 8, 8)), IncompleteType()],
                                      attrs_of(channels=32, kernel_size=3, padding=1,
                                               kernel_layout="OIHW16o"))
    assert weight == TensorType((2, 4, 3, 3, 16), "float32")
    assert out.shape == (1, 32, 8, 8)


@pytest.mark.parametrize("weight,kwargs,message", [
    ((2, 3, 3, 3, 8), {"kernel_layout": "OIHW16o"}, r"must be the output-channel block 16"),
    ((2, 3, 3, 3), {"kernel_layout": "OIHW16o"}, "5-D weight for kernel_layout OIHW16o"),
    ((2, 3, 3, 3, 16), {"kernel_layout": "OIHW"}, "4-D weight for kernel_layout OIHW"),
    ((2, 3, 3, 3, 16), {"kernel_layout": "OIHW16o", "channels": 16},
     "channels=16 but the weight has 32 output channels"),
    ((2, 3, 3, 3, 16), {"kernel_layout": "OIHW16i"}, "kernel_layout 'OIHW16i' is not supported"),
    ((2, 3, 3, 3, 16), {"kernel_layout": "OI16oHW"}, "kernel_layout 'OI16oHW' is not supported"),
    ((2, 3, 3, 3, 16), {"kernel_layout": "OIHW0o"}, "kernel_layout 'OIHW0o' is not supported"),
])
def test_relation_rejections(weight, kwargs, message):
    with pytest.raises(TypeRelationError, match=message):
        infer_call_type(OP, [TensorType((1, 3, 8, 8)), TensorType(weight)], attrs_of(**kwargs))


def test_inferred_weight_rejects_indivisible_channels():
    with pytest.raises(TypeRelationError, match="channels=24 are not divisible by the output-"
                                                "channel block of kernel_layout OIHW16o"):
        solve_relation(OP, [TensorType((1, 4, 8, 8)), IncompleteType()],
                       attrs_of(channels=24, kernel_size=3, kernel_layout="OIHW16o"))


def test_type_error_through_infer_type_names_layout():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(2, 3, 3, 3, 16))
    mod = irlab.IRModule.from_expr(relay.Function(
        [x, w], relay.nn.conv2d(x, w, kernel_layout="OIHW16o4i")))
    with pytest.raises(IrlabError, match="OIHW16o4i"):
        relay.transform.InferType()(mod)


# ---------------------------------------------------------------------------------------------
# reference and relay.build
CASES = [
    # (data shape, O, kernel (kh, kw), layout, strides, padding, dilation, groups)
    ((1, 4, 9, 8), 32, (3, 3), "OIHW16o", (1, 1), (1, 1, 1, 1), (1, 1), 1),
    ((2, 3, 11, 10), 16, (3, 2), "OIHW8o", (2, 1), (1, 0, 2, 1), (1, 2), 1),
    ((1, 5, 12, 12), 24, (5, 5), "HWIO8o", (2, 2), (2, 2, 2, 2), (1, 1), 1),
    ((1, 6, 7, 7), 12, (3, 3), "OHWI4o", (1, 1), (0, 1, 1, 0), (2, 2), 1),
    ((1, 4, 8, 8), 8, (3, 3), "OIHW4o", (1, 1), (1, 1, 1, 1), (1, 1), 2),
]


def _case_arrays(case, seed=0):
    dshape, out_ch, (kh, kw), layout, strides, padding, dilation, groups = case
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, dshape).astype("float32")
    w = rng.uniform(-1, 1, (out_ch, dshape[1] // groups, kh, kw)).astype("float32")
    return x, w


@pytest.mark.parametrize("case", CASES)
def test_reference_matches_unpacked_convolution(case):
    _, _, _, layout, strides, padding, dilation, groups = case
    x, w = _case_arrays(case)
    a = attrs_of(strides=strides, padding=padding, dilation=dilation, groups=groups,
                 kernel_layout=layout)
    wp = pack(w, layout)
    out_type = infer_call_type(OP, [TensorType(x.shape), TensorType(wp.shape)], a)
    got = OP.reference([x, wp], a, out_type)
    if groups == 1:
        want = conv_nchw(x, w, strides, padding, dilation)
    else:  # each group on its own slice of channels
        ci, co = x.shape[1] // groups, w.shape[0] // groups
        want = np.concatenate([conv_nchw(x[:, g * ci:(g + 1) * ci], w[g * co:(g + 1) * co],
                                         strides, padding, dilation) for g in range(groups)], 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _build_and_run(func, inputs, opt_level):
    mod = irlab.IRModule.from_expr(func)
    with irlab.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, "llvm")
    m = graph_executor.GraphModule(lib["default"](irlab.cpu()))
    m.run(**inputs)
    return m.get_output(0).numpy()


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", CASES)
def test_build_matches_interpreter(case, opt_level):
    _, _, _, layout, strides, padding, dilation, groups = case
    x, w = _case_arrays(case, seed=1)
    wp = pack(w, layout)
    xv = relay.var("x", shape=x.shape)
    wv = relay.var("w", shape=wp.shape)
    y = relay.nn.relu(relay.nn.conv2d(xv, wv, strides=strides, padding=padding,
                                      dilation=dilation, groups=groups, kernel_layout=layout))
    func = relay.Function([xv, wv], y)
    want = relay.create_executor("debug", mod=irlab.IRModule.from_expr(func)).evaluate()(
        x, wp).numpy()
    got = _build_and_run(func, {"x": x, "w": wp}, opt_level)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_layout_transform_to_split_kernel():
    """layout_transform OIHW -> OIHW16o (type, interpreter, compiled) feeds the conv."""
    rng = np.random.default_rng(3)
    w = rng.uniform(-1, 1, (32, 3, 3, 3)).astype("float32")
    x = rng.uniform(-1, 1, (1, 3, 10, 10)).astype("float32")
    wv, xv = relay.var("w", shape=w.shape), relay.var("x", shape=x.shape)
    packed = relay.layout_transform(wv, "OIHW", "OIHW16o")
    func = relay.Function([xv, wv], relay.nn.conv2d(xv, packed, padding=1,
                                                    kernel_layout="OIHW16o"))
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(func))
    assert mod["main"].body.args[1].checked_type == TensorType((2, 3, 3, 3, 16), "float32")
    interp = relay.create_executor("debug", mod=mod).evaluate()(x, w).numpy()
    want = conv_nchw(x, w, (1, 1), (1, 1, 1, 1), (1, 1))
    np.testing.assert_allclose(interp, want, rtol=1e-5, atol=1e-5)
    for opt_level in (0, 3):
        got = _build_and_run(func, {"x": x, "w": w}, opt_level)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_text_round_trip():
    x = relay.var("x", shape=(1, 4, 8, 8))
    w = relay.var("w", shape=(2, 4, 3, 3, 16))
    mod = irlab.IRModule.from_expr(relay.Function(
        [x, w], relay.nn.conv2d(x, w, padding=1, kernel_layout="OIHW16o")))
    mod = relay.transform.InferType()(mod)
    text = mod.astext()
    assert 'kernel_layout="OIHW16o"' in text
    assert "Tensor[(1, 32, 8, 8), float32]" in text
    parsed = relay.transform.InferType()(irlab.relay.fromtext(text))
    irlab.ir.assert_structural_equal(parsed, mod)
