"""FuseOps / DefuseOps: before/expected cases ported from TVM's test_pass_fuse_ops.py and
test_pass_defuse_ops.py, fusion levels, ResNet groups, numerics on every model builder, and
random programs (hypothesis)."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from irlab import relay
from irlab.errors import DiagnosticError, IrlabError
from irlab.ir.module import IRModule
from irlab.ir.structural import assert_structural_equal, structural_equal
from irlab.relay import transform
from irlab.relay.expr_functor import post_order
from irlab.relay.function import Function
from irlab.relay.testing import MODELS, SMALL_MODELS, resnet
from irlab.relay.transform.fuse_ops import fused_function_name, kernel_name
from irlab.relay.transform.graph_partitioner import (FusionError, IndexedForwardGraph,
                                                     post_dominator_tree)
from irlab.relay.interpreter import create_executor
from irlab.testing.check import check_numerics, random_value
from irlab.testing.strategies import relay_functions
from irlab.transform import PassContext


# -- helpers ----------------------------------------------------------------------------------
def _typed(func):
    return transform.InferType()(IRModule.from_expr(func))["main"]


def _fuse(func, fuse_opt_level=-1, opt_level=2, config=None):
    mod = transform.InferType()(IRModule.from_expr(func))
    with PassContext(opt_level=opt_level, config=config):
        return transform.FuseOps(fuse_opt_level)(mod)["main"]


def _prim(params, body):
    return relay.Function(params, body).with_attr("Primitive", 1)


def _fused_functions(expr):
    # Primitive=0 marks a fused group without calls (a projection of a tuple of params)
    return [n for n in post_order(expr)
            if isinstance(n, Function) and n.get_attr("Primitive") is not None]


def _names(expr):
    return Counter(fused_function_name(f) for f in _fused_functions(expr))


def _check(before, expected, **kwargs):
    assert_structural_equal(_fuse(before, **kwargs), _typed(expected))


# -- pass registration ------------------------------------------------------------------------
def test_pass_infos_match_tvm():
    info = transform.FuseOps().info
    assert (info.name, info.opt_level, list(info.required)) == ("FuseOps", 0, ["InferType"])
    info = transform.DefuseOps().info
    assert (info.name, info.opt_level) == ("DefuseOps", 3)
    with pytest.raises(IrlabError, match="fuse_opt_level"):
        transform.FuseOps("2")
    x = relay.var("x", shape=(2,))
    with pytest.raises(IrlabError, match="max_depth"):
        _fuse(relay.Function([x], relay.exp(x)), config={"relay.FuseOps.max_depth": 1.5})


# -- ports of tests/python/relay/test_pass_fuse_ops.py ----------------------------------------
def test_fuse_simple():
    def before():
        x = relay.var("x", shape=(10, 20))
        y = relay.add(x, relay.const(1, "float32"))
        return relay.Function([x], relay.squeeze(relay.exp(y)))

    def expected():
        p = relay.var("p", shape=(10, 20))
        y = relay.add(p, relay.const(1, "float32"))
        f1 = _prim([p], relay.squeeze(relay.exp(y)))
        x = relay.var("x", shape=(10, 20))
        return relay.Function([x], relay.Call(f1, [x]))

    _check(before(), expected(), fuse_opt_level=2)
    _check(before(), expected())


def test_conv2d_fuse():
    dshape = (1, 16, 16, 16)

    def conv(x, w, k):
        return relay.nn.conv2d(x, w, kernel_size=(k, k), padding=(k // 2, k // 2), channels=16)

    def before():
        x = relay.var("x", shape=dshape)
        x = relay.add(x, relay.const(1, "float32"))
        y = conv(x, relay.var("w1"), 3)
        y1 = relay.add(relay.const(1, "float32"), y)  # the next dominator
        y = relay.add(y, y1)
        z2 = conv(y, relay.var("w2"), 1)
        z3 = conv(y, relay.var("w3"), 3)
        z = relay.add(z2, z3)  # can only be fused into z2
        return relay.Function(relay.analysis.free_vars(z), z)

    def expected():
        x = relay.var("p0", shape=dshape)
        f0 = _prim([x], relay.add(x, relay.const(1, "float32")))
        x, w = relay.var("p0", shape=dshape), relay.var("p1")
        y = conv(x, w, 3)
        f1 = _prim([x, w], relay.add(y, relay.add(relay.const(1, "float32"), y)))
        x, w = relay.var("p0", shape=dshape), relay.var("p1")
        f2 = _prim([x, w], conv(x, w, 3))
        x, w, offset = relay.var("p0", shape=dshape), relay.var("p1"), relay.var("p2",
                                                                                  shape=dshape)
        f3 = _prim([x, w, offset], relay.add(conv(x, w, 1), offset))
        x = relay.var("x", shape=dshape)
        w1, w2, w3 = relay.var("w1"), relay.var("w2"), relay.var("w3")
        y = relay.Call(f1, [relay.Call(f0, [x]), w1])
        z2 = relay.Call(f2, [y, w3])
        z3 = relay.Call(f3, [y, w2, z2])
        return relay.Function([x, w1, w2, w3], z3)

    assert [p.name_hint for p in before().params] == ["x", "w1", "w2", "w3"]
    _check(before(), expected(), fuse_opt_level=2)


def _pooled_pad(x):
    # TVM's test uses nn.upsampling (injective); nn.pad is the injective op we have.
    return relay.nn.pad(x, pad_width=((0, 0), (0, 0), (4, 4), (4, 4)))


def test_concatenate():
    dshape = (1, 4, 16, 16)

    def before():
        x = relay.var("x", shape=dshape)
        pooled = relay.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2), padding=(0, 0))
        concat = relay.concatenate((_pooled_pad(pooled), x), axis=1)
        out = relay.add(concat, relay.const(1, "float32"))
        return relay.Function(relay.analysis.free_vars(out), out)

    def expected():
        x = relay.var("x", shape=dshape)
        f0 = _prim([x], relay.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2),
                                            padding=(0, 0)))
        p0 = relay.var("p0", shape=(1, 4, 8, 8))
        p1 = relay.var("p1", shape=dshape)
        concat = relay.concatenate((_pooled_pad(p0), p1), axis=1)
        f1 = _prim([p0, p1], relay.add(concat, relay.const(1, "float32")))
        x = relay.var("x", shape=dshape)
        return relay.Function([x], relay.Call(f1, [relay.Call(f0, [x]), x]))

    assert not relay.analysis.free_vars(_fuse(before(), fuse_opt_level=0))
    _check(before(), expected(), fuse_opt_level=2)


def test_tuple_root():
    dshape = (1, 4, 16, 16)

    def before():
        x = relay.var("x", shape=dshape)
        pooled = relay.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2), padding=(0, 0))
        out = relay.Tuple((_pooled_pad(pooled), x))
        return relay.Function(relay.analysis.free_vars(out), out)

    def expected():
        x = relay.var("x", shape=dshape)
        f0 = _prim([x], relay.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2),
                                            padding=(0, 0)))
        p0 = relay.var("p0", shape=(1, 4, 8, 8))
        f1 = _prim([p0], _pooled_pad(p0))
        x = relay.var("x", shape=dshape)
        z = relay.Call(f1, [relay.Call(f0, [x])])
        return relay.Function([x], relay.Tuple((z, x)))

    assert not relay.analysis.free_vars(_fuse(before(), fuse_opt_level=0))
    _check(before(), expected(), fuse_opt_level=2)


def test_fuse_myia_regression():
    def before(dshape, dtype):
        x = relay.var("x", shape=dshape, dtype=dtype)
        y = relay.var("y", shape=dshape, dtype=dtype)
        ite = relay.If(relay.greater(x, y), relay.Function([], x), relay.Function([], y))
        return relay.Function([x, y], relay.Call(ite, []))

    def expected(dshape, dtype):
        x = relay.var("x", shape=dshape, dtype=dtype)
        y = relay.var("y", shape=dshape, dtype=dtype)
        p1 = relay.var("p1", shape=dshape, dtype=dtype)
        p2 = relay.var("p2", shape=dshape, dtype=dtype)
        fused_gt = _prim([p1, p2], relay.greater(p1, p2))
        ite = relay.If(fused_gt(x, y), relay.Function([], x), relay.Function([], y))
        return relay.Function([x, y], relay.Call(ite, []))

    _check(before((), "int64"), expected((), "int64"))


def test_fuse_tuple_get_elemwise():
    dim = 10

    def before():
        X = relay.var("X", shape=(1, dim))
        W = relay.var("W", shape=(3 * dim, dim))
        split = relay.split(relay.nn.dense(X, W), indices_or_sections=3, axis=1)
        out = relay.sigmoid(split[0]) + relay.tanh(split[1]) * relay.exp(split[2])
        return relay.Function([X, W], out)

    def expected():
        p0, p1 = relay.var("p0", shape=(1, dim)), relay.var("p1", shape=(3 * dim, dim))
        f0 = _prim([p0, p1], relay.nn.dense(p0, p1))
        p01 = relay.var("p01", shape=(1, 3 * dim))
        split = relay.split(p01, indices_or_sections=3, axis=1)
        out = relay.sigmoid(split[0]) + relay.tanh(split[1]) * relay.exp(split[2])
        f1 = _prim([p01], out)
        X = relay.var("X", shape=(1, dim))
        W = relay.var("W", shape=(3 * dim, dim))
        return relay.Function([X, W], relay.Call(f1, [relay.Call(f0, [X, W])]))

    assert not relay.analysis.free_vars(_fuse(before(), fuse_opt_level=0))
    _check(before(), expected(), fuse_opt_level=2)


def test_tuple_get_root():
    dim = 10

    def before():
        X = relay.var("X", shape=(1, 3 * dim))
        W = relay.var("W", shape=(dim, dim))
        split = relay.split(X, indices_or_sections=3, axis=1)
        return relay.Function([X, W], relay.nn.dense(split[0], W))

    def expected():
        p0 = relay.var("p0", shape=(1, 3 * dim))
        f0 = _prim([p0], relay.split(p0, indices_or_sections=3, axis=1)[0])
        p01, p1 = relay.var("p01", shape=(1, dim)), relay.var("p1", shape=(dim, dim))
        f1 = _prim([p01, p1], relay.nn.dense(p01, p1))
        X = relay.var("X", shape=(1, 3 * dim))
        W = relay.var("W", shape=(dim, dim))
        return relay.Function([X, W], relay.Call(f1, [relay.Call(f0, [X]), W]))

    assert not relay.analysis.free_vars(_fuse(before(), fuse_opt_level=0))
    _check(before(), expected(), fuse_opt_level=2)


def test_tuple_intermediate():
    dshape = (1, 4, 8, 8)

    def before(x):
        inj = relay.squeeze(x)
        y1 = relay.add(inj, relay.const(1, "float32"))
        tmp = relay.add(relay.squeeze(inj), relay.const(1, "float32"))
        y2 = relay.add(tmp, relay.const(1, "float32"))
        y3 = relay.add(inj, relay.const(1, "float32"))
        concat = relay.concatenate((y1, y2, y3), axis=1)
        out = relay.add(relay.squeeze(concat), relay.const(1, "float32"))
        return relay.Function(relay.analysis.free_vars(out), out)

    def expected():
        f1 = before(relay.var("p0", shape=dshape)).with_attr("Primitive", 1)
        x = relay.var("x", shape=dshape)
        return relay.Function([x], relay.Call(f1, [x]))

    orig = before(relay.var("x", shape=dshape))
    _fuse(orig, fuse_opt_level=0)
    _check(orig, expected(), fuse_opt_level=2)


def test_tuple_consecutive():
    dshape = (1, 2, 8, 8)

    def gen_intermediate_tuple(x):
        ys = [relay.add(x, relay.const(1, "float32")) for _ in range(3)]
        return relay.add(relay.concatenate(ys, axis=1), relay.const(1, "float32"))

    def gen_consecutive_tuple(x):
        return relay.concatenate([gen_intermediate_tuple(x) for _ in range(3)], axis=1)

    def before(x):
        pooled = relay.nn.max_pool2d(gen_consecutive_tuple(x), pool_size=(2, 2),
                                     strides=(2, 2), padding=(0, 0))
        out = relay.add(pooled, relay.const(1, "float32"))
        out2 = relay.add(out, relay.const(1, "float32"))
        out_tup = relay.Tuple((out, out2))
        return relay.Function(relay.analysis.free_vars(out_tup), out_tup)

    def expected():
        p0 = relay.var("p0", shape=dshape)
        f0 = _prim([p0], gen_consecutive_tuple(p0))
        p01 = relay.var("p01", shape=(1, dshape[1] * 9, dshape[2], dshape[3]))
        pooled = relay.nn.max_pool2d(p01, pool_size=(2, 2), strides=(2, 2), padding=(0, 0))
        f1 = _prim([p01], relay.add(pooled, relay.const(1, "float32")))
        p02 = relay.var("p02", shape=(1, dshape[1] * 9, dshape[2] // 2, dshape[3] // 2))
        f2 = _prim([p02], relay.add(p02, relay.const(1, "float32")))
        x = relay.var("x", shape=dshape)
        z = relay.Call(f1, [relay.Call(f0, [x])])
        return relay.Function([x], relay.Tuple((z, relay.Call(f2, [z]))))

    orig = before(relay.var("x", shape=dshape))
    _fuse(orig, fuse_opt_level=0)
    _check(orig, expected(), fuse_opt_level=2)


def test_inception_like():
    dshape = (1, 4, 8, 8)

    def conv(data):
        y = relay.nn.conv2d(data, relay.var("w"), kernel_size=(3, 3), padding=(1, 1),
                            channels=dshape[1])
        return relay.nn.relu(data=y)

    def inception_like(data):
        return relay.concatenate((conv(data), conv(data)), axis=1)

    def before():
        x = relay.var("x", shape=dshape)
        out = inception_like(inception_like(x))
        return relay.Function(relay.analysis.free_vars(out), out)

    def expected():
        dshape2 = (dshape[0], dshape[1] * 2, dshape[2], dshape[3])

        def conv_fn(shape):
            p = relay.var("p0", shape=shape)
            c = conv(p)
            return _prim(relay.analysis.free_vars(c), c)

        def concat_fn(shape):
            a, b = relay.var("p0", shape=shape), relay.var("p1", shape=shape)
            return _prim([a, b], relay.concatenate((a, b), axis=1))

        x = relay.var("x", shape=dshape)
        ws = [relay.var(f"w{i}") for i in range(4)]
        c1 = relay.Call(conv_fn(dshape), [x, ws[0]])
        c2 = relay.Call(conv_fn(dshape), [x, ws[1]])
        concat = relay.Call(concat_fn(dshape), [c1, c2])
        c3 = relay.Call(conv_fn(dshape2), [concat, ws[2]])
        c4 = relay.Call(conv_fn(dshape2), [concat, ws[3]])
        out = relay.Call(concat_fn(dshape), [c3, c4])
        return relay.Function([x, *ws], out)

    _fuse(before(), fuse_opt_level=0)
    _check(before(), expected(), fuse_opt_level=2)


def test_fuse_parallel_injective():
    def body(x):
        y = relay.add(x, relay.const(1, "float32"))
        # TVM's test joins the branches with left_shift (broadcast); maximum is one too.
        return relay.maximum(relay.squeeze(y), relay.transpose(y, axes=[0, 1]))

    def before():
        x = relay.var("x", shape=(10, 20))
        return relay.Function([x], body(x))

    def expected():
        p = relay.var("p", shape=(10, 20))
        f1 = _prim([p], body(p))
        x = relay.var("x", shape=(10, 20))
        return relay.Function([x], relay.Call(f1, [x]))

    assert not relay.analysis.free_vars(_fuse(before(), fuse_opt_level=0))
    _check(before(), expected(), fuse_opt_level=2)


def test_immutable():
    def before():
        x = relay.var("x", shape=(10, 20))
        y = relay.squeeze(relay.exp(relay.add(x, relay.const(1, "float32"))))
        return IRModule.from_expr(relay.Function([x], y))

    mod = before()
    main = mod["main"]
    new_mod = transform.FuseOps(fuse_opt_level=2)(mod)
    assert mod["main"] is main and structural_equal(mod, before())
    assert len(_fused_functions(new_mod["main"])) == 1


def _exp_chain(n):
    x = relay.var("x", shape=(10, 20))
    y = x
    for _ in range(n):
        y = relay.exp(y)
    return relay.Function([x], y)


def _two_exp_functions(n, max_fused_ops):
    def chain(count):
        p = relay.var("p", shape=(10, 20))
        y = p
        for _ in range(count):
            y = relay.exp(y)
        return _prim([p], y)

    x = relay.var("x", shape=(10, 20))
    z = relay.Call(chain(max_fused_ops), [x])
    return relay.Function([x], relay.Call(chain(n - max_fused_ops), [z]))


def test_fuse_max():
    _check(_exp_chain(300), _two_exp_functions(300, 256), fuse_opt_level=2)
    _check(_exp_chain(300), _two_exp_functions(300, 256))
    _check(_exp_chain(20), _two_exp_functions(20, 10),
           config={"relay.FuseOps.max_depth": 10})


def test_fuse_max_diamond():
    def create_diamond(x, branch_len):
        x1 = x2 = x
        for _ in range(branch_len):
            x1, x2 = relay.exp(x1), relay.exp(x2)
        return relay.add(x1, x2)

    def before(branch_len, num_diamond):
        x = relay.var("x", shape=(10, 20))
        out = x
        for _ in range(num_diamond):
            out = create_diamond(out, branch_len)
        return relay.Function([x], out)

    def after(branch_len, num_diamond):
        inp = relay.var("x", shape=(10, 20))
        out = inp
        for _ in range(num_diamond):
            p = relay.var("p", shape=(10, 20))
            out = relay.Call(_prim([p], create_diamond(p, branch_len)), [out])
        return relay.Function([inp], out)

    branch_len, num_diamond = 5, 3
    _check(before(branch_len, num_diamond), after(branch_len, num_diamond),
           config={"relay.FuseOps.max_depth": branch_len * 2 + 1})


def test_fuse_take():
    def before():
        x = relay.var("x", shape=(10, 1))
        concat = relay.concatenate([x, x], axis=-1)
        out = relay.take(concat, indices=relay.const([0], dtype="int64"))
        return relay.Function([x], out)

    def expected(c):
        x = relay.var("x", shape=(10, 1))
        p0 = relay.var("p0", shape=(10, 1))
        p1 = relay.var("p1", shape=(1,), dtype="int64")
        concat = relay.concatenate([p0, p0], axis=-1)
        f0 = _prim([p0, p1], relay.take(concat, indices=p1))
        return relay.Function([x], relay.Call(f0, [x, c]))

    fused = _fuse(before())
    # the non-scalar constant stays outside the group and is passed in as p1
    const = fused.body.args[1]
    assert isinstance(const, relay.Constant) and const.data.numpy().tolist() == [0]
    assert_structural_equal(fused, _typed(expected(const)))
    # relay.FuseOps.link_params keeps the constant inside the kernel
    linked = _fuse(before(), config={"relay.FuseOps.link_params": True})
    assert len(linked.body.args) == 1 and relay.analysis.free_vars(linked.body.op) == []


def test_fuse_bcast_reduce_scalar():
    def before():
        x = relay.var("x", shape=(), dtype="int32")
        return relay.Function([x], relay.min(relay.less(x, relay.const(10, dtype="int32"))))

    def expected():
        p0 = relay.var("p0", shape=(), dtype="int32")
        f0 = _prim([p0], relay.min(relay.less(p0, relay.const(10, dtype="int32"))))
        x = relay.var("x", shape=(), dtype="int32")
        return relay.Function([x], relay.Call(f0, [x]))

    _check(before(), expected())


def test_fuse_softmax():
    def before():
        x = relay.var("x", shape=(16, 16))
        return relay.Function([x], relay.cast(relay.nn.softmax(x), "float16"))

    def expected():
        p0 = relay.var("p0", shape=(16, 16))
        f0 = _prim([p0], relay.cast(relay.nn.softmax(p0), "float16"))
        x = relay.var("x", shape=(16, 16))
        return relay.Function([x], relay.Call(f0, [x]))

    _check(before(), expected())


# -- further behaviour ------------------------------------------------------------------------
def _bn_args(prefix, channels=4):
    return [relay.var(f"{prefix}{n}", shape=(channels,)) for n in ("g", "b", "m", "v")]


def test_tuple_get_item_of_multi_output_op():
    """batch_norm stays alone; `%bn.0 -> relu` becomes a function of the whole tuple."""
    x = relay.var("x", shape=(1, 4, 3, 3))
    args = _bn_args("")
    before = relay.Function([x, *args], relay.nn.relu(relay.nn.batch_norm(x, *args)[0]))

    ps = [relay.var(f"p{i}", shape=(1, 4, 3, 3) if i == 0 else (4,)) for i in range(5)]
    f0 = _prim(ps, relay.nn.batch_norm(*ps).astuple())
    tuple_ty = _typed(relay.Function(ps, relay.nn.batch_norm(*ps).astuple())).ret_type
    t = relay.var("p0", tuple_ty)
    f1 = _prim([t], relay.nn.relu(relay.TupleGetItem(t, 0)))
    x2 = relay.var("x", shape=(1, 4, 3, 3))
    args2 = _bn_args("")
    expected = relay.Function([x2, *args2], relay.Call(f1, [relay.Call(f0, [x2, *args2])]))
    _check(before, expected)


def test_opt_level_0_makes_one_function_per_op():
    x = relay.var("x", shape=(10, 20))
    y = relay.squeeze(relay.exp(relay.add(x, relay.const(1, "float32"))))
    fused = _fuse(relay.Function([x], y), fuse_opt_level=0)
    assert _names(fused) == Counter({"fused_add": 1, "fused_exp": 1, "fused_squeeze": 1})
    # -1 takes the PassContext's opt level
    assert _names(_fuse(relay.Function([x], y), opt_level=0)) == _names(fused)
    assert _names(_fuse(relay.Function([x], y), opt_level=3)) == \
        Counter({"fused_add_exp_squeeze": 1})


def test_reshape_only_attribute():
    x = relay.var("x", shape=(1, 6, 1))
    fn = relay.Function([x], relay.reshape(relay.squeeze(x, axis=[2]), (2, 3)))
    (f,) = _fused_functions(_fuse(fn))
    assert f.get_attr("relay.reshape_only") == 1 and f.get_attr("Primitive") == 1
    fn = relay.Function([x], relay.exp(relay.reshape(x, (2, 3))))
    (f,) = _fused_functions(_fuse(fn))
    assert f.get_attr("relay.reshape_only") is None


def test_primitive_functions_are_left_alone():
    x = relay.var("x", shape=(4,))
    p = relay.var("p", shape=(4,))
    inner = _prim([p], relay.exp(relay.exp(p)))
    y = relay.add(relay.Call(inner, [x]), relay.const(1.0))
    fused = _fuse(relay.Function([x], y))
    fns = _fused_functions(fused)
    assert len(fns) == 2 and any(structural_equal(f, _typed(inner)) for f in fns)
    assert sorted(map(fused_function_name, fns)) == ["fused_add", "fused_exp_exp"]
    top = _typed(relay.Function([x], relay.exp(x))).with_attr("Primitive", 1)
    mod = IRModule.from_expr(top)
    assert transform.FuseOps()(mod)["main"].body is top.body


def test_nested_function_body_is_fused_inside():
    x = relay.var("x", shape=(4,))
    a = relay.var("a", shape=(4,))
    inner = relay.Function([a], relay.exp(relay.add(a, relay.const(1.0))))
    fused = _fuse(relay.Function([x], relay.nn.relu(relay.Call(inner, [x]))))
    outer_call = fused.body
    assert fused_function_name(outer_call.op) == "fused_nn_relu"
    nested = outer_call.args[0].op
    assert nested.get_attr("Primitive") is None
    assert fused_function_name(nested.body.op) == "fused_add_exp"
    check_numerics(relay.Function([x], relay.nn.relu(relay.Call(inner, [x]))), fused)


def test_let_bound_values_are_fused_separately():
    x = relay.var("x", shape=(4,))
    v = relay.var("v")
    body = relay.Let(v, relay.exp(relay.add(x, relay.const(1.0))), relay.negative(relay.exp(v)))
    fused = _fuse(relay.Function([x], body))
    assert _names(fused) == Counter({"fused_add_exp": 1, "fused_exp_negative": 1})
    check_numerics(relay.Function([x], body), fused)


def test_residual_block_groups():
    """conv+bias+relu, then conv+bias+residual add+relu: the residual add joins the conv
    that feeds it, and the block input (read by a conv) stays out."""
    x = relay.var("x", shape=(1, 4, 6, 6))
    w1, w2 = relay.var("w1", shape=(4, 4, 3, 3)), relay.var("w2", shape=(4, 4, 3, 3))
    b1, b2 = relay.var("b1", shape=(4, 1, 1)), relay.var("b2", shape=(4, 1, 1))
    act = relay.nn.relu(x)

    def conv(d, w):
        return relay.nn.conv2d(d, w, padding=(1, 1), channels=4, kernel_size=(3, 3))

    y = relay.nn.relu(relay.add(conv(act, w1), b1))
    y = relay.nn.relu(relay.add(relay.add(conv(y, w2), b2), act))
    fn = relay.Function([x, w1, b1, w2, b2], y)
    for level in (1, 2, 3):
        assert _names(_fuse(fn, fuse_opt_level=level)) == Counter({
            "fused_nn_relu": 1, "fused_nn_conv2d_add_nn_relu": 1,
            "fused_nn_conv2d_add_add_nn_relu": 1})
    assert sum(_names(_fuse(fn, fuse_opt_level=0)).values()) == 8
    check_numerics(fn, _fuse(fn))


def test_resnet18_groups_at_every_level():
    mod, _ = resnet.get_workload(num_layers=18, num_classes=10, image_shape=(3, 32, 32))
    mod = transform.InferType()(mod)
    counts = {}
    for level in (0, 1, 2, 3):
        with PassContext(opt_level=level):
            counts[level] = _names(transform.FuseOps()(mod)["main"])
    ops = Counter(n.op.name for n in post_order(mod["main"]) if isinstance(n, relay.Call))
    assert sum(counts[0].values()) == sum(ops.values())  # one function per op
    assert counts[1] == counts[2] == counts[3]
    fused = counts[2]
    # every residual add joins the conv that feeds it; BN-ReLU pairs fuse through .0
    assert fused["fused_nn_conv2d_add"] == 8
    assert fused["fused_nn_relu"] == fused["fused_nn_batch_norm"] - 1 == 17
    assert fused["fused_nn_dense_nn_bias_add"] == 1
    assert sum(fused.values()) < sum(counts[0].values())


def _simplified_resnet():
    mod, params = resnet.get_workload(num_layers=18, num_classes=10, image_shape=(3, 32, 32))
    from irlab.relay.build_module import bind_params_by_name

    mod = IRModule.from_expr(bind_params_by_name(mod["main"], params))
    seq = transform.Sequential([transform.SimplifyInference(), transform.FoldConstant(),
                                transform.FoldScaleAxis()])
    with PassContext(opt_level=3):
        return seq(mod)


def test_resnet18_after_simplify_inference():
    mod = transform.InferType()(_simplified_resnet())
    names = {}
    for level in (0, 1, 2, 3):
        with PassContext(opt_level=level):
            names[level] = _names(transform.FuseOps()(mod)["main"])
    assert names[1] == names[2] == names[3]
    ops = Counter(n.op.name for n in post_order(mod["main"]) if isinstance(n, relay.Call))
    assert sum(names[0].values()) == sum(ops.values())
    fused = names[2]
    convs = [n for n in fused if "conv2d" in n]
    # one conv per kernel, first in it; conv + bias + relu chains; residual adds joined to
    # the conv feeding them; the pre-activation BN (now add) + relu on its own
    assert all(n.startswith("fused_nn_conv2d") and n.count("conv2d") == 1 for n in convs)
    assert fused["fused_nn_conv2d_add_nn_relu"] > 0
    assert fused["fused_nn_conv2d_add_add_nn_relu"] > 0
    assert fused["fused_add_nn_relu"] > 0
    with PassContext(opt_level=3):
        check_numerics(mod, transform.FuseOps()(mod), rtol=1e-4, atol=1e-4)


# -- numerics and the inverse on every model builder -------------------------------------------
@pytest.mark.parametrize("name", sorted(SMALL_MODELS))
def test_models_numerics_and_defuse(name):
    mod, params = MODELS[name]()
    mod = transform.InferType()(mod)
    fused = transform.FuseOps(fuse_opt_level=2)(mod)
    assert len(_fused_functions(fused["main"])) > 0
    assert_structural_equal(transform.DefuseOps()(fused), mod)
    check_numerics(mod, fused, params=params, rtol=1e-4, atol=1e-4)


# -- DefuseOps (tests/python/relay/test_pass_defuse_ops.py) ---------------------------------
def test_defuse_simple():
    x = relay.var("x", shape=(10, 20))
    w = relay.squeeze(relay.exp(relay.add(x, relay.const(1, "float32"))))
    before = IRModule.from_expr(relay.Function([x], w))
    before = transform.InferType()(before)
    defused = transform.DefuseOps()(transform.FuseOps()(before))
    assert_structural_equal(defused, before)


def test_defuse_complex():
    data = relay.var("data", shape=(1, 3, 16, 16))
    w = relay.var("w", shape=(8, 3, 3, 3))
    bn = _bn_args("bn", channels=8)
    c0 = relay.nn.conv2d(data, w, strides=(2, 2), padding=(1, 1), channels=8,
                         kernel_size=(3, 3))
    c2 = relay.nn.batch_norm(c0, *bn)[0]
    out = relay.nn.relu(relay.add(c2, relay.const(np.ones((8, 1, 1), "float32"))))
    before = transform.InferType()(IRModule.from_expr(relay.Function([data, w, *bn], out)))
    fused = transform.FuseOps(fuse_opt_level=2)(before)
    assert_structural_equal(transform.DefuseOps()(fused), before)


def test_defuse_keeps_non_call_bodies_and_rejects_duplicate_names():
    # a group rooted at a TupleGetItem has a non-call body: DefuseOps leaves it, as TVM
    x = relay.var("x", shape=(6, 4))
    fused = _fuse(relay.Function([x], relay.split(x, 3, axis=0)[1]))
    (f,) = _fused_functions(fused)
    assert isinstance(f.body, relay.TupleGetItem)
    assert len(_fused_functions(transform.DefuseOps()(IRModule.from_expr(fused))["main"])) == 1
    a, b = relay.var("p", shape=(2,)), relay.var("p", shape=(2,))
    bad = _prim([a, b], relay.add(a, b))
    y = relay.var("y", shape=(2,))
    with pytest.raises(DiagnosticError, match="same variable name"):
        transform.DefuseOps()(IRModule.from_expr(relay.Function([y], bad(y, y))))


# -- analysis pieces ----------------------------------------------------------------------------
def test_forward_graph_edges_and_post_dominators():
    x = relay.var("x", shape=(4, 4))
    b = relay.var("b", shape=(4,))
    s = relay.add(x, b)            # broadcast; x has the output shape -> ElemWise edge
    t = relay.exp(s)
    u = relay.add(s, t)
    fn = _typed(relay.Function([x, b], u))
    graph = IndexedForwardGraph.create(fn)
    kinds = [type(n.ref).__name__ for n in graph.post_dfs_order]
    assert kinds == ["Var", "Var", "Call", "Call", "Call"]
    xn, bn, sn, tn, un = graph.post_dfs_order
    assert [e.pattern.name for e in xn.outputs] == ["ELEMWISE"]
    assert [e.pattern.name for e in bn.outputs] == ["BROADCAST"]
    assert xn.extern_ref and un.extern_ref and not sn.extern_ref
    tree = post_dominator_tree(graph)
    assert tree[sn.index].parent.gnode is un  # the diamond's sink
    assert tree[tn.index].parent.gnode is un
    assert "node[2] add" in graph.debug_dump()
    assert issubclass(FusionError, IrlabError)


def test_scalar_and_tensor_constant_patterns():
    x = relay.var("x", shape=(3,))
    y = relay.add(relay.add(x, relay.const(2.0)), relay.const(np.ones(3, "float32")))
    y = relay.add(relay.cast(y, "int8"), relay.const(1, "int8"))  # int8 scalars: opaque
    graph = IndexedForwardGraph.create(_typed(relay.Function([x], y)))
    consts = [n for n in graph.post_dfs_order if isinstance(n.ref, relay.Constant)]
    assert [c.pattern.name for c in consts] == ["ELEMWISE", "OPAQUE", "OPAQUE"]
    (f,) = [f for f in _fused_functions(_fuse(relay.Function([x], y)))]
    assert sum(isinstance(p.type_annotation, relay.TensorType) for p in f.params) == 3


def test_deep_chain_fuses_without_recursion_error():
    x = relay.var("x", shape=(2,))
    y = x
    for _ in range(10000):
        y = relay.negative(y)
    fused = _fuse(relay.Function([x], y))
    fns = _fused_functions(fused)
    assert [len(_names(f.body)) for f in fns] == [0] * len(fns)
    assert sorted(fused_function_name(f).count("negative") for f in fns) == \
        [16] + [256] * 39


# -- kernel names -------------------------------------------------------------------------------
def test_kernel_names():
    x = relay.var("x", shape=(1, 4, 4, 4))
    w = relay.var("w", shape=(4, 4, 1, 1))
    y = relay.nn.relu(relay.add(relay.nn.conv2d(x, w, channels=4, kernel_size=(1, 1)),
                                relay.const(1.0)))
    (f,) = _fused_functions(_fuse(relay.Function([x, w], y)))
    assert fused_function_name(f) == "fused_nn_conv2d_add_nn_relu"
    assert kernel_name(f) == "tvmgen_default_fused_nn_conv2d_add_nn_relu"
    assert kernel_name(f, mod_name="mymod") == "tvmgen_mymod_fused_nn_conv2d_add_nn_relu"
    taken = {}
    assert [kernel_name(f, name_map=taken) for _ in range(3)] == [
        "tvmgen_default_fused_nn_conv2d_add_nn_relu",
        "tvmgen_default_fused_nn_conv2d_add_nn_relu_1",
        "tvmgen_default_fused_nn_conv2d_add_nn_relu_2"]


def test_long_kernel_names_are_truncated_with_std_hash():
    # ops in post-order spell this 86-character candidate; std::hash computed with g++
    candidate = ("fused_nn.conv2d_add_nn.relu_add_nn.relu_multiply_add_nn.relu_nn.conv2d_add_"
                 "nn.relu_add")
    p = relay.var("p0", shape=(1, 1, 2, 2))
    w = relay.var("p1", shape=(1, 1, 1, 1))
    y = relay.nn.relu(relay.add(relay.nn.conv2d(p, w, kernel_size=(1, 1)), p))
    y = relay.nn.relu(relay.add(y, p))
    y = relay.nn.relu(relay.add(relay.multiply(y, p), p))
    y = relay.add(relay.nn.relu(relay.add(relay.nn.conv2d(y, w, kernel_size=(1, 1)), p)), p)
    f = relay.Function([p, w], y)
    assert fused_function_name(f) == candidate.replace(".", "_")
    expected = "tvmgen_default_" + candidate[:80].replace(".", "_") + "_597004b5e6e52440_"
    assert kernel_name(f) == expected
    with pytest.raises(DiagnosticError, match="primitive ops"):
        fused_function_name(relay.Function([p], relay.Call(relay.var("g"), [p])))


# -- random programs ------------------------------------------------------------------------
def _flatten(value):
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value.numpy()]


def _assert_same_results(before, after, seed=0):
    """Evaluate both modules on the same random positional inputs (random programs repeat
    parameter names, so the by-name check_numerics does not apply)."""
    rng = np.random.default_rng(seed)
    args = [random_value(p.checked_type, rng) for p in before["main"].params]
    with np.errstate(all="ignore"):
        want = _flatten(create_executor("debug", mod=before).evaluate()(*args))
        got = _flatten(create_executor("debug", mod=after).evaluate()(*args))
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert w.shape == g.shape and w.dtype == g.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, equal_nan=True)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(relay_functions(max_steps=12, nesting=True))
def test_random_programs_keep_numerics(fn):
    mod = transform.InferType()(IRModule.from_expr(fn))
    for level in (0, 2):
        fused = transform.FuseOps(fuse_opt_level=level)(mod)
        _assert_same_results(mod, fused)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(relay_functions(max_steps=12, nesting=False))
def test_random_programs_defuse_inverts_fuse(fn):
    mod = transform.InferType()(IRModule.from_expr(fn))
    fused = transform.FuseOps(fuse_opt_level=2)(mod)
    defused = transform.DefuseOps()(fused)
    if all(isinstance(f.body, relay.Call) for f in _fused_functions(fused["main"])):
        assert_structural_equal(defused, mod)
    else:  # TVM's DefuseOps only inlines call bodies; the program must still agree
        _assert_same_results(mod, defused)


def test_reshape_only_is_an_op_trait():
    """TVM's TReshapeOp lives on the ops (set where each is defined); FuseOps marks a fused
    group of them ``relay.reshape_only`` and graph codegen makes it a ``__nop``."""
    from irlab.ir.op import Op

    reshapes = {"reshape", "reshape_like", "squeeze", "expand_dims", "nn.batch_flatten"}
    for name in reshapes:
        assert Op.get(name).get_attr("TReshapeOp") is True, name
    assert not Op.get("transpose").get_attr("TReshapeOp", False)


def test_graph_codegen_reads_the_reshape_only_mark():
    """The graph codegen's ``__nop`` is FuseOps' ``relay.reshape_only`` (one definition)."""
    import numpy as np

    import irlab
    from irlab import relay
    from irlab.contrib import graph_executor

    x = relay.var("x", shape=(2, 6))
    mod = irlab.IRModule.from_expr(relay.Function([x], relay.reshape(x, (3, 4))))
    fused = relay.transform.FuseOps(fuse_opt_level=2)(relay.transform.InferType()(mod))
    assert "relay.reshape_only=1" in fused.astext()
    factory = relay.build(mod, "llvm")
    assert '"__nop"' in factory.get_graph_json()
    runner = graph_executor.GraphModule(factory["default"](irlab.cpu()))
    data = np.arange(12, dtype="float32").reshape(2, 6)
    runner.set_input("x", data)
    runner.run()
    np.testing.assert_array_equal(runner.get_output(0).numpy(), data.reshape(3, 4))


def test_stop_fusion_cuts_the_group():
    """``annotation.stop_fusion`` ends a fused group: add and exp become two primitive
    functions (fused into one without it), the annotation itself is gone, and the program
    computes the same."""
    import numpy as np

    import irlab
    from irlab import relay

    def build(stop):
        x = relay.var("x", shape=(2, 3))
        y = relay.add(x, relay.const(1.0))
        y = relay.annotation.stop_fusion(y) if stop else y
        return irlab.IRModule.from_expr(relay.Function([x], relay.exp(y)))

    def primitives(mod):
        fused = relay.transform.FuseOps(fuse_opt_level=2)(relay.transform.InferType()(mod))
        assert "stop_fusion" not in fused.astext()
        return fused.astext().count("Primitive=1")

    assert primitives(build(True)) == 2 and primitives(build(False)) == 1
    data = np.random.default_rng(0).standard_normal((2, 3)).astype("float32")
    for kind in ("debug", "graph"):
        out = relay.create_executor(kind, mod=build(True), target="llvm").evaluate()(data)
        np.testing.assert_allclose(out.numpy(), np.exp(data + 1), rtol=1e-5)
