"""TE computes + CPU injective schedules of the transform / indexing / image ops (issue 8).

Each case builds a Relay function of one call (or a short fused chain), infers its types,
lowers it as one primitive function with ``lower_function`` for ``llvm``, compiles the
PrimFunc and compares its result on random inputs with the ops' numpy references
(``Op.reference``): exact for integers and bools, rtol 1e-5 for floats.
"""

import re

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.runtime.dtype import to_numpy_dtype
from irlab.ir.op import Op
from irlab.ir.type import TupleType
from irlab.relay.backend.te_compiler import lower_function
from irlab.target import Target

TARGET = Target("llvm")


def rand(rng, shape, dtype, low=-10, high=10):
    dtype = np.dtype(to_numpy_dtype(dtype))
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(max(low, np.iinfo(dtype).min), high + 1, shape).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


def lower_and_build(func):
    mod = irlab.IRModule.from_expr(func)
    mod = relay.transform.InferType()(mod)
    fn = mod["main"].with_attr("Primitive", 1)
    lowered = lower_function(fn, TARGET)
    built = irlab.build(lowered.prim_func, target="llvm")
    return fn, built[lowered.name]


def run_compiled(func, args):
    """Lower, build and run ``func`` on the numpy ``args``; its outputs as a list."""
    fn, compiled = lower_and_build(func)
    ret = fn.ret_type if fn.ret_type is not None else fn.checked_type.ret_type
    types = list(ret.fields) if isinstance(ret, TupleType) else [ret]
    outs = [np.zeros(tuple(int(d) for d in t.shape), to_numpy_dtype(t.dtype)) for t in types]
    compiled(*[a.copy() for a in args], *outs)
    return outs, types


def assert_same(got, want):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want.astype(got.dtype), rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


def check_op(make_call, arg_specs, seed=0, values=None):
    """One call ``make_call(*vars)`` over fresh variables of ``arg_specs`` (shape, dtype)."""
    rng = np.random.default_rng(seed)
    params = [relay.var(f"p{k}", shape=s, dtype=d) for k, (s, d) in enumerate(arg_specs)]
    call = make_call(*params)
    call = getattr(call, "astuple", lambda: call)()
    args = values if values is not None else [rand(rng, s, d) for s, d in arg_specs]
    outs, types = run_compiled(relay.Function(params, call), args)
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(relay.Function(params, call)))
    body = mod["main"].body
    ref = Op.get(body.op.name).reference
    want = ref(_ref_inputs(body, args), body.attrs, body.checked_type)
    wants = list(want) if isinstance(want, tuple) else [want]
    assert len(wants) == len(outs)
    for g, w in zip(outs, wants):
        assert_same(g, w)
    return outs


def _ref_inputs(call, args):
    """Reference inputs of ``call``: a Tuple argument becomes a tuple of arrays."""
    it = iter(args)
    out = []
    for a in call.args:
        if isinstance(a, relay.Tuple):
            out.append(tuple(next(it) for _ in a.fields))
        else:
            out.append(next(it))
    return out


F32, I32, I64 = "float32", "int32", "int64"


# -- reshapes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,newshape,dtype", [
    ((2, 3, 4), (6, 4), F32), ((2, 3, 4), (-1,), I32), ((24,), (2, 0, 3, -1), F32),
    ((4, 6), (3, -1, 2), "int8"), ((1, 5, 1), (5,), F32), ((2, 3, 4), (0, -3), F32),
])
def test_reshape(shape, newshape, dtype):
    if newshape == (2, 0, 3, -1):
        newshape = (2, 3, -1)
    check_op(lambda x: relay.reshape(x, newshape), [(shape, dtype)])


@pytest.mark.parametrize("shape,like,kw", [
    ((2, 3, 4), (6, 4), {}), ((2, 12), (3, 4), {"lhs_begin": 1}),
])
def test_reshape_like(shape, like, kw):
    check_op(lambda x, y: relay.reshape_like(x, y, **kw), [(shape, F32), (like, F32)])


@pytest.mark.parametrize("shape,axes,dtype", [
    ((3, 4), None, F32), ((2, 3, 4), (0, 2, 1), I32), ((2, 3, 4, 5), (3, 0, 2, 1), F32),
    ((2, 3, 4), (-1, 0, 1), "bool"),
])
def test_transpose(shape, axes, dtype):
    check_op(lambda x: relay.transpose(x, axes), [(shape, dtype)])


@pytest.mark.parametrize("shape,axis", [((1, 3, 1, 4), None), ((1, 3, 1, 4), (2,)),
                                        ((2, 1), (-1,))])
def test_squeeze(shape, axis):
    check_op(lambda x: relay.squeeze(x, axis), [(shape, F32)])


