"""Shape-changing ops: registration, type relations (output types and rejections) and numpy
references. Expected shapes and values come from numpy or from TVM's documented examples,
never from the relations under test."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from irlab import relay
from irlab.errors import IrlabError
from irlab.ir.op import Op, OpPattern
from irlab.ir.type import TensorType, TupleType
from irlab.relay.type_relation import TypeRelationError, infer_call_type

FAST = settings(max_examples=40, deadline=None)
RNG = np.random.default_rng(0)


def tt(shape, dtype="float32"):
    return TensorType(tuple(shape), dtype)


def out_type(call, *arg_types):
    return infer_call_type(call.op, list(arg_types), call.attrs)


def run(call, *arrays):
    """Infer the output type from the arrays' types and run the reference."""
    types = [tt(a.shape, a.dtype.name) for a in arrays]
    ty = out_type(call, *types)
    return ty, call.op.reference(list(arrays), call.attrs, ty)


def run_tuple(call, arrays):
    """For concatenate/stack: one Tuple argument holding all arrays."""
    ty = out_type(call, TupleType([tt(a.shape, a.dtype.name) for a in arrays]))
    return ty, call.op.reference([list(arrays)], call.attrs, ty)


def rejects(call, *arg_types, match):
    with pytest.raises(TypeRelationError, match=match):
        out_type(call, *arg_types)


def var(shape=(1,), dtype="float32", name="x"):
    return relay.var(name, shape=shape, dtype=dtype)


def rand(shape, dtype="float32"):
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    return (RNG.standard_normal(shape) * 10).astype(dtype)


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


# ---------------------------------------------------------------------------------------------
# registration
@pytest.mark.parametrize("name, pattern, level, num_inputs, key", [
    ("reshape", OpPattern.INJECTIVE, 3, 1, "relay.attrs.ReshapeAttrs"),
    ("reshape_like", OpPattern.INJECTIVE, 3, 2, "relay.attrs.ReshapeLikeAttrs"),
    ("transpose", OpPattern.INJECTIVE, 3, 1, "relay.attrs.TransposeAttrs"),
    ("squeeze", OpPattern.INJECTIVE, 3, 1, "relay.attrs.SqueezeAttrs"),
    ("expand_dims", OpPattern.BROADCAST, 1, 1, "relay.attrs.ExpandDimsAttrs"),
    ("concatenate", OpPattern.INJECTIVE, 1, 1, "relay.attrs.ConcatenateAttrs"),
    ("stack", OpPattern.INJECTIVE, 3, 1, "relay.attrs.StackAttrs"),
    ("split", OpPattern.INJECTIVE, 3, 1, "relay.attrs.SplitAttrs"),
    ("take", OpPattern.INJECTIVE, 3, 2, "relay.attrs.TakeAttrs"),
    ("strided_slice", OpPattern.INJECTIVE, 4, 1, "relay.attrs.StridedSliceAttrs"),
    ("layout_transform", OpPattern.INJECTIVE, 5, 1, "relay.attrs.LayoutTransformAttrs"),
    ("tile", OpPattern.BROADCAST, 3, 1, "relay.attrs.TileAttrs"),
    ("repeat", OpPattern.BROADCAST, 3, 1, "relay.attrs.RepeatAttrs"),
    ("reverse", OpPattern.INJECTIVE, 3, 1, "relay.attrs.ReverseAttrs"),
    ("one_hot", OpPattern.OUT_ELEMWISE_FUSABLE, 10, 3, "relay.attrs.OneHotAttrs"),
])
def test_registration(name, pattern, level, num_inputs, key):
    op = Op.get(name)
    assert op.pattern == pattern
    assert op.support_level == level
    assert op.num_inputs == num_inputs == len(op.arguments)
    assert op.attrs_type_key == key
    assert op.type_rel is not None and op.reference is not None


