"""CombineParallelConv2D / Dense / BatchMatmul: TVM's before/expected cases and every model."""

import pytest

import irlab as tvm
from irlab import relay
from irlab.errors import IrlabError
from irlab.instrument import modules_identical
from irlab.ir import assert_structural_equal
from irlab.relay import transform
from irlab.relay.testing import run_opt_pass
from irlab.testing.check import check_numerics
from irlab.transform import get_pass

from _model_references import MODEL_NAMES, bound_model, check_model


def _check(before, expected, pass_, numerics=True):
    after = run_opt_pass(before, pass_)
    assert_structural_equal(after, run_opt_pass(expected, transform.InferType()),
                            map_free_vars=True)
    if numerics:
        check_numerics(before, after)
    return after


def _slice(y, begin, end):
    return relay.strided_slice(y, begin=begin, end=end, strides=[1] * len(begin),
                               slice_mode="size")


# -- conv2d (TVM's tests/python/relay/test_pass_combine_parallel_conv2d.py) --------------------
@pytest.mark.parametrize("channels", [(4, 4, 4, 4), (4, 8, 4, 7)])
def test_combine_parallel_conv2d(channels):
    c1, c2, c3, c4 = channels
    x = relay.var("x", shape=(1, 4, 16, 16))
    w1, w2, w4 = (relay.var(n, shape=(c, 4, 1, 1)) for n, c in (("w1", c1), ("w2", c2),
                                                                  ("w4", c4)))
    w3 = relay.var("w3", shape=(c3, 4, 3, 3))  # another kernel size: not combined
    args = [x, w1, w2, w3, w4]
    before = relay.Function(args, relay.Tuple([
        relay.nn.conv2d(x, w1), relay.nn.conv2d(x, w2), relay.nn.conv2d(x, w3),
        relay.nn.conv2d(x, w4), relay.nn.max_pool2d(x)]))
    y = relay.nn.conv2d(x, relay.concatenate((w1, w2, w4), axis=0), channels=c1 + c2 + c4)
    expected = relay.Function(args, relay.Tuple([
        _slice(y, [0, 0], [-1, c1]), _slice(y, [0, c1], [-1, c2]), relay.nn.conv2d(x, w3),
        _slice(y, [0, c1 + c2], [-1, c4]), relay.nn.max_pool2d(x)]))
    _check(before, expected, transform.CombineParallelConv2D(min_num_branches=2))


def test_combine_parallel_conv2d_scale_relu():
    c1, c2 = 4, 8
    x = relay.var("x", shape=(1, 4, 16, 16))
    w1, w2 = relay.var("w1", shape=(c1, 4, 1, 1)), relay.var("w2", shape=(c2, 4, 1, 1))
    s1, s2 = relay.var("scale1", shape=(c1, 1, 1)), relay.var("scale2", shape=(c2, 1, 1))
    bias = relay.var("bias", shape=(c2, 1, 1))
    args = [x, w1, w2, s1, s2, bias]
    y1 = relay.nn.relu(relay.multiply(relay.nn.conv2d(x, w1), s1))
    y2 = relay.add(relay.nn.relu(relay.multiply(relay.nn.conv2d(x, w2), s2)), bias)
    before = relay.Function(args, relay.Tuple([y1, y2]))
    y = relay.nn.conv2d(x, relay.concatenate((w1, w2), axis=0), channels=c1 + c2)
    y = relay.nn.relu(relay.multiply(y, relay.concatenate((s1, s2), axis=0)))
    expected = relay.Function(args, relay.Tuple([
        _slice(y, [0, 0], [-1, c1]), relay.add(_slice(y, [0, c1], [-1, c2]), bias)]))
    _check(before, expected, transform.CombineParallelConv2D(min_num_branches=2))


def test_combine_parallel_conv2d_scale():
    """A scale broadcast along the channels cannot be concatenated: only the convs merge."""
    c1, c2 = 4, 8
    x = relay.var("x", shape=(1, 4, 16, 16))
    w1, w2 = relay.var("w1", shape=(c1, 4, 1, 1)), relay.var("w2", shape=(c2, 4, 1, 1))
    s1, s2 = relay.var("scale1", shape=(1,)), relay.var("scale2", shape=(1,))
    args = [x, w1, w2, s1, s2]
    before = relay.Function(args, relay.Tuple([
        relay.multiply(relay.nn.conv2d(x, w1), s1), relay.multiply(relay.nn.conv2d(x, w2), s2)]))
    y = relay.nn.conv2d(x, relay.concatenate((w1, w2), axis=0), channels=c1 + c2)
    expected = relay.Function(args, relay.Tuple([
        relay.multiply(_slice(y, [0, 0], [-1, c1]), s1),
        relay.multiply(_slice(y, [0, c1], [-1, c2]), s2)]))
    _check(before, expected, transform.CombineParallelConv2D(min_num_branches=2))