@pytest.mark.parametrize("shape,axis,num", [((3, 4), 0, 1), ((3, 4), -1, 2), ((3,), 1, 3)])
def test_expand_dims(shape, axis, num):
    check_op(lambda x: relay.expand_dims(x, axis, num), [(shape, I32)])


def test_trailing_unit_axes_join_the_vectorized_loop():
    """The stem's NCHW -> NCHW1c input copy: the unit axis joins the width loop, which is
    vectorized -- not every axis fused, with a div / mod per element -- and the copy is exact."""
    x = relay.var("x", shape=(1, 3, 8, 32))
    func = relay.Function([x], relay.expand_dims(x, 4))
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(func))
    lowered = lower_function(mod["main"].with_attr("Primitive", 1),
                             Target("llvm -mcpu=haswell"))
    text = lowered.prim_func.script()
    lane = re.search(r"for (\w+) in T\.vectorized\(8\)", text).group(1)
    assert lane.startswith("i3_i4_fused") and not re.search(rf"{lane}\)? *(//|%)", text)
    assert "T.axis.spatial(1, 0)" in text
    outs = check_op(lambda v: relay.expand_dims(v, 4), [((1, 3, 8, 32), F32)])
    assert outs[0].shape == (1, 3, 8, 32, 1)


@pytest.mark.parametrize("shape", [(2, 3, 4), (5, 1)])
def test_batch_flatten(shape):
    check_op(lambda x: relay.nn.batch_flatten(x), [(shape, F32)])


# -- join / split -----------------------------------------------------------------------------

@pytest.mark.parametrize("shapes,axis,dtype", [
    ([(2, 3), (4, 3)], 0, F32), ([(2, 3), (2, 1), (2, 5)], 1, I32),
    ([(2, 3, 4), (2, 3, 4)], -1, F32), ([(3,), (5,), (1,)], 0, "int8"),
])
def test_concatenate(shapes, axis, dtype):
    check_op(lambda *xs: relay.concatenate(list(xs), axis), [(s, dtype) for s in shapes])


@pytest.mark.parametrize("shape,n,axis", [((2, 3), 3, 0), ((2, 3), 2, 2), ((4,), 4, -1)])
def test_stack(shape, n, axis):
    check_op(lambda *xs: relay.stack(list(xs), axis), [(shape, F32)] * n)


@pytest.mark.parametrize("shape,ios,axis", [((6, 4), 3, 0), ((6, 4), (1, 3), 1),
                                            ((2, 9, 2), (2, 5, 8), -2)])
def test_split(shape, ios, axis):
    check_op(lambda x: relay.split(x, ios, axis), [(shape, F32)])


# -- indexing ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,begin,end,strides,axes,mode", [
    ((5, 6), (1, 2), (4, 6), None, None, "end"),
    ((5, 6, 3), (0, 1), (5, 6), (2, 2), None, "end"),
    ((5, 6), (4, -1), (0, -7), (-1, -2), None, "end"),
    ((5, 6, 3), (1,), (3,), None, (2,), "end"),
    ((5, 6), (1, 2), (2, -1), None, None, "size"),
    ((7,), (-3,), (100,), None, None, "end"),
])
def test_strided_slice(shape, begin, end, strides, axes, mode):
    check_op(lambda x: relay.strided_slice(x, begin, end, strides, axes, mode), [(shape, F32)])


@pytest.mark.parametrize("dshape,ishape,axis,bd,mode,idtype", [
    ((4, 5), (3,), 0, 0, "clip", I32), ((4, 5), (2, 3), 1, 0, "wrap", I64),
    ((4, 5), (2, 3), None, 0, "clip", I32), ((2, 4, 3), (2, 5), 1, 1, "clip", I32),
    ((3, 4, 5), (6,), -1, 0, "fast", I32), ((6,), (2, 2), 0, 0, "wrap", "int8"),
])
def test_take(dshape, ishape, axis, bd, mode, idtype):
    rng = np.random.default_rng(1)
    data = rand(rng, dshape, F32)
    hi = int(np.prod(dshape)) if axis is None else dshape[axis]
    if mode == "fast":
        idx = rng.integers(0, hi, ishape).astype(idtype)
    else:
        idx = rng.integers(-hi - 2, hi + 3, ishape).astype(idtype)
    check_op(lambda x, i: relay.take(x, i, axis, bd, mode), [(dshape, F32), (ishape, idtype)],
             values=[data, idx])


@pytest.mark.parametrize("ishape,depth,axis,dtype", [((4,), 5, -1, F32), ((2, 3), 4, 0, I32),
                                                     ((2, 3), 3, 1, F32)])