@pytest.mark.parametrize("cls, fields, defaults", [
    (relay.ReshapeAttrs, ("newshape", "allowzero"), {"allowzero": False}),
    (relay.TakeAttrs, ("batch_dims", "axis", "mode"),
     {"batch_dims": 0, "axis": None, "mode": "clip"}),
    (relay.StridedSliceAttrs, ("begin", "end", "strides", "slice_mode", "axes"),
     {"slice_mode": "end"}),
    (relay.SplitAttrs, ("indices_or_sections", "axis"), {"axis": 0}),
    (relay.ExpandDimsAttrs, ("axis", "num_newaxis"), {"num_newaxis": 1}),
    (relay.ReshapeLikeAttrs, ("lhs_begin", "lhs_end", "rhs_begin", "rhs_end"),
     {"lhs_begin": 0, "lhs_end": None, "rhs_begin": 0, "rhs_end": None}),
    (relay.OneHotAttrs, ("depth", "axis", "dtype"), {"depth": 1, "axis": -1, "dtype": None}),
    (relay.RepeatAttrs, ("repeats", "axis"), {"axis": None}),
    (relay.LayoutTransformAttrs, ("src_layout", "dst_layout"), {}),
])
def test_attrs_fields_in_tvm_order(cls, fields, defaults):
    assert cls._fields == fields
    assert cls._defaults == defaults


def test_printed_attrs_follow_tvm():
    x = var((2, 3, 4))
    # fields without a TVM default (axes) print even when None; defaults are omitted
    call = relay.strided_slice(x, [0], [1])
    assert [k for k, _ in call.attrs.non_default_items()] == ["begin", "end", "strides", "axes"]
    assert call.attrs.strides == (1,)
    assert relay.take(x, var((2,), "int32", "i")).attrs.non_default_items() == []
    assert relay.reshape(x, 6).attrs.newshape == (6,)
    assert relay.squeeze(x, 0).attrs.axis == (0,)


# ---------------------------------------------------------------------------------------------
# reshape
@pytest.mark.parametrize("ishape, newshape, expected", [
    # the examples of TVM's reshape documentation
    ((2, 3, 4), (4, 0, 2), (4, 3, 2)),
    ((2, 3, 4), (2, 0, 0), (2, 3, 4)),
    ((2, 3, 4), (6, 1, -1), (6, 1, 4)),
    ((2, 3, 4), (3, -1, 8), (3, 1, 8)),
    ((2, 3, 4), (-1,), (24,)),
    ((2, 3, 4), (-2,), (2, 3, 4)),
    ((2, 3, 4), (2, -2), (2, 3, 4)),
    ((2, 3, 4), (-2, 1, 1), (2, 3, 4, 1, 1)),
    ((2, 3, 4), (-3, 4), (6, 4)),
    ((2, 3, 4, 5), (-3, -3), (6, 20)),
    ((2, 3, 4), (0, -3), (2, 12)),
    ((2, 3, 4), (-3, -2), (6, 4)),
    ((2, 3, 4), (-4, 1, 2, -2), (1, 2, 3, 4)),
    ((2, 3, 4), (2, -4, -1, 3, -2), (2, 1, 3, 4)),
    ((1,), (), ()),
    ((), (1, 1), (1, 1)),
])
def test_reshape_special_values(ishape, newshape, expected):
    a = rand(ishape)
    ty, r = run(relay.reshape(var(ishape), newshape), a)
    assert ty == tt(expected)
    np.testing.assert_array_equal(r, a.reshape(expected))


@FAST
@given(st.lists(st.integers(1, 3), min_size=1, max_size=5), st.data())
def test_reshape_regroups_factors(dims, data):
    """Any regrouping of the input's factors (optionally one of them as -1) is accepted."""
    ishape = tuple(data.draw(st.permutations(dims)))
    cuts = sorted(data.draw(st.sets(st.integers(1, len(dims) - 1), max_size=len(dims) - 1))) \
        if len(dims) > 1 else []
    groups = [dims[i:j] for i, j in zip([0] + cuts, cuts + [len(dims)])]
    target = [int(np.prod(g)) for g in groups]
    newshape = list(target)
    if data.draw(st.booleans()):
        newshape[data.draw(st.integers(0, len(newshape) - 1))] = -1
    a = rand(ishape, "int32")
    ty, r = run(relay.reshape(var(ishape, "int32"), newshape), a)
    assert ty == tt(target, "int32")
    np.testing.assert_array_equal(r, np.reshape(a, newshape))


def test_reshape_constant_newshape():
    call = relay.reshape(var((2, 3)), relay.const(np.array([3, -1], "int64")))
    assert call.attrs.newshape == (3, -1)
    assert out_type(call, tt((2, 3))) == tt((3, 2))