def test_combine_parallel_conv2d_multiple_blocks():
    x = relay.var("x", shape=(1, 4, 16, 16))
    w = relay.var("w", shape=(2, 4, 1, 1))
    before, expected = x, x
    for _ in range(4):
        before = relay.concatenate((relay.nn.conv2d(before, w), relay.nn.conv2d(before, w)),
                                   axis=1)
        y = relay.nn.conv2d(expected, relay.concatenate((w, w), axis=0), channels=4)
        expected = relay.concatenate((_slice(y, [0, 0], [-1, 2]), _slice(y, [0, 2], [-1, 2])),
                                     axis=1)
    _check(relay.Function([x, w], before), relay.Function([x, w], expected),
           transform.CombineParallelConv2D(min_num_branches=2))


def test_fewer_branches_than_asked_stay():
    x = relay.var("x", shape=(1, 4, 8, 8))
    w1, w2 = relay.var("w1", shape=(4, 4, 1, 1)), relay.var("w2", shape=(4, 4, 1, 1))
    f = relay.Function([x, w1, w2], relay.Tuple([relay.nn.conv2d(x, w1),
                                                 relay.nn.conv2d(x, w2)]))
    mod = transform.InferType()(tvm.IRModule.from_expr(f))
    assert modules_identical(transform.CombineParallelConv2D()(mod), mod)  # default: 3


def test_grouped_convs_are_not_combined():
    x = relay.var("x", shape=(1, 4, 8, 8))
    ws = [relay.var(f"w{i}", shape=(4, 2, 1, 1)) for i in range(3)]
    f = relay.Function([x, *ws], relay.Tuple([relay.nn.conv2d(x, w, groups=2) for w in ws]))
    mod = transform.InferType()(tvm.IRModule.from_expr(f))
    assert modules_identical(transform.CombineParallelConv2D(2)(mod), mod)


# -- dense (TVM's tests/python/relay/test_pass_combine_parallel_dense.py) ----------------------
@pytest.mark.parametrize("i,j,k", [(3, 5, 4), (10, 20, 30)])
def test_combine_parallel_dense(i, j, k):
    x = relay.var("x", shape=(i, k))
    w1, w2, w4 = (relay.var(n, shape=(j, k)) for n in ("w1", "w2", "w4"))
    w3 = relay.var("w3", shape=(j + 1, k))  # another shape: not combined
    args = [x, w1, w2, w3, w4]
    before = relay.Function(args, relay.Tuple([relay.nn.dense(x, w) for w in
                                               (w1, w2, w3, w4)]))
    y = relay.nn.batch_matmul(relay.stack((x, x, x), axis=0), relay.stack((w1, w2, w4), axis=0))
    parts = relay.split(y, 3)
    y1, y2, y4 = (relay.squeeze(parts[n], [0]) for n in range(3))
    expected = relay.Function(args, relay.Tuple([y1, y2, relay.nn.dense(x, w3), y4]))
    _check(before, expected, transform.CombineParallelDense(min_num_branches=2))


@pytest.mark.parametrize("is_2d_bias", [False, True])
def test_combine_parallel_dense_biasadd(is_2d_bias):
    i, j, k = 3, 5, 4
    x = relay.var("x", shape=(i, k))
    w1, w2 = relay.var("w1", shape=(j, k)), relay.var("w2", shape=(j, k))
    bias_shape = (i, j) if is_2d_bias else (j,)
    b1, b2 = relay.var("b1", shape=bias_shape), relay.var("b2", shape=bias_shape)
    args = [x, w1, w2, b1, b2]
    before = relay.Function(args, relay.Tuple([relay.add(relay.nn.dense(x, w1), b1),
                                               relay.add(relay.nn.dense(x, w2), b2)]))
    y = relay.nn.batch_matmul(relay.stack((x, x), axis=0), relay.stack((w1, w2), axis=0))
    eb1, eb2 = (b1, b2) if is_2d_bias else (relay.expand_dims(b1, 0), relay.expand_dims(b2, 0))
    y = relay.add(y, relay.stack((eb1, eb2), axis=0))
    parts = relay.split(y, 2)
    expected = relay.Function(args, relay.Tuple([relay.squeeze(parts[0], [0]),
                                                 relay.squeeze(parts[1], [0])]))
    _check(before, expected, transform.CombineParallelDense(min_num_branches=2))