def test_one_hot(ishape, depth, axis, dtype):
    rng = np.random.default_rng(2)
    idx = rng.integers(-1, depth + 1, ishape).astype("int32")
    vals = [idx, np.array(3, to_numpy_dtype(dtype)), np.array(-1, to_numpy_dtype(dtype))]
    check_op(lambda i, on, off: relay.one_hot(i, on, off, depth, axis, dtype),
             [(ishape, I32), ((), dtype), ((), dtype)], values=vals)


# -- repetition -------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,reps", [((2, 3), (2, 1)), ((2, 3), (3,)), ((3,), (2, 2, 1)),
                                        ((1, 2), (4, 2))])
def test_tile(shape, reps):
    check_op(lambda x: relay.tile(x, reps), [(shape, I32)])


@pytest.mark.parametrize("shape,repeats,axis", [((2, 3), 2, 0), ((2, 3), 3, -1), ((4,), 1, 0)])
def test_repeat(shape, repeats, axis):
    check_op(lambda x: relay.repeat(x, repeats, axis), [(shape, F32)])


@pytest.mark.parametrize("shape,axis", [((5,), 0), ((3, 4), 1), ((2, 3, 4), -3)])
def test_reverse(shape, axis):
    check_op(lambda x: relay.reverse(x, axis), [(shape, I32)])


# -- broadcast / fills ------------------------------------------------------------------------

@pytest.mark.parametrize("cshape,xshape,yshape,cdtype", [
    ((3, 4), (3, 4), (3, 4), "bool"), ((4,), (3, 4), (3, 1), "bool"),
    ((3, 1), (4,), (), I32),
])
def test_where(cshape, xshape, yshape, cdtype):
    check_op(lambda c, x, y: relay.where(c, x, y),
             [(cshape, cdtype), (xshape, F32), (yshape, F32)])


@pytest.mark.parametrize("shape,target", [((3, 1), (3, 4)), ((4,), (2, 3, 4)), ((1,), (5,))])
def test_broadcast_to(shape, target):
    check_op(lambda x: relay.broadcast_to(x, target), [(shape, F32)])


@pytest.mark.parametrize("name,dtype", [("zeros", F32), ("ones", I32), ("zeros", "bool"),
                                        ("ones", "float64")])
def test_zeros_ones(name, dtype):
    fn = getattr(relay, name)
    check_op(lambda: fn((3, 5), dtype), [])


@pytest.mark.parametrize("name", ["zeros_like", "ones_like"])
def test_like(name):
    check_op(lambda x: getattr(relay, name)(x), [((2, 7), I32)])


def test_full_and_full_like():
    rng = np.random.default_rng(3)
    check_op(lambda v: relay.full(v, (4, 3), F32), [((), F32)],
             values=[np.array(2.5, "float32")])
    check_op(lambda v: relay.full(v, (4, 3), I32), [((), F32)],
             values=[np.array(-2.75, "float32")])
    check_op(lambda x, v: relay.full_like(x, v), [((2, 3), F32), ((), F32)],
             values=[rand(rng, (2, 3), F32), np.array(7.0, "float32")])


# -- pad / layout -----------------------------------------------------------------------------

@pytest.mark.parametrize("shape,width,mode,dtype", [
    ((3, 4), ((1, 2), (0, 3)), "constant", F32), ((2, 3, 4), ((0, 0), (2, 1), (1, 1)), "edge", I32),
    ((4, 5), ((3, 2), (1, 4)), "reflect", F32), ((5,), ((0, 0),), "constant", F32),
    ((2, 3), ((1, 1), (2, 2)), "reflect", I32),
])
def test_pad(shape, width, mode, dtype):
    rng = np.random.default_rng(4)
    vals = [rand(rng, shape, dtype), np.array(-7.5, "float32")]
    check_op(lambda x, v: relay.nn.pad(x, width, v, mode), [(shape, dtype), ((), F32)],
             values=vals)


def test_pad_constant_value():
    # the default pad value is a relay constant: a compile_engine_const stage
    rng = np.random.default_rng(5)
    x = relay.var("x", shape=(2, 3), dtype="float32")
    outs, _ = run_compiled(relay.Function([x], relay.nn.pad(x, ((1, 1), (1, 0)), 1.5)),
                           [a := rand(rng, (2, 3), F32)])
    assert_same(outs[0], np.pad(a, ((1, 1), (1, 0)), constant_values=1.5))


@pytest.mark.parametrize("shape,src,dst", [
    ((1, 3, 4, 5), "NCHW", "NHWC"), ((2, 4, 5, 3), "NHWC", "NCHW"),
    ((1, 8, 3, 3), "NCHW", "NCHW4c"), ((1, 2, 3, 3, 4), "NCHW4c", "NCHW"),
    ((1, 6, 2, 2), "NCHW", "NCHW4c"), ((1, 2, 2, 2, 8), "NCHW8c", "NCHW4c"),
    ((1, 3, 4, 2), "NCHW", "NHWC2c"),
])
def test_layout_transform(shape, src, dst):
    check_op(lambda x: relay.layout_transform(x, src, dst), [(shape, F32)])