def test_reshape_allowzero():
    x = var((0, 3))
    assert out_type(relay.reshape(x, (3, 0), allowzero=True), tt((0, 3))) == tt((3, 0))
    # without allowzero, 0 copies the input dimension
    assert out_type(relay.reshape(var((2, 3)), (0, 3)), tt((2, 3))) == tt((2, 3))
    assert relay.reshape(x, (0,), allowzero=True).attrs.allowzero is True
    # an empty input reshapes to an empty output, inferring through -1
    assert out_type(relay.reshape(x, (-1, 0)), tt((0, 3))) == tt((0, 3))
    # with a literal 0 in newshape, -1 is ambiguous
    rejects(relay.reshape(var((2, 3)), (0, -1), allowzero=True), tt((2, 3)),
            match="-1 cannot be inferred")


@pytest.mark.parametrize("ishape, newshape, match", [
    ((2, 3), (4, -1), r"cannot reshape \(2, 3\).*\(4, -1\)"),
    ((2, 3), (5, 5), r"\(2, 3\) \(6 elements\).*25 elements"),
    ((2, 3), (-1, -1), "at most one dimension can be -1"),
    ((2, 3), (2, 3, 0), "copies input dimension 2.*rank 2"),
    ((2, 3), (2, -3), "merges input dimensions 1 and 2"),
    ((6,), (-4, 4, -1), "not divisible by 4"),
    ((6,), (-4, -1, -1), "cannot both be -1"),
    ((6,), (-4, 2), "followed by two dimensions"),
    ((6,), (-5,), "unsupported special value -5"),
])
def test_reshape_rejects(ishape, newshape, match):
    rejects(relay.reshape(var(ishape), newshape), tt(ishape), match=match)


def test_reshape_like():
    # TVM's documented example
    data, like = var((1, 2, 3, 4)), var((6, 2, 2, 3), name="y")
    call = relay.reshape_like(data, like, lhs_begin=1, rhs_end=3)
    a = rand((1, 2, 3, 4))
    ty = out_type(call, tt((1, 2, 3, 4)), tt((6, 2, 2, 3)))
    assert ty == tt((1, 6, 2, 2))
    np.testing.assert_array_equal(call.op.reference([a, np.zeros((6, 2, 2, 3))], call.attrs, ty),
                                  a.reshape(1, 6, 2, 2))
    assert out_type(relay.reshape_like(data, like), tt((2, 12)), tt((4, 6))) == tt((4, 6))
    assert out_type(relay.reshape_like(data, like, lhs_begin=-2, rhs_begin=1),
                    tt((2, 3, 4)), tt((5, 12))) == tt((2, 12))
    rejects(relay.reshape_like(data, like), tt((2, 3)), tt((5,)), match=r"\(2, 3\).*6 elements")
    rejects(relay.reshape_like(data, like, lhs_begin=3), tt((2, 3)), tt((6,)),
            match="lhs_begin=3")


# ---------------------------------------------------------------------------------------------
# transpose / squeeze / expand_dims
@FAST
@given(shapes, st.data())
def test_transpose(shape, data):
    perm = data.draw(st.permutations(range(len(shape))))
    axes = [p - len(shape) if data.draw(st.booleans()) else p for p in perm]
    a = rand(shape)
    ty, r = run(relay.transpose(var(shape), axes), a)
    assert ty == tt(np.transpose(np.zeros(shape), perm).shape)
    np.testing.assert_array_equal(r, np.transpose(a, perm))


def test_transpose_default_reverses_and_rejects():
    a = rand((2, 3, 4))
    ty, r = run(relay.transpose(var((2, 3, 4))), a)
    assert ty == tt((4, 3, 2)) and relay.transpose(var()).attrs.axes is None
    np.testing.assert_array_equal(r, a.T)
    x = var((2, 3, 4))
    rejects(relay.transpose(x, (0, 1)), tt((2, 3, 4)), match="2 entries.*rank-3")
    rejects(relay.transpose(x, (0, 1, 1)), tt((2, 3, 4)), match="repeats an axis")
    rejects(relay.transpose(x, (0, 1, 3)), tt((2, 3, 4)), match=r"axis=3 is out of range")