def test_combine_parallel_dense_biasadd_scale_reshape():
    i, j, k = 3, 5, 4
    x = relay.var("x", shape=(i, k))
    w1, w2 = relay.var("w1", shape=(j, k)), relay.var("w2", shape=(j, k))
    b1, b2 = relay.var("b1", shape=(j,)), relay.var("b2", shape=(j,))
    s1, s2 = relay.var("scale1", shape=(1,)), relay.var("scale2", shape=(1,))
    args = [x, w1, w2, b1, b2, s1, s2]
    newshape = (1, 1, 15)

    def branch(w, b, s):
        y = relay.multiply(relay.add(relay.nn.dense(x, w), b), s)
        return relay.reshape(y, newshape=newshape)  # injective: not merged

    before = relay.Function(args, relay.Tuple([branch(w1, b1, s1), branch(w2, b2, s2)]))
    y = relay.nn.batch_matmul(relay.stack((x, x), axis=0), relay.stack((w1, w2), axis=0))
    y = relay.add(y, relay.stack((relay.expand_dims(b1, 0), relay.expand_dims(b2, 0)), axis=0))
    y = relay.multiply(y, relay.stack((relay.expand_dims(s1, 0), relay.expand_dims(s2, 0)),
                                      axis=0))
    parts = relay.split(y, 2)
    expected = relay.Function(args, relay.Tuple([
        relay.reshape(relay.squeeze(parts[n], [0]), newshape=newshape) for n in range(2)]))
    _check(before, expected, transform.CombineParallelDense(min_num_branches=2))


def test_dense_to_batch_scalar_operand():
    """A scalar operand gets unit axes before stacking (TVM stacks it into a wrong shape)."""
    x = relay.var("x", shape=(3, 4))
    ws = [relay.var(f"w{n}", shape=(5, 4)) for n in range(2)]
    ss = [relay.var(f"s{n}", shape=()) for n in range(2)]
    before = relay.Function([x, *ws, *ss], relay.Tuple([
        relay.multiply(relay.nn.dense(x, w), s) for w, s in zip(ws, ss)]))
    after = run_opt_pass(before, transform.CombineParallelDense(min_num_branches=2))
    assert any(isinstance(n, relay.Call) and n.op.name == "multiply" and
               n.args[1].checked_type.shape == (2, 1, 1)
               for n in relay.expr_functor.post_order(after) if isinstance(n, relay.Call)
               and isinstance(n.op, relay.Op))
    check_numerics(before, after)


def test_combine_parallel_dense_flat():
    i, j, k = 3, 5, 4
    x = relay.var("x", shape=(i, k))
    ws = [relay.var(f"w{n + 1}", shape=((n + 1) * j, k)) for n in range(3)]
    before = relay.Function([x, *ws], relay.Tuple([relay.nn.dense(x, w) for w in ws]))
    y = relay.nn.dense(x, relay.concatenate(ws, axis=0), units=6 * j)
    expected = relay.Function([x, *ws], relay.Tuple([
        _slice(y, [0, 0], [-1, j]), _slice(y, [0, j], [-1, 2 * j]),
        _slice(y, [0, 3 * j], [-1, 3 * j])]))
    _check(before, expected, transform.CombineParallelDense(min_num_branches=3,
                                                            to_batch=False))


@pytest.mark.parametrize("shape1,shape2", [((), ()), ((1,), (1,)), ((5,), (1,)),
                                           ((1, 1), (1, 1)), ((1, 5), (1, 1)),
                                           ((3, 5), (3, 1))])