# -- image.resize2d ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape,size,layout,method,mode,rounding", [
    ((1, 2, 4, 5), (8, 3), "NCHW", "nearest_neighbor", "asymmetric", ""),
    ((1, 2, 4, 5), (7, 9), "NCHW", "nearest_neighbor", "align_corners", ""),
    ((1, 2, 4, 5), (6, 6), "NCHW", "nearest_neighbor", "half_pixel", "round_prefer_ceil"),
    ((1, 4, 5, 2), (8, 3), "NHWC", "linear", "half_pixel", ""),
    ((1, 2, 4, 5), (7, 9), "NCHW", "linear", "align_corners", ""),
    ((1, 2, 4, 5), (3, 2), "NCHW", "linear", "pytorch_half_pixel", ""),
    ((1, 2, 4, 5), (8, 7), "NCHW", "cubic", "half_pixel", ""),
    ((2, 1, 5, 4), (3, 8), "NCHW", "linear", "asymmetric", ""),
])
def test_resize2d(shape, size, layout, method, mode, rounding):
    check_op(lambda x: relay.image.resize2d(x, size, None, layout, method, mode, rounding),
             [(shape, F32)])


def test_resize2d_cubic_exclude_and_crop():
    check_op(lambda x: relay.image.resize2d(x, (7, 6), None, "NCHW", "cubic", "half_pixel",
                                            cubic_exclude=1), [((1, 1, 4, 5), F32)])
    check_op(lambda x: relay.image.resize2d(x, (5, 6), (0.1, -0.2, 0.9, 1.3), "NCHW",
                                            "linear", "tf_crop_and_resize",
                                            extrapolation_value=-3.0), [((1, 2, 4, 5), F32)])


def test_resize2d_int_nearest():
    check_op(lambda x: relay.image.resize2d(x, (6, 7), None, "NCHW", "nearest_neighbor",
                                            "asymmetric"), [((1, 1, 3, 4), I32)])


# -- fused chains -----------------------------------------------------------------------------

def test_fused_reshape_transpose_add():
    rng = np.random.default_rng(6)
    x = relay.var("x", shape=(2, 12), dtype="float32")
    b = relay.var("b", shape=(3,), dtype="float32")
    body = relay.add(relay.transpose(relay.reshape(x, (2, 4, 3)), (0, 2, 1)),
                     relay.expand_dims(b, 1))
    a, bb = rand(rng, (2, 12), F32), rand(rng, (3,), F32)
    outs, _ = run_compiled(relay.Function([x, b], body), [a, bb])
    assert_same(outs[0], a.reshape(2, 4, 3).transpose(0, 2, 1) + bb[:, None])


def test_fused_pad_slice_concat_layout():
    rng = np.random.default_rng(7)
    x = relay.var("x", shape=(1, 4, 3, 3), dtype="float32")
    y = relay.var("y", shape=(1, 4, 5, 5), dtype="float32")
    p = relay.nn.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    s = relay.strided_slice(y, (0, 0, 0, 0), (1, 4, 5, 5), (1, 2, 1, 1))
    body = relay.layout_transform(relay.concatenate([p, s], 1), "NCHW", "NCHW2c")
    a, c = rand(rng, (1, 4, 3, 3), F32), rand(rng, (1, 4, 5, 5), F32)
    outs, _ = run_compiled(relay.Function([x, y], body), [a, c])
    cat = np.concatenate([np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1))), c[:, ::2]], 1)
    assert_same(outs[0], cat.reshape(1, 3, 2, 5, 5).transpose(0, 1, 3, 4, 2))


def test_fused_split_tuple_outputs():
    rng = np.random.default_rng(8)
    x = relay.var("x", shape=(6, 4), dtype="float32")
    parts = relay.split(x, 3, 0)
    body = relay.Tuple([relay.negative(parts[0]), relay.reverse(parts[2], 1)])
    a = rand(rng, (6, 4), F32)
    outs, _ = run_compiled(relay.Function([x], body), [a])
    assert_same(outs[0], -a[:2])
    assert_same(outs[1], a[4:, ::-1])


def test_large_injective_parallel():
    # large enough for the CPU schedule to parallelize the fused loop
    rng = np.random.default_rng(9)
    check_op(lambda x: relay.transpose(x, (1, 0)), [((160, 130), F32)], values=[
        rand(rng, (160, 130), F32)])


def test_transform_and_reduction_ops_at_topi_top_level():
    """As in TVM: ``topi.reshape`` / ``topi.sum`` are those of ``topi.transform`` /
    ``topi.reduction``."""
    import irlab.topi as topi

    assert topi.reshape is topi.transform.reshape and topi.sum is topi.reduction.sum