@pytest.mark.parametrize("shape, axis", [
    ((1, 3, 1, 2), None), ((1, 3, 1, 2), (0,)), ((1, 3, 1, 2), (-2, 0)), ((1, 1), (1,)),
    ((3,), ()), ((1,), None),
])
def test_squeeze(shape, axis):
    a = rand(shape)
    ty, r = run(relay.squeeze(var(shape), axis), a)
    expected = np.squeeze(a, axis=axis)
    assert ty == tt(expected.shape)
    np.testing.assert_array_equal(r, expected)


def test_squeeze_rejects():
    x = var((1, 3))
    rejects(relay.squeeze(x, [1]), tt((1, 3)), match=r"axis 1 of shape \(1, 3\).*size is 3")
    rejects(relay.squeeze(x, [2]), tt((1, 3)), match="axis=2 is out of range")


@pytest.mark.parametrize("ndim", [0, 1, 3])
def test_expand_dims_all_axes(ndim):
    shape = (2, 3, 4)[:ndim]
    a = rand(shape)
    for axis in range(-ndim - 1, ndim + 1):
        for num in range(3):
            expected = a
            pos = axis if axis >= 0 else axis + ndim + 1
            for _ in range(num):
                expected = np.expand_dims(expected, pos)
            ty, r = run(relay.expand_dims(var(shape), axis, num), a)
            assert ty == tt(expected.shape), (axis, num)
            np.testing.assert_array_equal(r, expected)


def test_expand_dims_rejects():
    x = var((2, 3))
    rejects(relay.expand_dims(x, 3), tt((2, 3)),
            match=r"axis=3 is out of range.*\[-3, 2\] for a tensor of rank 2")
    rejects(relay.expand_dims(x, -4), tt((2, 3)), match="axis=-4")
    rejects(relay.expand_dims(x, 0, -1), tt((2, 3)), match="num_newaxis must be >= 0")