def test_combine_parallel_dense_flat_biasadd(shape1, shape2):
    i, j, k = 3, 5, 4
    x = relay.var("x", shape=(i, k))
    w1, w2 = relay.var("w1", shape=(j, k)), relay.var("w2", shape=(2 * j, k))
    b1, b2 = relay.var("b1", shape=shape1), relay.var("b2", shape=shape2)
    args = [x, w1, w2, b1, b2]
    before = relay.Function(args, relay.Tuple([relay.add(relay.nn.dense(x, w1), b1),
                                               relay.add(relay.nn.dense(x, w2), b2)]))
    y = relay.nn.dense(x, relay.concatenate((w1, w2), axis=0), units=3 * j)

    def spread(b, shape, units):
        if not shape:
            return relay.repeat(relay.expand_dims(b, -1), units, 0)
        return relay.repeat(b, units, len(shape) - 1) if shape[-1] == 1 else b

    b = relay.concatenate((spread(b1, shape1, j), spread(b2, shape2, 2 * j)),
                          axis=max(0, len(shape1) - 1))
    y = relay.add(y, b)
    lead = max(len(shape1), 2) - 1
    expected = relay.Function(args, relay.Tuple([
        _slice(y, [0] * lead + [0], [-1] * lead + [j]),
        _slice(y, [0] * lead + [j], [-1] * lead + [2 * j])]))
    _check(before, expected, transform.CombineParallelDense(min_num_branches=2,
                                                            to_batch=False))


# -- batch_matmul (TVM's tests/python/relay/test_pass_combine_parallel_batch_matmul.py) --------
def _batch_matmul_case(with_bias):
    b, i, j, k = 2, 3, 5, 4
    x = relay.var("x", shape=(b, i, k))
    ws = [relay.var(f"w{n}", shape=(b, j, k)) for n in range(3)]
    bs = [relay.var(f"b{n}", shape=(j,)) for n in range(3)] if with_bias else []
    outs = [relay.nn.batch_matmul(x, w) for w in ws]
    if with_bias:
        outs = [relay.add(o, bias) for o, bias in zip(outs, bs)]
    before = relay.Function([x, *ws, *bs], relay.Tuple(outs))
    y = relay.nn.batch_matmul(x, relay.concatenate(ws, axis=1))
    if with_bias:
        y = relay.add(y, relay.concatenate(bs, axis=-1))
    expected = relay.Function([x, *ws, *bs], relay.Tuple([
        _slice(y, [0, 0, n * j], [-1, -1, j]) for n in range(3)]))
    return before, expected


@pytest.mark.parametrize("with_bias", [False, True])
def test_combine_parallel_batch_matmul(with_bias):
    before, expected = _batch_matmul_case(with_bias)
    _check(before, expected, transform.CombineParallelBatchMatmul(min_num_branches=2))


def test_bad_options():
    for bad in (0, -1, 2.5, "3", True):
        with pytest.raises(IrlabError, match="min_num_branches"):
            transform.CombineParallelConv2D(bad)
    with pytest.raises(IrlabError, match="min_num_branches"):
        transform.CombineParallelDense(0, to_batch=False)


def test_pass_infos_and_registry():
    cases = [(transform.CombineParallelConv2D, "CombineParallelConv2d"),
             (transform.CombineParallelDense, "CombineParallelDense"),
             (transform.CombineParallelBatchMatmul, "CombineParallelBatchMatmul")]
    for make, name in cases:
        info = make().info
        assert (info.name, info.opt_level, info.required) == (name, 4, ["InferType"])
    assert get_pass("CombineParallelConv2d").info.name == "CombineParallelConv2d"


# -- every model ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_models_compute_the_same(name):
    """ResNet-50's bottleneck shortcut and first conv share their input (two branches); BERT's
    query/key/value denses share theirs (three)."""
    mod = bound_model(name)
    changed = []
    for pass_ in (transform.CombineParallelConv2D(min_num_branches=2),
                  transform.CombineParallelDense(), transform.CombineParallelDense(to_batch=False),
                  transform.CombineParallelBatchMatmul(min_num_branches=2)):
        after = pass_(mod)
        if not modules_identical(after, mod):
            changed.append(after)
    assert bool(changed) == (name in ("resnet50", "bert"))
    for after in changed:
        check_model(name, after)


def test_weight_computed_from_a_sibling_is_not_merged():
    x = relay.var("x", shape=(1, 4, 4, 4))
    w0 = relay.var("w0", shape=(4, 4, 1, 1))
    y0 = relay.nn.conv2d(x, w0)
    # the second conv's weight is computed from the first conv's output
    w1 = relay.strided_slice(relay.reshape(y0, (4, 4, 4, 1)), [0, 0, 0, 0], [4, 4, 1, 1])
    f = relay.Function([x, w0], relay.Tuple([y0, relay.nn.conv2d(x, w1)]))
    mod = transform.InferType()(tvm.IRModule.from_expr(f))
    assert modules_identical(transform.CombineParallelConv2D(2)(mod), mod)
