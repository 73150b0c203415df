"""The dataflow pattern language: nodes, matching, rewriting and partitioning (cases ported
from TVM's tests/python/relay/test_dataflow_pattern.py, plus random-graph properties)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from irlab import relay
from irlab.errors import IrlabError
from irlab.ir.attrs import DictAttrs
from irlab.ir.module import IRModule
from irlab.ir.structural import assert_structural_equal, structural_equal
from irlab.relay.analysis import count_ops, free_vars
from irlab.relay.build_module import bind_params_by_name
from irlab.relay.dataflow_pattern import (
    AltPattern, AttrPattern, CallPattern, ConstantPattern, DataTypePattern, DFPatternCallback,
    ExprPattern, FunctionPattern, IfPattern, LetPattern, ShapePattern, TupleGetItemPattern,
    TuplePattern, TypePattern, VarPattern, WildcardPattern, dominates, has_dtype, has_shape,
    has_type, is_constant, is_expr, is_if, is_let, is_op, is_tuple, is_tuple_get_item, is_var,
    rewrite, wildcard)
from irlab.relay.testing import run_opt_pass
from irlab.relay.transform import InferType
from irlab.relay.interpreter import create_executor
from irlab.testing.check import check_numerics, random_value
from irlab.testing.strategies import relay_functions

K_ELEMWISE = 0
K_BROADCAST = 1
# The float32 constant 1e-5 read back as a Python float (irlab compares attrs exactly, TVM
# within 1e-9).
EPS = float(np.float32(1e-5))


# ---------------------------------------------------------------------------------------------
# pattern nodes
def test_pattern_nodes():
    assert isinstance(is_expr(relay.var("x", shape=(4, 1))), ExprPattern)
    v = is_var("x")
    assert isinstance(v, VarPattern) and v.name == "x"
    assert isinstance(is_constant(), ConstantPattern)
    wc1, wc2 = wildcard(), wildcard()
    assert isinstance(wc1, WildcardPattern)
    c = is_op("add")(wc1, wc2)
    assert isinstance(c, CallPattern) and c.args[0] is wc1 and c.args[1] is wc2
    f = FunctionPattern([wc1, wc2], c)
    assert f.params[1] is wc2 and f.body is c
    t = is_tuple([wc1, wc2])
    assert isinstance(t, TuplePattern) and t[1] is wc2 and len(t) == 2
    tgi = is_tuple_get_item(t, 1)
    assert isinstance(tgi, TupleGetItemPattern) and tgi.tuple is t and tgi.index == 1
    assert is_tuple_get_item(t).index == -1
    assert isinstance(is_op("add") | is_op("subtract"), AltPattern)
    ttype = relay.TensorType((10, 10), "float32")
    assert isinstance(has_type(ttype), TypePattern) and has_type(ttype).type == ttype
    assert has_dtype("float16").dtype == "float16"
    assert isinstance(has_dtype("float16"), DataTypePattern)
    assert isinstance(has_shape([10, 10]), ShapePattern) and has_shape([10, 10]).shape == (10, 10)
    op = is_op("add").has_attr({"TOpPattern": K_ELEMWISE})
    assert isinstance(op, AttrPattern) and op.attrs["TOpPattern"] == K_ELEMWISE
    x, y = is_var("x"), is_var("y")
    pat = is_if(is_op("less")(x, y), x, y)
    assert isinstance(pat, IfPattern) and isinstance(pat.cond, CallPattern)
    let = is_let(is_var("let"), is_op("less")(x, y), is_var("let"))
    assert isinstance(let, LetPattern) and isinstance(let.value, CallPattern)
    assert str(is_op("nn.relu")(wildcard())) == 'is_op("nn.relu")(wildcard())'


def test_bad_patterns_raise():
    with pytest.raises(IrlabError):
        is_op("not_an_op")
    with pytest.raises(IrlabError):
        is_op("add")(1, wildcard())
    with pytest.raises(IrlabError):
        has_type("float32")
    with pytest.raises(IrlabError):
        wildcard().has_attr([1, 2])


# ---------------------------------------------------------------------------------------------
# matching
def test_match_op_and_alternatives():
    assert is_op("add").match(relay.op.get("add"))
    assert not is_op("add").match(relay.op.get("subtract"))
    add_or_sub = is_op("add") | is_op("subtract")
    assert add_or_sub.match(relay.op.get("add")) and add_or_sub.match(relay.op.get("subtract"))


def test_match_call_commutative():
    x, y = relay.var("x"), relay.var("y")
    for op, fn in [("add", relay.add), ("multiply", relay.multiply)]:
        pat = is_op(op)(is_var("x"), is_var("y"))
        assert pat.match(fn(x, y)) and pat.match(fn(y, x))
    for op, fn in [("subtract", relay.subtract), ("divide", relay.divide)]:
        pat = is_op(op)(is_var("x"), is_var("y"))
        assert pat.match(fn(x, y)) and not pat.match(fn(y, x))


def test_match_call():
    x, y = relay.var("x"), relay.var("y")
    assert is_op("add")(wildcard(), wildcard()).match(x + y)
    assert not is_op("add")(wildcard(), wildcard()).match(x - y)
    any_call = wildcard()(None)
    assert any_call.match(relay.nn.relu(x)) and any_call.match(relay.add(x, y))


def test_same_pattern_node_means_same_expr():
    x, y = relay.var("x"), relay.var("y")
    wc = wildcard()
    assert is_op("add")(wc, wc).match(x + x)
    assert not is_op("add")(wc, wc).match(x + y)


def test_match_func():
    x, y = relay.var("x"), relay.var("y")
    wc1, wc2 = wildcard(), wildcard()
    assert FunctionPattern([wc1, wc2], wc1 + wc2).match(relay.Function([x, y], x + y))
    assert not FunctionPattern([wc1, wc2], wc1 + wc2).match(relay.Function([x, y], x - y))
    any_func = FunctionPattern(None, wildcard())
    assert any_func.match(relay.Function([x], x))
    assert any_func.match(relay.Function([x, y], x + y))


def test_match_if_and_let():
    px, py = is_var("x"), is_var("y")
    pat = is_if(is_op("less")(px, py), px, py)
    x, y = relay.var("x"), relay.var("y")
    assert pat.match(relay.If(x < y, x, y))
    assert not pat.match(relay.If(x > y, x, y))
    assert not pat.match(relay.If(x < y, y, x))
    let_var = is_var("let")
    pat = is_let(let_var, is_op("less")(px, py), let_var)
    lv = relay.var("let")
    assert pat.match(relay.Let(lv, x < y, lv))
    assert not pat.match(relay.Let(lv, x > y, lv))
    assert not pat.match(relay.Let(lv, x < y, lv * x))


def test_match_option():
    x, w, b = relay.var("x"), relay.var("w"), relay.var("b")
    pattern = is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard()).optional(
        lambda x: is_op("nn.bias_add")(x, wildcard())))
    conv2d = relay.nn.conv2d(x, w)
    assert pattern.match(relay.nn.relu(conv2d))
    assert pattern.match(relay.nn.relu(relay.nn.bias_add(conv2d, b)))
    assert not pattern.match(relay.tanh(conv2d))
    assert not pattern.match(relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w), b)))
    assert not pattern.match(relay.nn.relu(conv2d + w))

    pattern = is_op("nn.conv2d")(wildcard(), wildcard())
    pattern = pattern.optional(is_op("nn.relu")).optional(is_op("tanh"))
    relu = relay.nn.relu(conv2d)
    tanh = relay.tanh(conv2d)
    assert pattern.match(conv2d) and pattern.match(relu) and pattern.match(tanh)
    assert pattern.match(relay.tanh(relu))
    assert not pattern.match(relay.nn.relu(tanh))


def test_match_const():
    pattern = is_op("nn.bias_add")(is_op("nn.conv2d")(wildcard(), is_constant()), wildcard())
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(3, 3, 3, 3))
    b = relay.var("b", shape=(3,))
    func = relay.Function([x, w, b], relay.nn.bias_add(relay.nn.conv2d(x, w), b))
    mod = IRModule.from_expr(func)
    assert not pattern.match(mod["main"].body)
    mod["main"] = bind_params_by_name(mod["main"], {"w": np.ones((3, 3, 3, 3), "float32")})
    assert pattern.match(mod["main"].body)


def test_match_tuple():
    x, y, z = relay.var("x"), relay.var("y"), relay.op.get("add")
    tuple_pattern = is_tuple((is_var("x"), wildcard(), is_op("add")))
    assert tuple_pattern.match(relay.Tuple((x, y, z)))
    assert not is_tuple((is_var("x"), wildcard(), is_op("add"), wildcard())).match(
        relay.Tuple((x, y, z)))
    tgi = is_tuple_get_item(tuple_pattern, 1)
    assert tgi.match(relay.TupleGetItem(relay.Tuple((x, y, z)), 1))
    assert not tgi.match(relay.TupleGetItem(relay.Tuple((x, y, z)), 2))
    any_index = is_tuple_get_item(tuple_pattern)
    for i in range(3):
        assert any_index.match(relay.TupleGetItem(relay.Tuple((x, y, z)), i))
    concat = is_op("concatenate")(is_tuple(None))
    assert concat.match(relay.concatenate(relay.Tuple((x,)), axis=0))
    assert concat.match(relay.concatenate(relay.Tuple((x, y)), axis=0))


def test_match_types():
    x = relay.var("x", shape=(10, 10), dtype="float32")
    xi = relay.var("x", shape=(10, 10), dtype="int32")
    assert has_type(relay.TensorType((10, 10), "float32")).match(x)
    assert not has_type(relay.TensorType((10, 10), "float32")).match(xi)
    assert has_dtype("float32").match(x) and not has_dtype("float32").match(xi)
    assert has_shape((10, 10)).match(x) and not has_shape((10, 5)).match(x)


def test_match_op_attr():
    op_pat = is_op("add").has_attr({"TOpPattern": K_BROADCAST})(wildcard(), wildcard())
    x, y, z = relay.var("x"), relay.var("y"), relay.var("z")
    assert op_pat.match(x + y)
    assert not op_pat.match(x - y)
    assert not op_pat.match(relay.Let(z, x + y, z))
    dense = is_op("nn.dense").has_attr({"TOpPattern": K_ELEMWISE})(wildcard(), wildcard())
    assert not dense.match(relay.nn.dense(x, y))


def test_match_func_attr():
    pattern = wildcard().has_attr({"Composite": "add"})
    x, y = relay.var("x"), relay.var("y")
    assert pattern.match(relay.Function([x, y], x + y).with_attr("Composite", "add"))
    assert not pattern.match(relay.Function([x, y], x + y).with_attr("RandomTest", "add"))
    assert not pattern.match(relay.Function([x, y], x + y).with_attr("Composite", "conv"))


def test_match_call_attr():
    x, y = relay.var("x"), relay.var("y")
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    assert conv.has_attr({"data_layout": "NCHW"}).match(relay.nn.conv2d(x, y))
    assert not conv.has_attr({"data_layout": "NHWC"}).match(relay.nn.conv2d(x, y))
    assert not conv.has_attr({"RandomAttr": "NCHW"}).match(relay.nn.conv2d(x, y))
    assert conv.has_attr({"kernel_size": [3, 3]}).match(
        relay.nn.conv2d(x, y, kernel_size=[3, 3]))
    assert not conv.has_attr({"kernel_size": [3, 3]}).match(
        relay.nn.conv2d(x, y, kernel_size=[2, 1]))
    assert is_op("cast")(wildcard()).has_attr({"dtype": "float32"}).match(
        relay.cast(x, "float32"))
    # non-operator calls carry DictAttrs
    call_has_attr = wildcard()(wildcard()).has_attr({"call_attr": "attr"})
    a, b = relay.Var("a"), relay.Var("b")
    assert call_has_attr.match(relay.Call(a, [b], attrs=DictAttrs({"call_attr": "attr"})))
    assert not call_has_attr.match(relay.Call(a, [b]))
    assert not call_has_attr.match(relay.Call(a, [b], attrs=DictAttrs({"wrong": "attr"})))
    assert not call_has_attr.match(relay.Call(a, [b], attrs=DictAttrs({"call_attr": "no"})))
    assert not call_has_attr.match(relay.Call(a, [b], attrs=DictAttrs({})))
    empty = wildcard()(wildcard()).has_attr({})
    assert empty.match(relay.Call(a, [b], attrs=DictAttrs({})))
    assert empty.match(relay.Call(a, [b], attrs=DictAttrs({"call_attr": "attr"})))


def _diamond_pattern():
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    return is_op("add")(is_op("nn.relu")(conv), is_op("nn.leaky_relu")(conv))


def test_match_diamond():
    inp, weight = relay.var("input"), relay.var("weight")
    conv2d = relay.nn.conv2d(inp, weight)
    relu = relay.nn.relu(conv2d)
    leaky = relay.nn.leaky_relu(conv2d, alpha=0)
    assert _diamond_pattern().match(relu + leaky)
    assert not _diamond_pattern().match(leaky)
    # fake diamond: two different convolutions
    conv_b = relay.nn.conv2d(relay.var("input2"), relay.var("weight2"))
    assert not _diamond_pattern().match(relu + relay.nn.leaky_relu(conv_b, alpha=0))


def _elemwise_dominator(nested=False):
    unary = wildcard().has_attr({"TOpPattern": K_ELEMWISE})(wildcard())
    if nested:
        unary = unary | is_op("add")(wildcard(), wildcard())
    return dominates(is_op("nn.conv2d")(wildcard(), wildcard()), unary,
                     is_op("add")(wildcard(), wildcard()))


def classic_diamond(inp, weight):
    conv2d = relay.nn.conv2d(inp, weight)
    relu = relay.nn.relu(relay.nn.relu(conv2d))
    return relu + relay.nn.leaky_relu(conv2d, alpha=0)


def deeper_diamond(inp, weight):
    conv2d = relay.nn.conv2d(inp, weight)
    relu = relay.tanh(relay.nn.relu(relay.nn.relu(conv2d)))
    return relu + relay.nn.leaky_relu(conv2d, alpha=0)


def single_branch(inp, weight):
    conv2d = relay.nn.conv2d(inp, weight)
    relu = relay.nn.relu(relay.nn.relu(conv2d))
    return relu + relay.tanh(relu)


def nested_diamond(inp, weight):
    conv2d = relay.nn.conv2d(inp, weight)
    relu = relay.nn.relu(conv2d)
    relu = relu + relu
    return relay.tanh(relu) + relay.nn.leaky_relu(conv2d, alpha=0)


def test_match_dominator():
    inp, weight = relay.var("input"), relay.var("weight")
    for build in (classic_diamond, deeper_diamond, single_branch):
        assert _elemwise_dominator().match(build(inp, weight))
    assert _elemwise_dominator(nested=True).match(nested_diamond(inp, weight))
    # an add on the path is not elementwise
    assert not _elemwise_dominator().match(nested_diamond(inp, weight))
    # relu on the input instead of the conv
    conv2d = relay.nn.conv2d(inp, weight)
    assert not _elemwise_dominator().match(
        relay.nn.relu(inp) + relay.nn.leaky_relu(conv2d, alpha=0))
    # no conv at all
    relu = relay.nn.relu(relay.nn.relu(inp))
    assert not _elemwise_dominator().match(relu + relay.tanh(relu))


def test_dominator_at_most_one_parent():
    pattern = dominates(is_op("nn.conv2d")(wildcard(), wildcard()),
                        is_op("nn.relu")(wildcard()), is_op("add")(wildcard(), wildcard()))
    x, w = relay.var("x"), relay.var("w")
    n6 = relay.nn.conv2d(x, w)
    n8 = relay.nn.conv2d(relay.tanh(n6), w)
    assert not pattern.match(relay.nn.relu(n8) + relay.nn.relu(n6))
    assert not pattern.match(n8 + relay.nn.relu(n6))


def test_match_typed_dominator():
    inp = relay.var("input", relay.TensorType((1, 3, 12, 12), "float32"))
    weight = relay.var("weight", relay.TensorType((3, 3, 3, 3), "float32"))
    out = classic_diamond(inp, weight)

    def pattern(shape, dtype):
        unary = wildcard().has_attr({"TOpPattern": K_ELEMWISE})(wildcard()).has_dtype(dtype)
        return dominates(is_op("nn.conv2d")(wildcard(), wildcard()), unary,
                         is_op("add")(wildcard(), wildcard()).has_shape(shape))

    assert pattern([1, 3, 10, 10], "float32").match(out)
    assert not pattern([1, 1, 10, 10], "float32").match(out)
    assert not pattern([1, 3, 10, 10], "float16").match(out)


def test_not_fuse_multi_diamond():
    inp, weight = relay.var("input"), relay.var("weight")
    conv2d = relay.nn.conv2d(inp, weight)
    out = relay.nn.relu(conv2d) + relay.nn.leaky_relu(conv2d, alpha=0)
    assert not _diamond_pattern().match(out + conv2d)


# ---------------------------------------------------------------------------------------------
# rewriting
class _SubFromAdd(DFPatternCallback):
    def __init__(self, pattern):
        super().__init__()
        self.pattern = pattern

    def callback(self, pre, post, node_map):
        return post.args[0] - post.args[1]


def test_rewrite():
    x, y, w = relay.var("x"), relay.var("y"), relay.var("w")
    add_pattern = is_op("add")(wildcard(), wildcard())
    sub_pattern = is_op("subtract")(wildcard(), wildcard())
    assert sub_pattern.match(rewrite(_SubFromAdd(add_pattern), x + y))
    func = relay.Function([relay.var("i"), relay.var("w")], relay.nn.relu(relay.var("i")))
    assert sub_pattern.match(rewrite(_SubFromAdd(add_pattern), func(x, w) + y))


def test_rewrite_func_with_attr():
    x, y, a, b = (relay.var(n) for n in "xyab")
    f = relay.Function([x, y], x + y).with_attr("Composite", "add")
    cb = _SubFromAdd(wildcard().has_attr({"Composite": "add"})(wildcard(), wildcard()))
    cb.callback = lambda pre, post, node_map: post.args[0] + post.args[1]
    out = rewrite(cb, relay.abs(relay.Call(f, [a, b])))
    assert is_op("abs")(is_op("add")(wildcard(), wildcard())).match(out)


def test_nested_rewrite_identity():
    class Identity(DFPatternCallback):
        def __init__(self, pattern):
            super().__init__()
            self.pattern = pattern

        def callback(self, pre, post, node_map):
            return post

    x, y = relay.var("x"), relay.var("y")
    y_add = relay.add(y, y)
    n0 = relay.add(x, y_add)
    out = relay.add(relay.add(x, n0), n0)
    a, b = wildcard(), wildcard()
    p0 = is_op("add")(a, b)
    pat = is_op("add")(p0, is_op("add")(p0, a))
    assert structural_equal(rewrite(Identity(pat), out), out)


class BatchnormCallback(DFPatternCallback):
    def __init__(self):
        super().__init__()
        self.x, self.var, self.mean = wildcard(), wildcard(), wildcard()
        self.beta, self.gamma, self.eps = wildcard(), wildcard(), is_constant()
        self.pattern = (self.gamma * (self.x - self.mean) / is_op("sqrt")(self.var + self.eps)
                        + self.beta)

    def callback(self, pre, post, node_map):
        x, var, mean = node_map[self.x][0], node_map[self.var][0], node_map[self.mean][0]
        beta, gamma, eps = node_map[self.beta][0], node_map[self.gamma][0], node_map[self.eps][0]
        return relay.nn.batch_norm(x, gamma, beta, mean, var,
                                   epsilon=eps.data.numpy().item())[0]


def _bn_vars():
    return [relay.var(n) for n in ("x", "var", "mean", "beta", "gamma")]


def test_fuse_batchnorm():
    x, var, mean, beta, gamma = _bn_vars()
    eps = relay.const(1e-5)
    bn = gamma * (x - mean) / relay.sqrt(var + eps) + beta
    expected = relay.nn.batch_norm(x, gamma, beta, mean, var, epsilon=EPS)[0]
    assert_structural_equal(rewrite(BatchnormCallback(), bn), expected)
    fake = gamma * (x - mean) / relay.sqrt(var + eps) - beta
    assert_structural_equal(rewrite(BatchnormCallback(), fake), fake)
    # double and partial double
    bn2 = gamma * (bn - mean) / relay.sqrt(var + eps) + beta
    assert_structural_equal(
        rewrite(BatchnormCallback(), bn2),
        relay.nn.batch_norm(expected, gamma, beta, mean, var, epsilon=EPS)[0])
    partial = gamma * (fake - mean) / relay.sqrt(var + eps) + beta
    assert_structural_equal(
        rewrite(BatchnormCallback(), partial),
        relay.nn.batch_norm(fake, gamma, beta, mean, var, epsilon=EPS)[0])


def test_fuse_batchnorm_commutation_and_association():
    x, var, mean, beta, gamma = _bn_vars()
    eps = relay.const(1e-5)
    expected = relay.nn.batch_norm(x, gamma, beta, mean, var, epsilon=EPS)[0]
    for bn in (beta + gamma * (x - mean) / relay.sqrt(var + eps),
               (gamma * (x - mean)) / relay.sqrt(var + eps) + beta,
               gamma * ((x - mean) / relay.sqrt(var + eps)) + beta):
        assert_structural_equal(rewrite(BatchnormCallback(), bn), expected)


def test_quadruple_rewrite_dominator():
    class DominatorRemoval(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.inp, self.weight = wildcard(), wildcard()
            unary = wildcard().has_attr({"TOpPattern": K_ELEMWISE})(wildcard()) | is_op("add")(
                wildcard(), wildcard())
            self.pattern = dominates(is_op("nn.conv2d")(self.inp, self.weight), unary,
                                     is_op("add")(wildcard(), wildcard()))

        def callback(self, pre, post, node_map):
            return relay.nn.conv2d(node_map[self.inp][0], node_map[self.weight][0])

    inp, weight = relay.var("input"), relay.var("weight")
    out = nested_diamond(single_branch(deeper_diamond(classic_diamond(inp, weight), weight),
                                       weight), weight)
    four = inp
    for _ in range(4):
        four = relay.nn.conv2d(four, weight)
    assert_structural_equal(DominatorRemoval().rewrite(out), four)


def algebraic_simplify(expr):
    zero = is_expr(relay.const(0)) | is_expr(relay.const(0.0))
    one = is_expr(relay.const(1)) | is_expr(relay.const(1.0))

    class Null(DFPatternCallback):
        def __init__(self, build):
            super().__init__()
            self.x = wildcard()
            self.pattern = build(self.x)

        def callback(self, pre, post, node_map):
            return node_map[self.x][0]

    class KeepZero(Null):
        def __init__(self, build):
            DFPatternCallback.__init__(self)
            self.x = zero
            self.pattern = build(self.x)

    return rewrite([Null(lambda x: x + zero), Null(lambda x: x - zero),
                    Null(lambda x: x * one), Null(lambda x: x / one),
                    KeepZero(lambda z: z * wildcard()), KeepZero(lambda z: z / wildcard())],
                   expr)


def test_algebraic_simplify():
    x, y = relay.Var("x"), relay.Var("y")
    one, zero, onef, zerof = relay.const(1), relay.const(0), relay.const(1.0), relay.const(0.0)
    for expr in (x + zero, x + zerof, zero + x, zerof + x, x - zero, x - zerof, x * one,
                 x * onef, one * x, onef * x, x / one, x / onef):
        assert algebraic_simplify(expr) is x
    assert algebraic_simplify(x * zero) is zero
    assert algebraic_simplify(x * zerof) is zerof
    assert algebraic_simplify(zero / x) is zero
    assert_structural_equal(algebraic_simplify((x + zero * y) / one + (y * one) - zero / x),
                            x + y)


def test_rewrite_once():
    class ConcatRewriter(DFPatternCallback):
        def __init__(self, rewrite_once):
            super().__init__(rewrite_once=rewrite_once)
            self.pattern = is_op("concatenate")(None)

        def callback(self, pre, post, node_map):
            fields = post.args[0].fields[:-1]
            if fields:
                return relay.concatenate(relay.Tuple(fields), axis=0)
            return post.args[0].fields[0]

    class OneMoreRelu(DFPatternCallback):
        def __init__(self, rewrite_once):
            super().__init__(rewrite_once=rewrite_once)
            self.pattern = is_op("nn.softmax")(None)

        def callback(self, pre, post, node_map):
            return relay.nn.relu(post)

    x, y, z = relay.var("x"), relay.var("y"), relay.var("z")
    concat = relay.concatenate(relay.Tuple([x, y, z]), axis=0)
    assert_structural_equal(rewrite(ConcatRewriter(False), concat), x)
    assert_structural_equal(rewrite(ConcatRewriter(True), concat),
                            relay.concatenate(relay.Tuple([x, y]), axis=0))
    before = relay.nn.softmax(concat)
    assert_structural_equal(
        rewrite([OneMoreRelu(True), ConcatRewriter(True)], before),
        relay.nn.relu(relay.nn.softmax(relay.concatenate(relay.Tuple([x, y]), axis=0))))
    assert_structural_equal(rewrite([OneMoreRelu(True), ConcatRewriter(False)], before),
                            relay.nn.relu(relay.nn.softmax(x)))


def test_rewrite_require_type_and_errors():
    class TypedToFloat16(DFPatternCallback):
        def __init__(self):
            super().__init__(require_type=True)
            self.pattern = is_op("nn.relu")(wildcard()).has_dtype("float32")

        def callback(self, pre, post, node_map):
            assert pre.checked_type.shape == (2, 3)
            return relay.tanh(post.args[0])

    x = relay.var("x", shape=(2, 3))
    assert is_op("tanh")(wildcard()).match(rewrite(TypedToFloat16(), relay.nn.relu(x)))

    class Forever(DFPatternCallback):  # tanh <-> sigmoid: never converges
        def __init__(self):
            super().__init__()
            self.pattern = is_op("tanh")(wildcard()) | is_op("sigmoid")(wildcard())

        def callback(self, pre, post, node_map):
            flip = relay.sigmoid if post.op.name == "tanh" else relay.tanh
            return flip(post.args[0])

    with pytest.raises(IrlabError, match="100 rewrite passes"):
        rewrite(Forever(), relay.tanh(x))
    with pytest.raises(IrlabError):
        rewrite(DFPatternCallback(), x)

    class NotAnExpr(Forever):
        def callback(self, pre, post, node_map):
            return 3

    with pytest.raises(IrlabError, match="not a Relay expression"):
        rewrite(NotAnExpr(), relay.tanh(x))


def test_rewrite_function_with_fuzzy_body():
    x, w, b, x1, w1 = (relay.var(n) for n in ("x", "w", "b", "x1", "w1"))
    pattern = FunctionPattern([wildcard(), wildcard()], wildcard())(wildcard(), wildcard()) + \
        wildcard()
    func = relay.Function([x1, w1], relay.nn.conv2d(x1, w1))
    expr = func(x, w) + b + b
    cb = _SubFromAdd(pattern)
    cb.callback = lambda pre, post, node_map: x + w
    assert_structural_equal(rewrite(cb, expr), x + w + b)


# ---------------------------------------------------------------------------------------------
# partitioning
def conv_bias_relu(x, w, b):
    return relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w), b))


def test_double_partition():
    conv2d_p = is_op("nn.conv2d")(wildcard(), wildcard())
    bias_add_p = is_op("nn.bias_add")(conv2d_p, wildcard())
    relu_p = is_op("nn.relu")(bias_add_p)
    x, w, b, w2, b2 = (relay.var(n) for n in ("input", "weight", "bias", "weight", "bias"))
    relu = conv_bias_relu(x, w, b)
    bias_add2 = relay.nn.bias_add(relay.nn.conv2d(relu, w2), b2)
    partitioned = bias_add2
    for pat, label in [(relu_p, "conv_bias_relu"), (bias_add_p, "conv_bias")]:
        partitioned = pat.partition(partitioned, {"Composite": label})
    i, wf, bf = relay.var("input"), relay.var("weight"), relay.var("bias")
    func0 = (relay.Function([i, wf, bf], conv_bias_relu(i, wf, bf))
             .with_attr("Composite", "conv_bias_relu")
             .with_attr("PartitionedFromPattern", "nn.conv2d_nn.bias_add_nn.relu_"))
    i, wf, bf = relay.var("input"), relay.var("weight"), relay.var("bias")
    func1 = (relay.Function([i, wf, bf], relay.nn.bias_add(relay.nn.conv2d(i, wf), bf))
             .with_attr("Composite", "conv_bias")
             .with_attr("PartitionedFromPattern", "nn.conv2d_nn.bias_add_"))
    assert_structural_equal(partitioned, func1(func0(x, w, b), w2, b2))


def test_partition_dominator():
    inp, weight = relay.var("input"), relay.var("weight")
    partitioned = _elemwise_dominator().partition(classic_diamond(inp * inp, weight * weight))
    i, w = relay.Var("input"), relay.Var("weight")
    f = relay.Function([i, w], classic_diamond(i, w)).with_attr(
        "PartitionedFromPattern", "nn.conv2d_nn.relu_nn.relu_nn.leaky_relu_add_")
    assert_structural_equal(partitioned, f(inp * inp, weight * weight))


def test_quadruple_partition_dominator():
    inp, weight = relay.var("input"), relay.var("weight")
    partitioned = _elemwise_dominator(nested=True).partition(
        nested_diamond(single_branch(deeper_diamond(classic_diamond(inp, weight), weight),
                                     weight), weight))
    names = ["nn.conv2d_nn.relu_nn.relu_nn.leaky_relu_add_",
             "nn.conv2d_nn.relu_nn.relu_tanh_nn.leaky_relu_add_",
             "nn.conv2d_nn.relu_nn.relu_tanh_add_",
             "nn.conv2d_nn.relu_add_tanh_nn.leaky_relu_add_"]
    funcs = []
    for name, build in zip(names, [classic_diamond, deeper_diamond, single_branch,
                                   nested_diamond]):
        i, w = relay.var("input"), relay.var("weight")
        funcs.append(relay.Function([i, w], build(i, w)).with_attr("PartitionedFromPattern",
                                                                   name))
    reference = funcs[3](funcs[2](funcs[1](funcs[0](inp, weight), weight), weight), weight)
    assert_structural_equal(partitioned, reference)


def get_bn(x, var, mean, beta, gamma, eps):
    return gamma * (x - mean) / relay.sqrt(var + eps) + beta


def test_partition_batchnorm():
    x, var, mean, beta, gamma = _bn_vars()
    eps = relay.const(1e-5)
    xf, varf, meanf, betaf, gammaf = _bn_vars()
    # inputs in the pattern's post-order; the constant stays inside
    f = relay.Function([gammaf, xf, meanf, varf, betaf],
                       get_bn(xf, varf, meanf, betaf, gammaf, eps)).with_attr(
        "PartitionedFromPattern", "subtract_multiply_add_sqrt_divide_add_")
    bn = get_bn(x, var, mean, beta, gamma, eps)
    assert_structural_equal(BatchnormCallback().pattern.partition(bn), f(gamma, x, mean, var, beta))
    # the partitioner does not share functions between matches
    bn2 = get_bn(bn, var, mean, beta, gamma, eps)
    xf2, varf2, meanf2, betaf2, gammaf2 = _bn_vars()
    f2 = relay.Function([gammaf2, xf2, meanf2, varf2, betaf2],
                        get_bn(xf2, varf2, meanf2, betaf2, gammaf2, eps)).with_attr(
        "PartitionedFromPattern", "subtract_multiply_add_sqrt_divide_add_")
    assert_structural_equal(BatchnormCallback().pattern.partition(bn2),
                            f2(gamma, f(gamma, x, mean, var, beta), mean, var, beta))


def test_overlapping_and_overused_partitions():
    bn_node = is_op("nn.batch_norm")(wildcard(), wildcard(), wildcard(), wildcard(), wildcard())
    x, var, mean, beta, gamma = _bn_vars()
    bn = relay.nn.batch_norm(x, gamma, beta, mean, var, epsilon=EPS)
    add = bn[0] + bn[0]
    assert TupleGetItemPattern(bn_node, 0).partition(add) is add
    pattern = is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard()))
    conv2d = relay.nn.conv2d(relay.var("input"), relay.var("weight"))
    out = relay.nn.relu(conv2d) + conv2d  # conv2d is used outside the match
    assert pattern.partition(out) is out


def test_partition_fuzzy_tuple():
    x, y = relay.var("x"), relay.var("y")
    concat_pattern = is_op("concatenate")(is_tuple(None))

    def concat(*args):
        return relay.concatenate(relay.Tuple(args), axis=0)

    def create_func(args, body):
        return relay.Function(args, body).with_attr("PartitionedFromPattern", "Tuple_concatenate_")

    xp, yp, zp = relay.var("xp"), relay.var("yp"), relay.var("zp")
    assert_structural_equal(concat_pattern.partition(concat(x)), create_func([xp], concat(xp))(x))
    z = x + y
    assert_structural_equal(concat_pattern.partition(concat(x, y, z)),
                            create_func([xp, yp, zp], concat(xp, yp, zp))(x, y, z))


def test_partition_fuzzy_function_args():
    func_pattern = FunctionPattern(None, wildcard() + wildcard())(None) + wildcard()
    x, y, z, b = (relay.var(n) for n in "xyzb")
    xp, yp, zp = relay.var("xp"), relay.var("yp"), relay.var("zp")
    for f, label in [(relay.Function([xp], xp + xp)(x), "add_FunctionCall_add_"),
                     (relay.Function([xp, yp], xp + yp)(x, y), "add_FunctionCall_add_"),
                     (relay.Function([xp, yp, zp], xp + yp + zp)(x, y, z),
                      "add_add_FunctionCall_add_")]:
        n = len(f.op.params)
        params = [relay.var(str(i)) for i in range(n + 1)]
        expected = relay.Function(params, relay.Call(f.op, params[:-1]) + params[-1]).with_attr(
            "PartitionedFromPattern", label)(*([x, y, z][:n] + [b]))
        assert_structural_equal(func_pattern.partition(f + b), expected)


def test_partition_check():
    pattern = is_op("nn.relu")(is_op("nn.conv2d")(is_var("input"), wildcard()))

    def check(pre):
        return pre.args[0].attrs.data_layout == "NCHW"

    x, w = relay.var("input"), relay.var("weight")
    xf, wf = relay.var("input"), relay.var("weight")
    func = relay.Function([xf, wf], relay.nn.relu(relay.nn.conv2d(xf, wf))).with_attr(
        "PartitionedFromPattern", "nn.conv2d_nn.relu_")
    relu = relay.nn.relu(relay.nn.conv2d(x, w))
    assert_structural_equal(pattern.partition(relu, check=check), func(x, w))
    relu = relay.nn.relu(relay.nn.conv2d(x, w, data_layout="NHWC"))
    assert pattern.partition(relu, check=check) is relu


def test_partition_check_types():
    pattern = is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard()))

    def check(pre):
        conv = pre.args[0]
        return conv.attrs.data_layout == "NCHW" and conv.checked_type.shape[0] == 1

    def build(batch):
        x = relay.var("input", shape=(batch, 10, 10, 10))
        w = relay.var("weight", shape=(10, 10, 3, 3))
        return run_opt_pass(relay.nn.relu(relay.nn.conv2d(x, w)), InferType())

    partitioned = pattern.partition(build(1), check=check)
    assert partitioned.op.attrs["PartitionedFromPattern"] == "nn.conv2d_nn.relu_"
    relu = build(2)
    assert pattern.partition(relu, check=check) is relu


def test_partition_option():
    x, w, b = relay.var("x"), relay.var("w"), relay.var("b")
    conv2d = is_op("nn.conv2d")(wildcard(), wildcard())
    pattern1 = is_op("nn.relu")(conv2d.optional(lambda x: is_op("nn.bias_add")(x, wildcard())))
    pattern2 = is_op("nn.bias_add")(is_op("nn.conv2d")(wildcard(), wildcard()), wildcard()
                                    ).optional(lambda x: is_op("nn.relu")(x))
    relu = conv_bias_relu(x, w, b)
    xf, wf, bf = relay.var("x"), relay.var("w"), relay.var("b")
    func = relay.Function([xf, wf, bf], conv_bias_relu(xf, wf, bf)).with_attr(
        "PartitionedFromPattern", "nn.conv2d_nn.bias_add_nn.relu_")
    for pattern in (pattern1, pattern2):
        assert pattern.match(relu)
        assert_structural_equal(pattern.partition(relu), func(x, w, b))


def test_partition_function():
    x, w, b, x1, w1 = (relay.var(n) for n in ("x", "w", "b", "x1", "w1"))
    wc_x1, wc_w1 = wildcard(), wildcard()
    func_pattern = FunctionPattern([wc_x1, wc_w1], is_op("nn.conv2d")(wc_x1, wc_w1))
    pattern = func_pattern(wildcard(), wildcard()) + wildcard()
    func = relay.Function([x1, w1], relay.nn.conv2d(x1, w1))
    x2, w2, b2 = relay.var("x2"), relay.var("w2"), relay.var("b2")
    func2 = relay.Function([x2, w2, b2], func(x2, w2) + b2).with_attr(
        "PartitionedFromPattern", "nn.conv2d_FunctionCall_add_")
    assert_structural_equal(pattern.partition(func(x, w) + b + b), func2(x, w, b) + b)
    with pytest.warns(UserWarning):
        assert func_pattern.partition(func) is func


def test_partition_constant_embedding():
    x, w, b = relay.var("x"), relay.var("w"), relay.var("b")
    wc = relay.const(1.0)

    def lifted():
        xf, wf, bf = relay.var("x"), relay.var("w"), relay.var("b")
        return relay.Function([xf, wf, bf], conv_bias_relu(xf, wf, bf)).with_attr(
            "PartitionedFromPattern", "nn.conv2d_nn.bias_add_nn.relu_")

    def embedded():
        xf, bf = relay.var("x"), relay.var("b")
        return relay.Function([xf, bf], conv_bias_relu(xf, wc, bf)).with_attr(
            "PartitionedFromPattern", "nn.conv2d_nn.bias_add_nn.relu_")

    relu, reluc = conv_bias_relu(x, w, b), conv_bias_relu(x, wc, b)

    def pattern(weight):
        return is_op("nn.relu")(is_op("nn.bias_add")(is_op("nn.conv2d")(wildcard(), weight),
                                                     wildcard()))

    assert_structural_equal(pattern(wildcard()).partition(relu), lifted()(x, w, b))
    assert_structural_equal(pattern(wildcard()).partition(reluc), lifted()(x, wc, b))
    assert_structural_equal(pattern(is_var()).partition(relu), lifted()(x, w, b))
    assert pattern(is_var()).partition(reluc) is reluc
    for weight in (is_constant(), is_expr(wc)):
        assert pattern(weight).partition(relu) is relu
        assert_structural_equal(pattern(weight).partition(reluc), embedded()(x, b))
    for weight in (is_var() | is_constant(), is_constant() | is_var()):
        assert_structural_equal(pattern(weight).partition(relu), lifted()(x, w, b))
        assert_structural_equal(pattern(weight).partition(reluc), embedded()(x, b))


def test_partition_parallel_branch_with_same_input():
    pattern = is_op("add")(is_op("multiply")(wildcard(), wildcard()),
                           is_op("add")(wildcard(), wildcard()))
    i, w, left, right = (relay.Var(n) for n in ("input", "weight", "left", "right"))
    conv2d = relay.nn.conv2d(i, w)
    add = relay.add(relay.multiply(left, conv2d), relay.add(conv2d, right))
    lf, mf, rf = relay.Var("leftf"), relay.Var("midf"), relay.Var("rightf")
    f = relay.Function([lf, mf, rf], (lf * mf) + (mf + rf)).with_attr(
        "PartitionedFromPattern", "multiply_add_add_")
    assert_structural_equal(pattern.partition(add), f(left, conv2d, right))


def test_matched_outside_but_dominated():
    """The add feeds a sigmoid outside the match, but the multiply root post-dominates it:
    the partition goes ahead and the add is computed twice."""
    data = relay.var("data", shape=(1, 4, 6, 6))
    weight = relay.var("weight", shape=(4, 4, 3, 3))
    bias = relay.var("bias", shape=(1, 4, 6, 6))
    conv = relay.nn.conv2d(data, weight, padding=(1, 1))
    add = relay.add(conv, bias)
    out = relay.abs(relay.multiply(add, relay.sigmoid(add)))
    pattern = is_op("multiply")(is_op("add")(is_op("nn.conv2d")(wildcard(), wildcard()),
                                             wildcard()), wildcard())
    partitioned = pattern.partition(out)
    call = partitioned.args[0]
    assert call.op.attrs["PartitionedFromPattern"] == "nn.conv2d_add_multiply_"
    assert [type(a).__name__ for a in call.args] == ["Var", "Var", "Var", "Call"]
    assert count_ops(partitioned)["add"] == 2
    check_numerics(relay.Function(free_vars(out), out),
                   relay.Function(free_vars(partitioned), partitioned))


# ---------------------------------------------------------------------------------------------
# random graphs
class _SubtractToAddNegative(DFPatternCallback):
    def __init__(self):
        super().__init__()
        self.a, self.b = wildcard(), wildcard()
        self.pattern = is_op("subtract")(self.a, self.b)

    def callback(self, pre, post, node_map):
        return relay.add(node_map[self.a][0], relay.negative(node_map[self.b][0]))


class _MaximumToMinimum(DFPatternCallback):
    def __init__(self):
        super().__init__()
        self.a, self.b = wildcard(), wildcard()
        self.pattern = is_op("maximum")(self.a, self.b)

    def callback(self, pre, post, node_map):
        a, b = node_map[self.a][0], node_map[self.b][0]
        return relay.negative(relay.minimum(relay.negative(a), relay.negative(b)))


def assert_same_results(before, after, seed=0):
    """Evaluate both functions on the same random inputs, given by position (random graphs
    may repeat parameter names)."""
    before = InferType()(IRModule.from_expr(before))
    after = InferType()(IRModule.from_expr(after))
    rng = np.random.default_rng(seed)
    args = [random_value(p.checked_type, rng) for p in before["main"].params]
    with np.errstate(all="ignore"):
        want = run_flat(before, args)
        got = run_flat(after, args)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert w.shape == g.shape and w.dtype == g.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, equal_nan=True)


def run_flat(mod, args):
    out, stack = [], [create_executor("debug", mod=mod).evaluate()(*args)]
    while stack:
        value = stack.pop(0)
        if isinstance(value, tuple):
            stack[:0] = list(value)
        else:
            out.append(value.numpy())
    return out


_FAST = settings(max_examples=25, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@_FAST
@given(relay_functions(max_steps=8))
def test_rewrite_identities_on_random_graphs(func):
    out = rewrite([_SubtractToAddNegative(), _MaximumToMinimum()], func)
    counts = count_ops(out)
    assert counts["subtract"] == 0 and counts["maximum"] == 0
    before = count_ops(func)
    assert counts["add"] == before["add"] + before["subtract"]
    assert_same_results(func, out)


@_FAST
@given(relay_functions(max_steps=8))
def test_identity_callback_and_partition_on_random_graphs(func):
    class Identity(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.pattern = wildcard()(None)

        def callback(self, pre, post, node_map):
            return post

    assert structural_equal(rewrite(Identity(), func), func)
    pattern = is_op("add")(wildcard(), wildcard()) | is_op("multiply")(wildcard(), wildcard())
    partitioned = pattern.partition(func, {"Composite": "arith"})
    assert count_ops(partitioned)["add"] == count_ops(func)["add"]
    assert_same_results(func, partitioned)