# ---------------------------------------------------------------------------------------------
# concatenate / stack
@FAST
@given(shapes, st.integers(1, 4), st.data())
def test_concatenate(shape, count, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    arrays = []
    for _ in range(count):
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        arrays.append(rand(tuple(s)))
    call = relay.concatenate([var(a.shape, name=f"x{i}") for i, a in enumerate(arrays)], axis)
    assert isinstance(call.args[0], relay.Tuple) and len(call.args[0].fields) == count
    ty, r = run_tuple(call, arrays)
    expected = np.concatenate(arrays, axis=axis)
    assert ty == tt(expected.shape)
    np.testing.assert_array_equal(r, expected)


def test_concatenate_rejects():
    xs = [var((2, 3)), var((2, 3))]
    call = relay.concatenate(xs, 1)
    rejects(call, TupleType([tt((2, 3)), tt((3, 3))]),
            match=r"outside the concatenation axis 1.*\(2, 3\).*\(3, 3\)")
    rejects(call, TupleType([tt((2, 3)), tt((2, 3), "int32")]),
            match="same dtype.*float32.*int32")
    rejects(call, TupleType([tt((2, 3)), tt((2, 3, 1))]), match="same rank")
    rejects(relay.concatenate(xs, 2), TupleType([tt((2, 3))] * 2), match="axis=2 is out of range")
    rejects(relay.concatenate(xs, 0), TupleType([tt(()), tt(())]), match="axis=0 is out of range")
    rejects(call, tt((2, 3)), match="expected a tuple")
    with pytest.raises(IrlabError, match="non-empty"):
        relay.concatenate([], 0)


@FAST
@given(st.lists(st.integers(0, 3), max_size=3).map(tuple), st.integers(1, 3), st.data())
def test_stack(shape, count, data):
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    arrays = [rand(shape, "int32") for _ in range(count)]
    ty, r = run_tuple(relay.stack([var(shape, "int32")] * count, axis), arrays)
    expected = np.stack(arrays, axis=axis)
    assert ty == tt(expected.shape, "int32")
    np.testing.assert_array_equal(r, expected)


def test_tuple_argument_construction():
    x, y = var((2,)), var((2,), name="y")
    t = relay.Tuple([x, y])
    assert relay.stack(t, 0).args[0] is t  # TVM passes a Tuple expression through
    cat = relay.concatenate(t, 0).args[0]
    assert isinstance(cat, relay.Tuple) and cat.fields == t.fields
    parts = relay.split(var((4,)), 2)
    fields = relay.concatenate(parts, 0).args[0].fields
    assert [f.index for f in fields] == [0, 1]
    with pytest.raises(IrlabError, match="non-empty"):
        relay.stack(relay.Tuple([]), 0)


def test_stack_rejects():
    call = relay.stack([var((2,)), var((2,))], 0)
    rejects(call, TupleType([tt((2,)), tt((3,))]), match=r"same shape.*\(2,\).*\(3,\)")
    rejects(relay.stack([var((2,))], 2), TupleType([tt((2,))]), match="axis=2 is out of range")


# ---------------------------------------------------------------------------------------------
# split
@FAST
@given(shapes, st.data())
def test_split_sections(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    dim = shape[axis]
    sections = data.draw(st.sampled_from([d for d in range(1, dim + 1) if dim % d == 0]))
    a = rand(shape)
    wrapper = relay.split(var(shape), sections, axis)
    assert len(wrapper) == sections
    ty, r = run(wrapper.astuple(), a)
    expected = np.split(a, sections, axis=axis)
    assert ty == TupleType([tt(e.shape) for e in expected])
    assert len(r) == sections
    for got, want in zip(r, expected):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("indices", [(), (1,), (1, 3), (2, 3, 4)])
def test_split_indices(indices):
    a = rand((3, 5))
    wrapper = relay.split(var((3, 5)), list(indices), axis=1)
    assert len(wrapper) == len(indices) + 1
    assert isinstance(wrapper[1 if indices else 0], relay.TupleGetItem)
    ty, r = run(wrapper.astuple(), a)
    expected = np.split(a, list(indices), axis=1)
    assert ty == TupleType([tt(e.shape) for e in expected])
    for got, want in zip(r, expected):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("ios, axis, match", [
    (4, 1, "4 sections do not divide the axis of size 6"),
    ((3, 2), 1, "strictly ascending"),
    ((0, 2), 1, "strictly ascending"),
    ((2, 6), 1, "index 6 .* not below the axis size 6"),
    (2, 2, "axis=2 is out of range"),
    (0, 0, "positive number of sections"),
])
def test_split_rejects(ios, axis, match):
    rejects(relay.split(var((2, 6)), ios, axis).astuple(), tt((2, 6)), match=match)


def test_split_rejects_scalar():
    rejects(relay.split(var(()), 1).astuple(), tt(()), match="rank >= 1")


# ---------------------------------------------------------------------------------------------
# take
@FAST
@given(shapes, st.lists(st.integers(0, 3), max_size=2).map(tuple), st.data())
def test_take_axis(shape, ishape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    mode = data.draw(st.sampled_from(["clip", "wrap"]))
    a = rand(shape)
    idx = RNG.integers(-8, 8, size=ishape).astype("int32")
    call = relay.take(var(shape), var(ishape, "int32", "i"), axis=axis, mode=mode)
    ty, r = run(call, a, idx)
    expected = np.take(a, idx, axis=axis, mode=mode)  # numpy's clip also clips negatives to 0
    assert ty == tt(expected.shape)
    np.testing.assert_array_equal(r, expected)


def test_take_flattened_and_fast():
    a = rand((3, 4), "int64")
    idx = np.array([[0, 11], [5, 7]], "int64")
    ty, r = run(relay.take(var((3, 4), "int64"), var((2, 2), "int64", "i")), a, idx)
    assert ty == tt((2, 2), "int64")
    np.testing.assert_array_equal(r, a.reshape(-1)[idx])
    idx = np.array([2, 0, 1], "uint8")
    ty, r = run(relay.take(var((3, 4)), var((3,), "uint8", "i"), axis=0, mode="fast"),
                a.astype("float32"), idx)
    np.testing.assert_array_equal(r, a[idx])


@pytest.mark.parametrize("dshape, ishape, axis, batch_dims", [
    ((2, 5, 3), (2, 4), 1, 1),
    ((2, 3, 5, 4), (2, 3, 2), 2, 2),
    ((2, 3, 5), (2, 4), 2, 1),
    ((2, 3, 5), (2, 4), 2, -1),
])
def test_take_batch_dims(dshape, ishape, axis, batch_dims):
    a = rand(dshape)
    idx = RNG.integers(0, dshape[axis], size=ishape).astype("int32")
    call = relay.take(var(dshape), var(ishape, "int32", "i"), axis, batch_dims=batch_dims)
    ty, r = run(call, a, idx)
    bd = batch_dims % len(ishape)
    # out[b..., p..., i..., q...] = data[b..., p..., idx[b..., i...], q...], written as loops
    expected = np.empty(ty.shape, a.dtype)
    for out_index in np.ndindex(*ty.shape):
        b = out_index[:bd]
        p = out_index[bd:axis]
        i = out_index[axis:axis + len(ishape) - bd]
        q = out_index[axis + len(ishape) - bd:]
        expected[out_index] = a[b + p + (idx[b + i],) + q]
    np.testing.assert_array_equal(r, expected)


def test_take_rejects():
    x, i = var((2, 3)), var((2,), "int32", "i")
    rejects(relay.take(x, i, 0), tt((2, 3)), tt((2,), "float32"),
            match="indices must be a tensor of integers, got float32")
    rejects(relay.take(x, i, 2), tt((2, 3)), tt((2,), "int32"), match="axis=2 is out of range")
    rejects(relay.take(x, i, 0, mode="nearest"), tt((2, 3)), tt((2,), "int32"),
            match="mode must be one of clip, wrap, fast, got 'nearest'")
    rejects(relay.take(x, i, 0, batch_dims=1), tt((2, 3)), tt((2,), "int32"),
            match="batch_dims=1 must not exceed axis=0")
    rejects(relay.take(x, i, 1, batch_dims=1), tt((2, 3)), tt((3, 1), "int32"),
            match=r"batch dimensions differ.*\(2, 3\).*\(3, 1\)")


# ---------------------------------------------------------------------------------------------
# strided_slice
def _python_slice_valid(b, e, s, dim):
    """TVM rejects a range that runs against the stride; numpy would return it empty."""
    start, stop, _ = slice(b, e, s).indices(dim)
    return stop >= start if s > 0 else stop <= start


bounds = st.integers(-7, 7)


@settings(max_examples=80, deadline=None)
@given(shapes, st.data())
def test_strided_slice_matches_numpy(shape, data):
    n = data.draw(st.integers(0, len(shape)))
    begin = [data.draw(bounds) for _ in range(n)]
    end = [data.draw(bounds) for _ in range(n)]
    strides = [data.draw(st.sampled_from([-3, -2, -1, 1, 2, 3])) for _ in range(n)]
    a = rand(shape)
    call = relay.strided_slice(var(shape), begin, end, strides)
    valid = all(_python_slice_valid(b, e, s, d) for b, e, s, d in zip(begin, end, strides, shape))
    if not valid:
        rejects(call, tt(shape), match="invalid range")
        return
    expected = a[tuple(slice(b, e, s) for b, e, s in zip(begin, end, strides))]
    ty, r = run(call, a)
    assert ty == tt(expected.shape)
    np.testing.assert_array_equal(r, expected)


@settings(max_examples=40, deadline=None)
@given(shapes, st.data())
def test_strided_slice_with_axes(shape, data):
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1,
                              max_size=len(shape), unique_by=lambda a: a % len(shape)))
    begin = [data.draw(st.integers(0, 3)) for _ in axes]
    end = [b + data.draw(st.integers(0, 3)) for b in begin]
    a = rand(shape)
    index = [slice(None)] * len(shape)
    for ax, b, e in zip(axes, begin, end):
        index[ax] = slice(b, e)
    expected = a[tuple(index)]
    ty, r = run(relay.strided_slice(var(shape), begin, end, [1] * len(axes), axes=axes), a)
    assert ty == tt(expected.shape)
    np.testing.assert_array_equal(r, expected)


def test_strided_slice_size_mode_and_defaults():
    a = rand((5, 6))
    # size mode: end holds sizes, -1 means "to the end", strides are ignored
    ty, r = run(relay.strided_slice(var((5, 6)), [1, 2], [3, -1], [2, 2], slice_mode="size"), a)
    np.testing.assert_array_equal(r, a[1:4, 2:])
    assert ty == tt((3, 4))
    # a partial begin/end slices the leading axes only; the default stride is 1
    ty, r = run(relay.strided_slice(var((5, 6)), [-2], [5]), a)
    np.testing.assert_array_equal(r, a[-2:5])
    # a full reverse down to index 0 needs end=-(dim+1) (end=-1 is the last element)
    ty, r = run(relay.strided_slice(var((5, 6)), [4], [-6], [-1]), a)
    np.testing.assert_array_equal(r, a[::-1])


def test_strided_slice_rejects():
    x = var((4, 5))
    rejects(relay.strided_slice(x, [0], [2], [0]), tt((4, 5)), match="non-zero")
    rejects(relay.strided_slice(x, [3], [1]), tt((4, 5)),
            match=r"begin=3, end=1 with stride 1 is an invalid range for axis 0 of size 4")
    rejects(relay.strided_slice(x, [0, 0, 0], [1, 1, 1]), tt((4, 5)),
            match="more entries than the input rank 2")
    rejects(relay.strided_slice(x, [0, 0], [1, 1], axes=[0]), tt((4, 5)),
            match="one entry per axis")
    rejects(relay.strided_slice(x, [0], [1], axes=[2]), tt((4, 5)), match="axis=2 is out of")
    rejects(relay.strided_slice(x, [0], [1], slice_mode="start"), tt((4, 5)),
            match="slice_mode must be 'end' or 'size'")


# ---------------------------------------------------------------------------------------------
# layout_transform
def test_layout_transform_permutations():
    a = rand((2, 3, 4, 5))
    ty, r = run(relay.layout_transform(var((2, 3, 4, 5)), "NCHW", "NHWC"), a)
    assert ty == tt((2, 4, 5, 3))
    np.testing.assert_array_equal(r, a.transpose(0, 2, 3, 1))
    ty, back = run(relay.layout_transform(var(ty.shape), "NHWC", "NCHW"), r)
    np.testing.assert_array_equal(back, a)


def test_layout_transform_split_and_merge():
    a = rand((2, 32, 3, 5))
    ty, r = run(relay.layout_transform(var(a.shape), "NCHW", "NCHW16c"), a)
    assert ty == tt((2, 2, 3, 5, 16))
    np.testing.assert_array_equal(r, a.reshape(2, 2, 16, 3, 5).transpose(0, 1, 3, 4, 2))
    ty, r8 = run(relay.layout_transform(var(r.shape), "NCHW16c", "NCHW8c"), r)
    np.testing.assert_array_equal(r8, a.reshape(2, 4, 8, 3, 5).transpose(0, 1, 3, 4, 2))
    ty, back = run(relay.layout_transform(var(r8.shape), "NCHW8c", "NHWC"), r8)
    np.testing.assert_array_equal(back, a.transpose(0, 2, 3, 1))
    w = rand((8, 12, 3, 3))
    ty, r = run(relay.layout_transform(var(w.shape), "OIHW", "OIHW4i2o"), w)
    assert ty == tt((4, 3, 3, 3, 4, 2))
    np.testing.assert_array_equal(r, w.reshape(4, 2, 3, 4, 3, 3).transpose(0, 2, 4, 5, 3, 1))


def test_layout_transform_pads_with_zeros():
    a = rand((1, 6, 2))
    ty, r = run(relay.layout_transform(var(a.shape), "NCW", "NCW4c"), a)
    assert ty == tt((1, 2, 2, 4))  # ceil(6 / 4) = 2 blocks; the last two channels are padding
    padded = np.concatenate([a, np.zeros((1, 2, 2), a.dtype)], axis=1)
    np.testing.assert_array_equal(r, padded.reshape(1, 2, 4, 2).transpose(0, 1, 3, 2))


def test_layout_transform_rejects():
    x = var((2, 3, 4, 5))
    rejects(relay.layout_transform(x, "NCHW", "NHWC"), tt((2, 3, 4)),
            match=r"rank 3, but src_layout NCHW has 4 axes")
    rejects(relay.layout_transform(x, "NCHW4c", "NCHW"), tt((2, 3, 4, 5, 8)),
            match="axis c has size 8, expected 4")
    rejects(relay.layout_transform(x, "NCHW", "NCDHW"), tt((2, 3, 4, 5)),
            match="primal axes differ")
    for bad in ["NCHWc", "NC4HW", "NCHW4n4n", "NCH4w4c", "NC-HW", ""]:
        with pytest.raises(IrlabError, match="invalid layout"):
            relay.layout_transform(x, "NCHW", bad)


# ---------------------------------------------------------------------------------------------
# tile / repeat / reverse
@FAST
@given(st.lists(st.integers(1, 3), max_size=3).map(tuple),
       st.lists(st.integers(1, 3), max_size=4).map(tuple))
def test_tile(shape, reps):
    a = rand(shape, "int32")
    ty, r = run(relay.tile(var(shape, "int32"), reps), a)
    expected = np.tile(a, reps)
    assert ty == tt(expected.shape, "int32")
    np.testing.assert_array_equal(r, expected)


@FAST
@given(shapes, st.integers(1, 3), st.data())
def test_repeat_and_reverse(shape, repeats, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = rand(shape, "bool")
    ty, r = run(relay.repeat(var(shape, "bool"), repeats, axis), a)
    expected = np.repeat(a, repeats, axis=axis)
    assert ty == tt(expected.shape, "bool")
    np.testing.assert_array_equal(r, expected)
    ty, r = run(relay.reverse(var(shape, "bool"), axis), a)
    assert ty == tt(shape, "bool")
    np.testing.assert_array_equal(r, np.flip(a, axis))


def test_tile_repeat_reverse_reject():
    x = var((2, 3))
    rejects(relay.tile(x, (2, 0)), tt((2, 3)), match=r"reps=\(2, 0\) must hold positive")
    rejects(relay.repeat(x, 0, 0), tt((2, 3)), match="repeats must be >= 1, got 0")
    rejects(relay.repeat(x, 2, 2), tt((2, 3)), match="axis=2 is out of range")
    rejects(relay.reverse(x, -3), tt((2, 3)), match="axis=-3 is out of range")


# ---------------------------------------------------------------------------------------------
# one_hot
@pytest.mark.parametrize("ishape, axis", [((3,), -1), ((3,), 0), ((2, 3), 1), ((), -1)])
def test_one_hot(ishape, axis):
    depth = 4
    idx = RNG.integers(-1, depth + 1, size=ishape).astype("int32")
    call = relay.one_hot(var(ishape, "int32", "i"), relay.const(5.0), relay.const(-1.0),
                         depth, axis, "float32")
    on, off = np.array(5.0, "float32"), np.array(-1.0, "float32")
    ty = out_type(call, tt(ishape, "int32"), tt(()), tt(()))
    r = call.op.reference([idx, on, off], call.attrs, ty)
    eye = np.where(idx[..., None] == np.arange(depth), 5.0, -1.0).astype("float32")
    expected = np.moveaxis(eye, -1, axis)
    assert ty == tt(expected.shape)
    np.testing.assert_array_equal(r, expected)


def test_one_hot_rejects():
    call = relay.one_hot(var((3,), "int32"), relay.const(1), relay.const(0), 3, -1, "int32")
    rejects(call, tt((3,), "float32"), tt((), "int32"), tt((), "int32"),
            match="indices must be a tensor of integers")
    rejects(call, tt((3,), "int32"), tt((2,), "int32"), tt((), "int32"),
            match=r"must be scalars, got shapes \(2,\)")
    bad_axis = relay.one_hot(var((3,), "int32"), relay.const(1), relay.const(0), 3, 2, "int32")
    rejects(bad_axis, tt((3,), "int32"), tt((), "int32"), tt((), "int32"), match="axis=2")


# ---------------------------------------------------------------------------------------------
# end to end through type inference and the reference interpreter
def test_transform_chain_end_to_end():
    x = relay.var("x", shape=(2, 6, 4))
    parts = relay.split(x, 3, axis=1)
    y = relay.concatenate([relay.transpose(parts[2], (0, 2, 1)),
                           relay.transpose(parts[0], (0, 2, 1))], axis=2)
    y = relay.reshape(relay.strided_slice(y, [0, 0, 1], [2, 4, 2]), (-1,))
    func = relay.Function([x], y)
    a = rand((2, 6, 4))
    got = relay.create_executor("debug", mod=func).evaluate()(a).numpy()
    p = np.split(a, 3, axis=1)
    expected = np.concatenate([p[2].transpose(0, 2, 1), p[0].transpose(0, 2, 1)], axis=2)
    np.testing.assert_array_equal(got, expected[:, :, 1:2].reshape(-1))


def test_errors_through_type_inference_name_the_op_once():
    x = relay.var("x", shape=(2, 3))
    func = relay.Function([x], relay.reshape(x, (4, -1)))
    with pytest.raises(IrlabError, match=r"reshape: cannot reshape \(2, 3\)") as info:
        relay.create_executor("debug", mod=func).evaluate()(rand((2, 3)))
    assert "reshape: reshape" not in str(info.value)
