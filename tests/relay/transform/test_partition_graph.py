"""BYOC partitioning: MergeComposite, AnnotateTarget, MergeCompilerRegions and PartitionGraph
(cases ported from TVM's test_pass_merge_composite.py, test_pass_annotate_target.py,
test_pass_merge_compiler_regions.py and test_pass_partition_graph.py, with a fake external
compiler ``test_target``), plus numerics on the model zoo and on random graphs."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import irlab
from irlab import relay
from irlab.errors import IrlabError
from irlab.ir.module import IRModule
from irlab.ir.structural import assert_structural_equal
from irlab.relay import transform
from irlab.relay.analysis import count_ops
from irlab.relay.build_module import bind_params_by_name
from irlab.relay.dataflow_pattern import is_op, is_tuple_get_item, wildcard
from irlab.relay.interpreter import create_executor
from irlab.relay.op.annotation import compiler_begin, compiler_end
from irlab.relay.op.contrib import (get_pattern_table, partition_for_ccompiler, register_op_attr,
                                    register_pattern_table)
from irlab.relay.testing import MODELS, SMALL_MODELS, run_opt_pass
from irlab.relay.transform.annotated_region_set import node_scopes
from irlab.relay.transform.partition_graph import AnnotatedRegionSet
from irlab.testing.check import check_numerics, random_value
from irlab.testing.strategies import relay_functions

# The fake external compiler of these tests.
TARGET = "test_target"
for _op in ("add", "multiply", "nn.conv2d", "nn.relu"):
    register_op_attr(_op, "target." + TARGET, lambda expr: True)


def _supported(op_names, target):
    for name in op_names:
        register_op_attr(name, "target." + target, lambda expr: True)


def infer(mod):
    return transform.InferType()(mod)


def set_func_attr(func, compiler, symbol):
    return (func.with_attr("Primitive", 1).with_attr("Inline", 1)
            .with_attr("Compiler", compiler).with_attr("global_symbol", symbol))


@transform.function_pass(opt_level=0)
class AllowedListAnnotator:
    """Annotates each call of an allowed op as a one-op region (TVM's test helper)."""

    def __init__(self, op_list, compiler):
        self.op_list = op_list
        self.compiler = compiler

    def transform_function(self, func, mod, ctx):
        annotator = self

        class Annotator(relay.ExprMutator):
            def visit_call(self, call):
                if isinstance(call.op, relay.Op) and call.op.name in annotator.op_list:
                    args = [compiler_begin(self.visit(a), annotator.compiler) for a in call.args]
                    return compiler_end(relay.Call(call.op, args, call.attrs),
                                        annotator.compiler)
                return super().visit_call(call)

        return Annotator().visit(func)


# ---------------------------------------------------------------------------------------------
# MergeComposite
def add_relu_pattern():
    return is_op("nn.relu")(is_op("add")(wildcard(), wildcard()))


def conv_bias_relu_pattern():
    return is_op("nn.relu")(is_op("nn.bias_add")(is_op("nn.conv2d")(wildcard(), wildcard()),
                                                 wildcard()))


def composite(params, body, name, origin):
    return (relay.Function(params, body).with_attr("PartitionedFromPattern", origin)
            .with_attr("Composite", name))


def check_merge(pattern_table, before, expected):
    result = run_opt_pass(before, transform.MergeComposite(pattern_table))
    assert not relay.analysis.free_vars(result)
    assert_structural_equal(result, run_opt_pass(expected, transform.InferType()),
                            map_free_vars=True)
    return result


def test_merge_composite_simple():
    a, b = relay.var("a", shape=(10, 10)), relay.var("b", shape=(10, 10))
    before = relay.Function([a, b], relay.nn.relu(relay.add(a, b)))
    a, b = relay.var("a", shape=(10, 10)), relay.var("b", shape=(10, 10))
    i1, i2 = relay.var("in_1", shape=(10, 10)), relay.var("in_2", shape=(10, 10))
    add_relu = composite([i1, i2], relay.nn.relu(relay.add(i1, i2)), "add_relu",
                         "add_nn.relu_")
    check_merge([("add_relu", add_relu_pattern())], before,
                relay.Function([a, b], relay.Call(add_relu, [a, b])))


def test_merge_composite_branch():
    def add_sub_mul():
        x, y = wildcard(), wildcard()
        return (x + y) * (x - y)

    a, b, c = (relay.var(n, shape=(10, 10)) for n in "abc")
    mul = relay.multiply(relay.add(a, b), relay.subtract(a, b))
    mul2 = relay.multiply(relay.add(c, mul), relay.subtract(c, mul))
    before = relay.Function([a, b, c], relay.nn.relu(mul2))

    def fn():
        i1, i2 = relay.var("in_1", shape=(10, 10)), relay.var("in_2", shape=(10, 10))
        return composite([i1, i2], relay.multiply(relay.add(i1, i2), relay.subtract(i1, i2)),
                         "add_sub_mul", "add_subtract_multiply_")

    a, b, c = (relay.var(n, shape=(10, 10)) for n in "abc")
    m1 = relay.Call(fn(), [a, b])
    expected = relay.Function([a, b, c], relay.nn.relu(relay.Call(fn(), [c, m1])))
    check_merge([("add_sub_mul", add_sub_mul())], before, expected)


def test_merge_composite_reuse_call():
    x, y = wildcard(), wildcard()
    add_node = is_op("add")(x, y)
    pattern = is_op("add")(is_op("add")(x, add_node), add_node)
    a, b = relay.var("a", shape=(10, 10)), relay.var("b", shape=(10, 10))
    sub = relay.subtract(a, b)
    add = relay.add(sub, b)
    before = relay.Function([a, b], relay.add(relay.add(sub, add), add))
    a, b = relay.var("a", shape=(10, 10)), relay.var("b", shape=(10, 10))
    i1, i2 = relay.var("in_1", shape=(10, 10)), relay.var("in_2", shape=(10, 10))
    inner = relay.add(i1, i2)
    fn = composite([i1, i2], relay.add(relay.add(i1, inner), inner), "add_add_add",
                   "add_add_add_")
    check_merge([("add_add_add", pattern)], before,
                relay.Function([a, b], relay.Call(fn, [relay.subtract(a, b), b])))


def test_merge_composite_multiple_patterns():
    def build(data, kernel, bias, a, b):
        conv = relay.nn.conv2d(data, kernel, kernel_size=(1, 1))
        r = relay.nn.relu(relay.add(relay.nn.relu(relay.nn.bias_add(conv, bias)), a))
        return relay.multiply(r, b)

    shapes = [(1, 8, 6, 6), (4, 8, 1, 1), (4,), (1, 4, 6, 6), (1, 4, 6, 6)]
    names = ["data", "kernel", "bias", "a", "b"]
    args = [relay.var(n, shape=s) for n, s in zip(names, shapes)]
    before = relay.Function(args, build(*args))
    ins = [relay.var(f"in_{i}", shape=s) for i, s in enumerate(shapes[:3])]
    conv = relay.nn.conv2d(ins[0], ins[1], kernel_size=(1, 1))
    cbr = composite(ins, relay.nn.relu(relay.nn.bias_add(conv, ins[2])), "conv2d_bias_relu",
                    "nn.conv2d_nn.bias_add_nn.relu_")
    i4, i5 = relay.var("in_4", shape=shapes[3]), relay.var("in_5", shape=shapes[3])
    add_relu = composite([i4, i5], relay.nn.relu(relay.add(i4, i5)), "add_relu",
                         "add_nn.relu_")
    args = [relay.var(n, shape=s) for n, s in zip(names, shapes)]
    out = relay.multiply(relay.Call(add_relu, [relay.Call(cbr, args[:3]), args[3]]), args[4])
    result = check_merge([("conv2d_bias_relu", conv_bias_relu_pattern()),
                          ("add_relu", add_relu_pattern())], before,
                         relay.Function(args, out))
    check_numerics(before, result)


def test_merge_composite_order():
    def pattern_a():
        return is_op("nn.relu")(is_op("abs")(is_op("add")(wildcard(), wildcard())))

    def pattern_b():
        return is_op("abs")(is_op("add")(wildcard(), wildcard()))

    def pattern_c():
        return is_op("nn.relu")(is_op("abs")(wildcard()))

    def before():
        i1, i2 = relay.var("input_1", shape=(10, 10)), relay.var("input_2", shape=(10, 10))
        return relay.Function([i1, i2], relay.nn.relu(relay.abs(relay.add(i1, i2))))

    def after_a():
        i1, i2 = relay.var("input_1", shape=(10, 10)), relay.var("input_2", shape=(10, 10))
        x, y = relay.var("x"), relay.var("y")
        fn = composite([x, y], relay.nn.relu(relay.abs(relay.add(x, y))), "A",
                       "add_abs_nn.relu_")
        return relay.Function([i1, i2], relay.Call(fn, [i1, i2]))

    def after_b():
        i1, i2 = relay.var("input_1", shape=(10, 10)), relay.var("input_2", shape=(10, 10))
        x, y = relay.var("x"), relay.var("y")
        fn = composite([x, y], relay.abs(relay.add(x, y)), "B", "add_abs_")
        return relay.Function([i1, i2], relay.nn.relu(relay.Call(fn, [i1, i2])))

    def after_c():
        i1, i2 = relay.var("input_1", shape=(10, 10)), relay.var("input_2", shape=(10, 10))
        x = relay.var("x")
        fn = composite([x], relay.nn.relu(relay.abs(x)), "C", "abs_nn.relu_")
        return relay.Function([i1, i2], relay.Call(fn, [relay.add(i1, i2)]))

    table = {"A": pattern_a(), "B": pattern_b(), "C": pattern_c()}
    for order, expected in [("ABC", after_a), ("BAC", after_b), ("CAB", after_c)]:
        check_merge([(k, table[k]) for k in order], before(), expected())


def test_merge_composite_tuple_get_item():
    pattern = is_op("nn.relu")(is_tuple_get_item(
        is_op("nn.batch_norm")(*[wildcard() for _ in range(5)]), 0))
    shapes = [(1, 8, 4, 4), (8,), (8,), (8,), (8,)]

    def bn_relu(args):
        return relay.nn.relu(relay.nn.batch_norm(*args)[0])

    args = [relay.var(n, shape=s) for n, s in zip(["x", "g", "b", "m", "v"], shapes)]
    before = relay.Function(args, bn_relu(args))
    ins = [relay.var(f"in_{i}", shape=s) for i, s in enumerate(shapes)]
    fn = composite(ins, bn_relu(ins), "bn_relu", "nn.batch_norm_TupleGetItem0_nn.relu_")
    args = [relay.var(n, shape=s) for n, s in zip(["x", "g", "b", "m", "v"], shapes)]
    check_merge([("bn_relu", pattern)], before, relay.Function(args, relay.Call(fn, args)))


def test_merge_composite_checks():
    """The check sees the typed match; with a failing check nothing is merged."""
    seen = []

    def check(expr):
        seen.append(expr.checked_type.shape)
        return expr.args[0].attrs.data_layout == "NCHW"

    pattern = is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard()))
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 4, 3, 3))
    func = run_opt_pass(relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(x, w))),
                        transform.InferType())
    result = run_opt_pass(func, transform.MergeComposite([("conv_relu", pattern, check)]))
    assert result.body.op.attrs["Composite"] == "conv_relu"
    assert seen == [(1, 4, 4, 4)]
    result = run_opt_pass(func, transform.MergeComposite([("conv_relu", pattern,
                                                           lambda e: False)]))
    assert_structural_equal(result, run_opt_pass(func, transform.InferType()))
    with pytest.raises(IrlabError):
        transform.MergeComposite([("bad", "not a pattern")])
    with pytest.raises(IrlabError):
        transform.MergeComposite([("bad",)])


def test_pattern_table_entries_that_make_no_composite_are_reported():
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(2, 3))
    mod = IRModule.from_expr(relay.Function([x, y], relay.nn.relu(relay.add(x, y))))
    add_relu = is_op("nn.relu")(is_op("add")(wildcard(), wildcard()))
    typo = is_op("nn.relu")(is_op("multiply")(wildcard(), wildcard()))
    table = [("t.add_relu", add_relu), ("t.mul_relu", typo),
             ("t.vetoed", is_op("add")(wildcard(), wildcard()), lambda e: False)]
    with pytest.warns(transform.UnmatchedPatternWarning) as record:
        merged = transform.MergeComposite(table)(mod)
    assert 'Composite="t.add_relu"' in merged.astext()
    (message,) = [str(w.message) for w in record]
    assert "'t.mul_relu' (the pattern matched nothing)" in message
    # earlier entries win: add_relu took the only add before t.vetoed was tried
    assert "'t.vetoed' (the pattern matched nothing)" in message
    assert "'t.add_relu'" not in message and "2 of 3 pattern table entries" in message
    vetoed = [("t.vetoed", is_op("add")(wildcard(), wildcard()), lambda e: False)]
    with pytest.warns(transform.UnmatchedPatternWarning,
                      match=r"'t.vetoed' \(its check rejected all 1 match\)"):
        transform.MergeComposite(vetoed)(mod)
    # partition_for_* goes through MergeComposite: an unused ccompiler pattern is named too
    with pytest.warns(transform.UnmatchedPatternWarning, match="ccompiler.multiply_add"):
        partition_for_ccompiler(mod)


def test_pattern_table_registry():
    @register_pattern_table("pattern_table_target")
    def table():
        return [("pattern_table_target.add_relu", add_relu_pattern())]

    assert get_pattern_table("pattern_table_target")[0][0] == "pattern_table_target.add_relu"
    assert get_pattern_table("no_such_target") is None


ZOO_TABLE = [
    ("test_target.conv2d_bias_relu", conv_bias_relu_pattern()),
    ("test_target.conv2d_bn_relu", is_op("nn.relu")(is_tuple_get_item(is_op("nn.batch_norm")(
        is_op("nn.conv2d")(wildcard(), wildcard()), *[wildcard() for _ in range(4)]), 0))),
    ("test_target.dense_bias", is_op("nn.bias_add")(is_op("nn.dense")(wildcard(), wildcard()),
                                                    wildcard()).optional(is_op("nn.relu"))),
    ("test_target.conv2d", is_op("nn.conv2d")(wildcard(), wildcard())),
]


def _composites(func):
    found = []
    stack, seen = [func.body], set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, relay.Function) and node.get_attr("Composite") is not None:
            found.append(node.get_attr("Composite"))
            continue
        stack.extend(irlab.relay.expr_functor.expr_children(node))
    return found


@pytest.mark.parametrize("name", sorted(SMALL_MODELS))
def test_merge_composite_model_numerics(name):
    mod, params = MODELS[name]()
    mod = infer(mod)
    merged = transform.MergeComposite(ZOO_TABLE)(mod)
    names = _composites(merged["main"])
    assert names, f"no composite function in {name}"
    assert all(n.startswith("test_target.") for n in names)
    check_numerics(mod, merged, params=params, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------------------------
# AnnotateTarget
def test_annotate_target_multiple_ends():
    _supported(["nn.relu"], "test")

    def before():
        x = relay.var("x", shape=(10, 10))
        r = relay.nn.relu(x)
        return IRModule.from_expr(relay.Function([x], relay.add(relay.abs(r), relay.abs(r))))

    def after():
        x = relay.var("x", shape=(10, 10))
        r = relay.nn.relu(compiler_begin(x, "test"))
        cb_2 = compiler_begin(compiler_end(r, "test"), "default")
        cb_3 = compiler_begin(compiler_end(r, "test"), "default")
        a_1 = compiler_begin(compiler_end(relay.abs(cb_2), "default"), "default")
        a_2 = compiler_begin(compiler_end(relay.abs(cb_3), "default"), "default")
        out = compiler_end(relay.add(a_1, a_2), "default")
        return IRModule.from_expr(relay.Function([x], out))

    for annotate_non_call_ops in [False, True]:
        result = transform.AnnotateTarget("test", annotate_non_call_ops)(before())
        assert_structural_equal(result, infer(after()))


def test_annotate_target_type_propagation():
    target = "test_type_propagation"
    register_op_attr("nn.relu", "target." + target,
                     lambda expr: expr.args[0].checked_type.dtype == "float32")
    x = relay.var("x", shape=(10, 10))
    mod = IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.nn.relu(x))))
    for annotate_non_call_ops in [False, True]:
        result = transform.AnnotateTarget(target, annotate_non_call_ops)(mod)
        assert count_ops(result["main"])["annotation.compiler_begin"] == 2


def test_annotate_target_tuple():
    target = "test_tuple"
    _supported(["nn.relu", "concatenate"], target)

    def before():
        x, y = relay.var("x", shape=(10, 5)), relay.var("y", shape=(10, 5))
        out = relay.concatenate(relay.Tuple([relay.nn.relu(x), relay.nn.relu(y)]), axis=1)
        return IRModule.from_expr(relay.Function([x, y], out))

    def after(annotate_non_call_ops):
        x, y = relay.var("x", shape=(10, 5)), relay.var("y", shape=(10, 5))
        ce_1 = compiler_end(relay.nn.relu(compiler_begin(x, target)), target)
        ce_2 = compiler_end(relay.nn.relu(compiler_begin(y, target)), target)
        if annotate_non_call_ops:
            tup = relay.Tuple([compiler_begin(ce_1, target), compiler_begin(ce_2, target)])
            ce_3 = compiler_end(tup, target)
        else:
            ce_3 = relay.Tuple([ce_1, ce_2])
        out = relay.concatenate(compiler_begin(ce_3, target), axis=1)
        return IRModule.from_expr(relay.Function([x, y], compiler_end(out, target)))

    for annotate_non_call_ops in [False, True]:
        result = transform.AnnotateTarget(target, annotate_non_call_ops)(before())
        assert_structural_equal(result, infer(after(annotate_non_call_ops)))


def test_annotate_target_composite_function():
    def add_relu():
        i1, i2 = relay.var("in_1", shape=(10, 10)), relay.var("in_2", shape=(10, 10))
        return relay.Function([i1, i2], relay.nn.relu(relay.add(i1, i2))).with_attr(
            "Composite", "test.add_relu")

    a, b = relay.var("a", shape=(10, 10)), relay.var("b", shape=(10, 10))
    before = IRModule.from_expr(relay.Function([a, b], relay.Call(add_relu(), [a, b])))
    a, b = relay.var("a", shape=(10, 10)), relay.var("b", shape=(10, 10))
    call = relay.Call(add_relu(), [compiler_begin(a, "test"), compiler_begin(b, "test")])
    after = IRModule.from_expr(relay.Function([a, b], compiler_end(call, "test")))
    assert_structural_equal(transform.AnnotateTarget("test")(before), infer(after))


def test_annotate_target_reruns():
    _supported(["nn.relu"], "double.A")
    _supported(["nn.relu"], "different.A")
    _supported(["add"], "different.B")
    _supported(["nn.relu"], "A")
    _supported(["add"], "B")
    for flag in [True, False]:
        x = relay.var("x", shape=(10, 5))
        mod = IRModule.from_expr(relay.nn.relu(x))
        once = transform.AnnotateTarget("double.A", flag)(mod)
        assert_structural_equal(once, transform.AnnotateTarget("double.A", flag)(once))

        a_1 = relay.nn.relu(x)
        mod = IRModule.from_expr(relay.add(a_1, a_1))
        step = transform.AnnotateTarget("different.A", flag)(mod)
        step = transform.AnnotateTarget("different.B", flag)(step)
        both = transform.AnnotateTarget(["different.A", "different.B"], flag)(mod)
        assert_structural_equal(step, both)

        a_1 = relay.nn.relu(x)
        mod = IRModule.from_expr(relay.Function([x], relay.add(relay.abs(a_1),
                                                               relay.nn.relu(a_1))))
        step = transform.AnnotateTarget("B", flag)(transform.AnnotateTarget("A", flag)(mod))
        assert_structural_equal(step, transform.AnnotateTarget(["A", "B"], flag)(mod))


def test_annotate_target_ends_with_tuple():
    trgt = "clip"
    _supported(["clip"], trgt)

    def get_model(get_item):
        a = relay.var("a", shape=(1, 16, 16, 4), dtype="uint8")
        z = relay.clip(a, 0, 255)
        t = relay.Tuple((relay.clip(z, 16, 31), relay.clip(z, 0, 15)))
        return IRModule.from_expr(relay.TupleGetItem(t, 1) if get_item else t)

    def get_expected(annotate_non_call_ops, get_item):
        a_ = relay.var("a", shape=(1, 16, 16, 4), dtype="uint8")
        z = relay.clip(compiler_begin(a_, trgt), 0, 255)
        b = compiler_end(relay.clip(compiler_begin(compiler_end(z, trgt), trgt), 0, 15), trgt)
        c = compiler_end(relay.clip(compiler_begin(compiler_end(z, trgt), trgt), 16, 31), trgt)
        if annotate_non_call_ops:
            b, c = compiler_begin(b, trgt), compiler_begin(c, trgt)
        t = relay.Tuple((c, b))
        t = compiler_end(t, trgt) if annotate_non_call_ops else t
        if get_item:
            t = compiler_begin(t, trgt) if annotate_non_call_ops else t
            t = relay.TupleGetItem(t, 1)
            t = compiler_end(t, trgt) if annotate_non_call_ops else t
        return IRModule.from_expr(relay.Function([a_], t))

    for get_item in [True, False]:
        for annotate_non_call_ops in [False, True]:
            mod = transform.AnnotateTarget(trgt, annotate_non_call_ops)(get_model(get_item))
            assert_structural_equal(mod, infer(get_expected(annotate_non_call_ops, get_item)))


def test_annotate_target_if_else():
    target = "test_if_else"
    _supported(["equal", "tanh", "sigmoid", "erf"], target)

    def before(true_fn):
        data = relay.var("data", shape=(1, 32))
        eq1 = relay.var("e1", shape=[], dtype="float32")
        eq2 = relay.var("e2", shape=[], dtype="float32")
        ife = relay.If(relay.equal(eq1, eq2), true_fn(data), relay.sigmoid(data))
        return IRModule.from_expr(relay.Function([data, eq1, eq2], relay.erf(ife)))

    def after(true_annotated):
        data = relay.var("data", shape=(1, 32))
        eq1 = relay.var("e1", shape=[], dtype="float32")
        eq2 = relay.var("e2", shape=[], dtype="float32")
        cond = compiler_end(relay.equal(compiler_begin(eq1, target),
                                        compiler_begin(eq2, target)), target)
        true_branch = true_annotated(data)
        false_branch = compiler_end(relay.sigmoid(compiler_begin(data, target)), target)
        ife = relay.If(cond, true_branch, false_branch)
        out = compiler_end(relay.erf(compiler_begin(ife, target)), target)
        return IRModule.from_expr(relay.Function([data, eq1, eq2], out))

    tanh = after(lambda d: compiler_end(relay.tanh(compiler_begin(d, target)), target))
    zeros = after(lambda d: relay.zeros(shape=(1, 32), dtype="float32"))
    for annotate_non_call_ops in [True, False]:
        result = transform.AnnotateTarget(target, annotate_non_call_ops)(before(relay.tanh))
        assert_structural_equal(result, infer(tanh))
        free = before(lambda d: relay.zeros(shape=(1, 32), dtype="float32"))
        result = transform.AnnotateTarget(target, annotate_non_call_ops)(free)
        assert_structural_equal(result, infer(zeros))


def test_annotate_target_free_vars_and_empty_tuple():
    for body in (relay.zeros(shape=(0,), dtype="float32"), relay.Tuple([])):
        mod = IRModule.from_expr(relay.Function([], body))
        for flag in [True, False]:
            assert_structural_equal(transform.AnnotateTarget("test_free", flag)(mod),
                                    infer(mod))


def test_annotate_target_extern_conv():
    """Two convolutions and an add all go to the target, each in its own region."""
    def annotated():
        data = relay.var("data", shape=(1, 4, 6, 6))
        weight = relay.var("weight1", shape=(4, 1, 3, 3))
        conv1 = relay.nn.conv2d(data, weight, kernel_size=(3, 3), padding=(1, 1), groups=4)
        conv2 = relay.nn.conv2d(conv1, weight, kernel_size=(3, 3), padding=(1, 1), groups=4)
        return IRModule.from_expr(relay.Function([data, weight], relay.add(conv1, conv2)))

    def expected():
        data = relay.var("data", shape=(1, 4, 6, 6))
        weight = relay.var("weight1", shape=(4, 1, 3, 3))
        conv1 = relay.nn.conv2d(compiler_begin(data, TARGET), compiler_begin(weight, TARGET),
                                kernel_size=(3, 3), padding=(1, 1), groups=4)
        end0, end1 = compiler_end(conv1, TARGET), compiler_end(conv1, TARGET)
        conv2 = relay.nn.conv2d(compiler_begin(end0, TARGET), compiler_begin(weight, TARGET),
                                kernel_size=(3, 3), padding=(1, 1), groups=4)
        out = relay.add(compiler_begin(end1, TARGET),
                        compiler_begin(compiler_end(conv2, TARGET), TARGET))
        return IRModule.from_expr(relay.Function([data, weight], compiler_end(out, TARGET)))

    mod = transform.AnnotateTarget(TARGET)(annotated())
    assert_structural_equal(mod, infer(expected()))
    partitioned = transform.PartitionGraph()(transform.MergeCompilerRegions()(mod))
    assert len(partitioned.functions) == 2
    check_numerics(annotated(), partitioned)


def test_annotate_target_pass_structure():
    seq = transform.AnnotateTarget(TARGET)
    assert seq.info.name == "AnnotateTarget" and seq.info.opt_level == 0
    assert [p.info.name for p in seq.passes] == ["AnnotateTargetFunc", "InferType"]
    assert seq.passes[0].info.required == ["InferType"]
    merge = transform.MergeCompilerRegions()
    assert [p.info.name for p in merge.passes] == ["MergeCompilerRegions", "InferType"]
    assert transform.MergeComposite([]).info.name == "MergeComposite"
    part = transform.PartitionGraph()
    assert part.info.name == "sequential"
    assert [(p.info.name, p.info.opt_level) for p in part.passes] == [
        ("FlattenNestedTuples", 0), ("RemoveDefaultAnnotations", 0), ("PartitionGraph", 0),
        ("NameMangleExtFuncs", 0), ("InferType", 0)]
    with pytest.raises(IrlabError):
        transform.AnnotateTarget([])


# ---------------------------------------------------------------------------------------------
# MergeCompilerRegions
def test_merge_regions_diamond_graph_fanouts():
    def diamond(merged):
        data = relay.var("data", shape=(10, 10))
        o_1 = relay.abs(compiler_begin(data, "test"))
        ce_2 = compiler_end(o_1, "test")
        if merged:
            o_2 = relay.nn.relu(o_1)
        else:
            o_2 = relay.nn.relu(compiler_begin(compiler_end(o_1, "test"), "test"))
        ce_3 = compiler_end(o_2, "test")
        x = relay.tanh(compiler_begin(ce_2, "default"))
        ce_4 = compiler_end(x, "default")
        o_3 = relay.add(compiler_begin(ce_3, "test"), compiler_begin(ce_4, "test"))
        return relay.Function([data], compiler_end(o_3, "test"))

    result = run_opt_pass(diamond(False), transform.MergeCompilerRegions())
    assert_structural_equal(result, run_opt_pass(diamond(True), transform.InferType()))


def test_merge_regions_example_graph():
    """The example of the improved-partitioning RFC: adds on "test", subtracts on "default"."""
    def ins():
        return [relay.var(f"in_{i}", shape=(10, 10)) for i in range(1, 11)]

    def annotated():
        v = ins()
        b, d = (lambda e: compiler_begin(e, "test")), (lambda e: compiler_begin(e, "default"))
        node0 = relay.add(b(v[0]), b(v[1]))
        node1 = relay.add(b(v[2]), b(v[3]))
        end2 = compiler_end(relay.add(b(compiler_end(node0, "test")),
                                      b(compiler_end(node1, "test"))), "test")
        node3 = relay.subtract(d(v[4]), d(v[5]))
        dend2 = compiler_end(relay.subtract(d(v[6]), d(compiler_end(node3, "default"))),
                             "default")
        node5 = relay.add(b(end2), b(dend2))
        end3, end4 = compiler_end(node5, "test"), compiler_end(node5, "test")
        node6 = relay.subtract(d(v[7]), d(end3))
        end5 = compiler_end(relay.add(b(v[8]), b(end4)), "test")
        dend3 = compiler_end(node6, "default")
        end6 = compiler_end(relay.add(b(dend3), b(end5)), "test")
        end7 = compiler_end(relay.add(b(v[9]), b(end6)), "test")
        return IRModule.from_expr(relay.Function(v, end7))

    def expected():
        v = ins()
        b, d = (lambda e: compiler_begin(e, "test")), (lambda e: compiler_begin(e, "default"))
        node2 = relay.add(relay.add(b(v[0]), b(v[1])), relay.add(b(v[2]), b(v[3])))
        node3 = relay.subtract(d(v[4]), d(v[5]))
        dend0 = compiler_end(relay.subtract(d(v[6]), node3), "default")
        node5 = relay.add(node2, b(dend0))
        end1 = compiler_end(node5, "test")
        dend1 = compiler_end(relay.subtract(d(v[7]), d(end1)), "default")
        end2 = compiler_end(relay.add(b(v[8]), node5), "test")
        node8 = relay.add(b(dend1), b(end2))
        end3 = compiler_end(relay.add(b(v[9]), node8), "test")
        return IRModule.from_expr(relay.Function(v, end3))

    mod = infer(transform.MergeCompilerRegions()(annotated()))
    assert_structural_equal(mod, infer(expected()))
    partitioned = transform.PartitionGraph()(mod)
    check_numerics(annotated(), partitioned)


def test_merge_regions_if_else_flow():
    target = "test_if_else_merge"
    _supported(["sigmoid", "erf", "add"], target)
    data = relay.var("data", shape=(1, 32))
    add0 = relay.add(data, data)
    sub0 = relay.subtract(add0, data)
    eq = relay.equal(relay.sum(add0), relay.sum(sub0))
    ife = relay.If(eq, relay.sigmoid(add0), relay.sigmoid(sub0))
    mod = IRModule.from_expr(relay.Function([data], relay.add(add0, relay.erf(ife))))
    for annotate_non_call_ops in [True, False]:
        annotated = transform.AnnotateTarget(target, annotate_non_call_ops)(mod)
        partitioned = transform.PartitionGraph()(transform.MergeCompilerRegions()(annotated))
        check_numerics(mod, partitioned)


def test_region_set():
    x = relay.var("x", shape=(2, 2))
    b1, b2 = compiler_begin(x, "t"), compiler_begin(x, "t")
    add = relay.add(b1, b2)
    end = compiler_end(add, "t")
    regions = AnnotatedRegionSet.create(relay.Function([x], relay.abs(end)))
    assert len(regions) == 1
    region = regions.get_region(add)
    assert region.target == "t" and region.id == 0
    assert region.ins == [b1, b2] and region.outs == [end]
    assert regions.get_region(x) is None
    with pytest.raises(IrlabError, match="corresponding region"):
        AnnotatedRegionSet.create(compiler_end(x, "t"))


# ---------------------------------------------------------------------------------------------
# PartitionGraph
def test_partition_multiple_outputs():
    def create_graph():
        names = ["data", "weight", "bn_gamma", "bn_beta", "bn_mean", "bn_var"]
        shapes = [(1, 3, 8, 8), (4, 3, 3, 3), (4,), (4,), (4,), (4,)]
        args = [relay.var(n, shape=s) for n, s in zip(names, shapes)]
        cbs = [compiler_begin(a, TARGET) for a in args]
        conv = relay.nn.conv2d(cbs[0], cbs[1], kernel_size=(3, 3), channels=4, padding=(1, 1))
        bn = relay.nn.batch_norm(conv, *cbs[2:])
        relu_ce = compiler_end(relay.nn.relu(bn[0]), TARGET)
        mean_ce, var_ce = compiler_end(bn[1], TARGET), compiler_end(bn[2], TARGET)
        out = relay.Tuple((relu_ce, relay.abs(mean_ce), relay.abs(var_ce)))
        return relay.Function(args, out), shapes, names

    func, shapes, names = create_graph()
    params = [relay.var(f"test_target_0_i{i}", shape=s) for i, s in enumerate(shapes)]
    conv = relay.nn.conv2d(params[0], params[1], kernel_size=(3, 3), channels=4, padding=(1, 1))
    bn = relay.nn.batch_norm(conv, *params[2:])
    func0 = set_func_attr(relay.Function(params, relay.Tuple((relay.nn.relu(bn[0]), bn[1],
                                                              bn[2]))),
                          TARGET, "tvmgen_default_test_target_main_0")
    expected = IRModule()
    gv0 = relay.GlobalVar("tvmgen_default_test_target_main_0")
    expected[gv0] = func0
    args = [relay.var(n, shape=s) for n, s in zip(names, shapes)]
    out = gv0(*args)
    expected["main"] = relay.Function(args, relay.Tuple((
        relay.TupleGetItem(out, 0), relay.abs(relay.TupleGetItem(out, 1)),
        relay.abs(relay.TupleGetItem(out, 2)))))
    partitioned = transform.PartitionGraph()(IRModule.from_expr(func))
    assert_structural_equal(partitioned, infer(expected), map_free_vars=True)
    with np.errstate(invalid="ignore"):  # a random negative variance gives NaN on both sides
        check_numerics(IRModule.from_expr(func), partitioned)


def test_partition_mixed_single_multiple_outputs():
    def create_graph():
        data = relay.var("data", shape=(10, 10))
        o_1 = relay.abs(compiler_begin(data, TARGET))
        ce_2 = compiler_end(o_1, TARGET)
        ce_3 = compiler_end(relay.nn.relu(o_1), TARGET)
        x = relay.tanh(ce_2)
        o_3 = relay.add(compiler_begin(ce_3, TARGET), compiler_begin(x, TARGET))
        return relay.Function([data], compiler_end(o_3, TARGET))

    expected = IRModule()
    f1_cb1 = relay.var("test_target_0_i0", shape=(10, 10))
    f1_o_1 = relay.abs(f1_cb1)
    func1 = set_func_attr(relay.Function([f1_cb1], relay.Tuple((relay.nn.relu(f1_o_1), f1_o_1))),
                          TARGET, "tvmgen_default_test_target_main_0")
    gv1 = relay.GlobalVar("tvmgen_default_test_target_main_0")
    expected[gv1] = func1
    f2_cb3 = relay.var("test_target_1_i0", shape=(10, 10))
    f2_cb4 = relay.var("test_target_1_i1", shape=(10, 10))
    func0 = set_func_attr(relay.Function([f2_cb3, f2_cb4], relay.add(f2_cb3, f2_cb4)),
                          TARGET, "tvmgen_default_test_target_main_1")
    gv0 = relay.GlobalVar("tvmgen_default_test_target_main_1")
    expected[gv0] = func0
    data = relay.var("data", shape=(10, 10))
    tuple_out = gv1(data)
    x = relay.tanh(relay.TupleGetItem(tuple_out, 1))
    expected["main"] = relay.Function([data], gv0(relay.TupleGetItem(tuple_out, 0), x))

    mod = infer(IRModule.from_expr(create_graph()))
    partitioned = transform.PartitionGraph()(mod)
    assert_structural_equal(partitioned, infer(expected), map_free_vars=True)
    assert partitioned["tvmgen_default_test_target_main_1"].params[1].name_hint == \
        "test_target_1_i1"


def _use_twice_mod():
    x, y, z = (relay.var(n, shape=(8, 8)) for n in "xyz")
    add = x + y
    return IRModule.from_expr(relay.Function([x, y, z], relay.log(add) * (add - z)))


def test_partition_multiple_use_of_an_output():
    # log, subtract and multiply merge into one region
    mod = AllowedListAnnotator(["subtract", "log", "multiply"], "ccompiler")(_use_twice_mod())
    mod = transform.PartitionGraph()(transform.MergeCompilerRegions()(mod))
    expected = IRModule()
    x, y, z = (relay.var(n, shape=(8, 8)) for n in "xyz")
    x0, y0 = relay.var("x0", shape=(8, 8)), relay.var("y0", shape=(8, 8))
    func = set_func_attr(relay.Function([x0, y0], relay.log(x0) * (x0 - y0)), "ccompiler",
                         "tvmgen_default_ccompiler_main_0")
    glb_0 = relay.GlobalVar("tvmgen_default_ccompiler_main_0")
    expected[glb_0] = func
    expected["main"] = relay.Function([x, y, z], relay.Call(glb_0, [x + y, z]))
    assert_structural_equal(mod, infer(expected), map_free_vars=True)

    # log and subtract stay apart
    mod = AllowedListAnnotator(["subtract", "log"], "ccompiler")(_use_twice_mod())
    mod = transform.PartitionGraph()(transform.MergeCompilerRegions()(mod))
    expected = IRModule()
    i0 = relay.var("i0", shape=(8, 8))
    glb_0 = relay.GlobalVar("tvmgen_default_ccompiler_main_0")
    expected[glb_0] = set_func_attr(relay.Function([i0], relay.log(i0)), "ccompiler",
                                    "tvmgen_default_ccompiler_main_0")
    x0, y0 = relay.var("x0", shape=(8, 8)), relay.var("y0", shape=(8, 8))
    glb_1 = relay.GlobalVar("tvmgen_default_ccompiler_main_1")
    expected[glb_1] = set_func_attr(relay.Function([x0, y0], x0 - y0), "ccompiler",
                                    "tvmgen_default_ccompiler_main_1")
    x, y, z = (relay.var(n, shape=(8, 8)) for n in "xyz")
    add = x + y
    expected["main"] = relay.Function([x, y, z], relay.Call(glb_0, [add]) *
                                      relay.Call(glb_1, [add, z]))
    assert_structural_equal(mod, infer(expected), map_free_vars=True)
    check_numerics(_use_twice_mod(), mod)


def test_partition_duplicate_outputs():
    target = "test_duplicate_outputs"
    _supported(["abs"], target)
    data = relay.var("data", shape=(10, 10))
    x = relay.abs(data)
    mod = IRModule.from_expr(relay.Function([data], relay.Tuple(
        [relay.nn.relu(x), relay.tanh(x), relay.log(x)])))
    seq = irlab.transform.Sequential([transform.AnnotateTarget(target),
                                      transform.MergeCompilerRegions(),
                                      transform.PartitionGraph()])
    partitioned = seq(mod)
    expected = IRModule()
    f0_i0 = relay.var(target + "_0_i0", shape=(10, 10))
    gv0 = relay.GlobalVar("tvmgen_default_" + target + "_main_0")
    expected[gv0] = set_func_attr(relay.Function([f0_i0], relay.abs(f0_i0)), target,
                                  "tvmgen_default_" + target + "_main_0")
    data = relay.var("data", shape=(10, 10))
    out = gv0(data)
    expected["main"] = relay.Function([data], relay.Tuple(
        [relay.nn.relu(out), relay.tanh(out), relay.log(out)]))
    assert_structural_equal(partitioned, infer(expected), map_free_vars=True)


def test_partition_duplicate_merge_and_tuplegetitem():
    target = "test_duplicate_merge_and_tuplegetitem"
    _supported(["nn.batch_norm", "nn.relu"], target)

    def args(prefix=""):
        data = relay.var(prefix + "data", shape=(1, 4, 3, 3))
        return [data] + [relay.var(prefix + n) for n in ("bn_gamma", "bn_beta", "bn_mean",
                                                          "bn_var")]

    inputs = args()
    x = relay.nn.batch_norm(*inputs)
    bn_out_1 = x[1]
    mod = IRModule.from_expr(relay.Function(inputs, relay.Tuple(
        [relay.nn.relu(x[0]), relay.tanh(bn_out_1), relay.log(bn_out_1)])))
    seq = irlab.transform.Sequential([transform.AnnotateTarget(target),
                                      transform.MergeCompilerRegions(),
                                      transform.PartitionGraph()])
    partitioned = seq(infer(mod))

    expected = IRModule()
    f0 = [relay.var(f"{target}_0_i0", shape=(1, 4, 3, 3))] + [
        relay.var(f"{target}_0_i{i}", shape=(4,)) for i in range(1, 5)]
    n0 = relay.nn.batch_norm(*f0)
    gv0 = relay.GlobalVar("tvmgen_default_" + target + "_main_0")
    expected[gv0] = set_func_attr(relay.Function(f0, relay.Tuple([relay.nn.relu(n0[0]),
                                                                  n0[1]])),
                                  target, "tvmgen_default_" + target + "_main_0")
    inputs = [relay.var("data", shape=(1, 4, 3, 3))] + [
        relay.var(n, shape=(4,)) for n in ("bn_gamma", "bn_beta", "bn_mean", "bn_var")]
    out = gv0(*inputs)
    get1 = relay.TupleGetItem(out, 1)
    expected["main"] = relay.Function(inputs, relay.Tuple(
        [relay.TupleGetItem(out, 0), relay.tanh(get1), relay.log(get1)]))
    assert_structural_equal(partitioned, infer(expected), map_free_vars=True)


def test_partition_flatten_tuple_output():
    target = "test_flatten_tuple_output"
    _supported(["split", "abs"], target)

    def create_graph():
        a = relay.var("a", shape=(10, 10), dtype="uint8")
        a_split = relay.split(a, 2)
        a_split_0_abs = relay.abs(relay.TupleGetItem(a_split.astuple(), 0))
        out = relay.Tuple((relay.concatenate(a_split, 0), relay.nn.relu(a_split_0_abs)))
        return infer(IRModule.from_expr(relay.Function([a], out)))

    expected = IRModule()
    f0_i0 = relay.var(target + "_0_i0", shape=(10, 10), dtype="uint8")
    a_split = relay.split(f0_i0, 2).astuple()
    out = relay.Tuple((relay.TupleGetItem(a_split, 0), relay.TupleGetItem(a_split, 1),
                       relay.abs(relay.TupleGetItem(a_split, 0))))
    gv0 = relay.GlobalVar("tvmgen_default_" + target + "_main_0")
    expected[gv0] = set_func_attr(relay.Function([f0_i0], out), target,
                                  "tvmgen_default_" + target + "_main_0")
    data = relay.var("a", shape=(10, 10), dtype="uint8")
    f_out = gv0(data)
    concat = relay.concatenate(relay.Tuple((relay.TupleGetItem(f_out, 0),
                                            relay.TupleGetItem(f_out, 1))), 0)
    expected["main"] = relay.Function([data], relay.Tuple(
        (concat, relay.nn.relu(relay.TupleGetItem(f_out, 2)))))
    seq = irlab.transform.Sequential([transform.AnnotateTarget(target),
                                      transform.MergeCompilerRegions(),
                                      transform.PartitionGraph()])
    partitioned = seq(create_graph())
    assert_structural_equal(partitioned, infer(expected), map_free_vars=True)
    check_numerics(create_graph(), partitioned)


def test_partition_constant_propagation():
    ones = np.ones((8, 8), dtype="float32")
    x, y = relay.var("x", shape=(8, 8)), relay.var("y", shape=(8, 8))
    f = bind_params_by_name(relay.Function([x, y], relay.log(x + y)), {"x": ones})
    mod = AllowedListAnnotator(["add"], "ccompiler")(IRModule.from_expr(f))
    bound = transform.PartitionGraph()(mod)
    expected = IRModule()
    y0 = relay.var("y0", shape=(8, 8))
    glb_0 = relay.GlobalVar("tvmgen_default_ccompiler_main_0")
    expected[glb_0] = set_func_attr(relay.Function([y0], relay.const(ones) + y0), "ccompiler",
                                    "tvmgen_default_ccompiler_main_0")
    y = relay.var("y", shape=(8, 8))
    expected["main"] = relay.Function([y], relay.log(relay.Call(glb_0, [y])))
    assert_structural_equal(bound, infer(expected), map_free_vars=True)
    check_numerics(IRModule.from_expr(f), bound)
    # bind_constants=False keeps the constant as an argument
    unbound = transform.PartitionGraph(bind_constants=False)(mod)
    call = unbound["main"].body.args[0]
    assert len(call.args) == 2 and isinstance(call.args[0], relay.Constant)
    check_numerics(IRModule.from_expr(f), unbound)


def test_partition_names():
    """Functions are named per parent function; compiler names are sanitized."""
    def build(shape):
        a, b = relay.var("a", shape=shape), relay.var("b", shape=shape)
        add = a + b
        return relay.Function([a, b], relay.concatenate([relay.log(add), relay.exp(add)], 0))

    mod = IRModule()
    mod["main"] = build((8, 8))
    mod["subfunction"] = build((4, 4))
    mod = AllowedListAnnotator(["add"], "unsanitary-name++")(mod)
    partitioned = transform.PartitionGraph()(mod)
    names = sorted(gv.name_hint for gv in partitioned.get_global_vars())
    assert names == ["main", "subfunction", "tvmgen_default_unsanitary_name___main_0",
                     "tvmgen_default_unsanitary_name___subfunction_0"]
    ext = partitioned["tvmgen_default_unsanitary_name___main_0"]
    assert ext.get_attr("Compiler") == "unsanitary-name++"
    assert ext.get_attr("global_symbol") == "tvmgen_default_unsanitary_name___main_0"
    assert ext.get_attr("Primitive") == 1 and ext.get_attr("Inline") == 1
    assert partitioned["main"].body.args[0].fields[0].args[0].op.name_hint == \
        "tvmgen_default_unsanitary_name___main_0"
    custom = transform.PartitionGraph(mod_name="mod")(mod)
    assert "tvmgen_mod_unsanitary_name___main_0" in custom


def test_partition_tuple_output_and_no_annotations():
    a, b = relay.var("a", shape=(10, 10)), relay.var("b", shape=(10, 10))
    ba, bb = compiler_begin(a, "ccompiler"), compiler_begin(b, "ccompiler")
    out = compiler_end(relay.Tuple((relay.add(ba, bb), relay.subtract(ba, bb))), "ccompiler")
    mod = infer(IRModule.from_expr(relay.Function([a, b], out)))
    partitioned = transform.PartitionGraph()(mod)
    ext = partitioned["tvmgen_default_ccompiler_main_0"]
    assert isinstance(ext.body, relay.Tuple) and len(ext.params) == 2
    check_numerics(mod, partitioned)
    plain = IRModule.from_expr(relay.Function([a, b], relay.add(a, b)))
    assert_structural_equal(transform.PartitionGraph()(plain), infer(plain))


def test_partition_let_bound_and_glue_regions():
    """Two graphs TVM gets wrong: a let-bound value annotated as a region input with no
    region output (TVM leaves an unbound parameter), and regions joined both directly and
    through an unannotated tuple (TVM merges them into a cycle). Both partition correctly."""
    x = relay.var("x", shape=(3,))
    v = relay.var("v")
    body = relay.Let(v, relay.add(x, x), relay.multiply(v, relay.exp(v)))
    let_mod = infer(IRModule.from_expr(relay.Function([x], body)))
    annotated = transform.AnnotateTarget(TARGET)(let_mod)
    assert isinstance(annotated["main"].body.value, relay.Call)  # let v = compiler_begin(..)
    partitioned = transform.PartitionGraph()(transform.MergeCompilerRegions()(annotated))
    assert not relay.analysis.free_vars(partitioned["main"])
    check_numerics(let_mod, partitioned)

    data = relay.var("data", shape=(4,))
    a0 = relay.add(data, relay.const(np.ones(4, "float32")))
    g = relay.TupleGetItem(relay.Tuple([a0, data]), 0)
    glue_mod = infer(IRModule.from_expr(relay.Function(
        [data], relay.Tuple([relay.subtract(g, relay.add(g, a0)), g]))))
    annotated = transform.AnnotateTarget(TARGET, include_non_call_ops=False)(glue_mod)
    partitioned = transform.PartitionGraph()(transform.MergeCompilerRegions()(annotated))
    assert len(partitioned.functions) == 3  # the two adds stay apart
    check_numerics(glue_mod, partitioned)


def test_partition_rejects_cyclic_regions():
    x = relay.var("x", shape=(3,))
    inner = relay.abs(compiler_begin(x, TARGET))
    outside = relay.exp(compiler_end(inner, TARGET))
    back = relay.add(inner, compiler_begin(outside, TARGET))  # leaves the region and re-enters
    mod = infer(IRModule.from_expr(relay.Function([x], compiler_end(back, TARGET))))
    with pytest.raises(IrlabError, match="depends on itself"):
        transform.PartitionGraph()(mod)


@pytest.mark.parametrize("name", sorted(SMALL_MODELS))
def test_partition_flow_model_numerics(name):
    """AnnotateTarget -> MergeCompilerRegions -> PartitionGraph keeps every model's results;
    the outlined functions are evaluated as ordinary Relay functions."""
    mod, params = MODELS[name]()
    mod = infer(mod)
    seq = irlab.transform.Sequential([transform.AnnotateTarget(TARGET),
                                      transform.MergeCompilerRegions(),
                                      transform.PartitionGraph()])
    partitioned = seq(mod)
    external = [gv for gv in partitioned.get_global_vars() if gv.name_hint != "main"]
    assert external, f"nothing offloaded in {name}"
    for gv in external:
        func = partitioned[gv]
        assert gv.name_hint.startswith("tvmgen_default_test_target_main_")
        assert func.get_attr("Compiler") == TARGET
        assert func.get_attr("global_symbol") == gv.name_hint
        assert not count_ops(func)["annotation.compiler_begin"]
    assert not count_ops(partitioned["main"])["annotation.compiler_end"]
    check_numerics(mod, partitioned, params=params, rtol=1e-4, atol=1e-4)


def test_partition_flow_with_composites():
    """MergeComposite output goes to the target as whole composite calls."""
    mod, params = MODELS["simplenet"]()
    mod = transform.MergeComposite(ZOO_TABLE)(infer(mod))
    partitioned = transform.PartitionGraph()(transform.MergeCompilerRegions()(
        transform.AnnotateTarget(TARGET)(mod)))
    ext = partitioned["tvmgen_default_test_target_main_0"]
    assert _composites(ext) == ["test_target.conv2d_bn_relu"]
    check_numerics(mod, partitioned, params=params, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------------------------
# closures: a region never spans two scopes (found by test_partition_random_graphs)
def _scalar(name):
    return relay.var(name, shape=(), dtype="float32")


def _shared_in_closure_and_outside():
    """``add(x, x)`` is used by the closure's body and by ``main``: merged with the closure's
    ``add(p0, .)`` it was computed inside the closure from ``%p0`` and read outside."""
    x, p0 = _scalar("x"), _scalar("p0")
    a = relay.add(x, x)
    fn = relay.Function([p0], relay.add(p0, a))
    return relay.Function([x], relay.Tuple([relay.Call(fn, [x]), a]))


def _shared_inside_only():
    x, p0 = _scalar("x"), _scalar("p0")
    a = relay.add(x, x)
    fn = relay.Function([p0], relay.add(p0, a))
    return relay.Function([x], relay.multiply(relay.Call(fn, [x]), x))


def _nested_closures():
    x, p0, p1 = _scalar("x"), _scalar("p0"), _scalar("p1")
    a = relay.add(x, x)
    b = relay.multiply(p0, a)  # shared by the inner closure and the outer one
    inner = relay.Function([p1], relay.add(p1, relay.add(b, a)))
    outer = relay.Function([p0], relay.Tuple([relay.Call(inner, [p0]), b]))
    return relay.Function([x], relay.Tuple([relay.Call(outer, [x]), a]))


def _let_bound_closure():
    x, p0, f = _scalar("x"), _scalar("p0"), relay.var("f")
    a = relay.add(x, x)
    fn = relay.Function([p0], relay.add(p0, a))
    return relay.Function([x], relay.Let(f, fn, relay.Tuple([relay.Call(f, [x]), a])))


def _closure_result_meets_capture():
    """``add(f(x), a)`` reads the closure's result and ``a``, which the closure captures:
    merging ``a`` into it would make the region feed itself through the closure."""
    x, p0 = _scalar("x"), _scalar("p0")
    a = relay.add(x, x)
    fn = relay.Function([p0], relay.add(p0, a))
    return relay.Function([x], relay.add(relay.Call(fn, [x]), a))


def _shared_in_let_body_and_value():
    x, l = _scalar("x"), _scalar("l")
    a = relay.add(x, x)
    return relay.Function([x], relay.Let(l, a, relay.add(relay.add(l, a), a)))


def _inner_closure_captures_through_a_let():
    """The inner closure binds ``a`` (of the outer closure) to a let and ignores it; the outer
    closure adds ``a`` to the inner closure's result (found by a nested random graph)."""
    x, p0, p1, l = _scalar("x"), _scalar("p0"), _scalar("p1"), relay.var("l")
    a = relay.add(p0, p0)
    inner = relay.Function([p1], relay.Let(l, a, relay.add(p1, p1)))
    outer = relay.Function([p0], relay.add(a, relay.Call(inner, [p0])))
    return relay.Function([x], relay.Tuple([relay.Call(outer, [x]), x]))


_SCOPE_CASES = [_shared_in_closure_and_outside, _shared_inside_only, _nested_closures,
                _let_bound_closure, _closure_result_meets_capture, _shared_in_let_body_and_value,
                _inner_closure_captures_through_a_let]


def _partition_flow(mod, include_non_call_ops):
    annotated = transform.AnnotateTarget([TARGET], include_non_call_ops)(mod)
    return transform.PartitionGraph()(transform.MergeCompilerRegions()(annotated))


@pytest.mark.parametrize("include_non_call_ops", [True, False])
@pytest.mark.parametrize("build", _SCOPE_CASES, ids=lambda f: f.__name__.strip("_"))
def test_partition_regions_stay_in_their_scope(build, include_non_call_ops):
    mod = infer(IRModule.from_expr(build()))
    partitioned = _partition_flow(mod, include_non_call_ops)
    assert not relay.analysis.free_vars(partitioned["main"])
    _same_results(mod, partitioned)


@pytest.mark.parametrize("include_non_call_ops", [True, False])
def test_merge_regions_not_across_a_closure(include_non_call_ops):
    """The shared ``add(x, x)`` and the closure's ``add(p0, .)`` stay two external functions
    (one add each); regions inside a closure still merge with each other."""
    mod = infer(IRModule.from_expr(_shared_in_closure_and_outside()))
    partitioned = _partition_flow(mod, include_non_call_ops)
    external = [gv for gv in partitioned.get_global_vars() if gv.name_hint != "main"]
    assert sorted(count_ops(partitioned[gv])["add"] for gv in external) == [1, 1]

    mod = infer(IRModule.from_expr(_shared_inside_only()))
    partitioned = _partition_flow(mod, include_non_call_ops)
    external = [gv for gv in partitioned.get_global_vars() if gv.name_hint != "main"]
    assert sorted(count_ops(partitioned[gv])["add"] for gv in external) == [0, 2]


def test_partition_rejects_a_region_across_a_closure():
    """Hand-written annotations putting the shared ``add(x, x)`` and the closure's
    ``add(p0, .)`` in one region (what MergeCompilerRegions used to build)."""
    x, p0 = _scalar("x"), _scalar("p0")
    shared = relay.add(compiler_begin(x, TARGET), compiler_begin(x, TARGET))
    body = compiler_end(relay.add(compiler_begin(p0, TARGET), shared), TARGET)
    fn = relay.Function([p0], body)
    func = relay.Function([x], relay.Tuple([relay.Call(fn, [x]), compiler_end(shared, TARGET)]))
    with pytest.raises(IrlabError, match="spans two scopes"):
        transform.PartitionGraph()(infer(IRModule.from_expr(func)))


def test_region_scopes():
    """A node used by a closure and by the function around it belongs to the outer scope."""
    x, p0 = _scalar("x"), _scalar("p0")
    shared, inner = relay.add(x, x), relay.add(x, relay.const(1.0))
    body = relay.add(relay.add(p0, shared), inner)
    fn = relay.Function([p0], body)
    func = relay.Function([x], relay.Tuple([relay.Call(fn, [x]), shared]))
    scopes = node_scopes(func)
    assert scopes[shared] is scopes[func.body]
    assert scopes[inner] is scopes[body] is not scopes[shared]
    assert scopes[body].parent is scopes[shared]


# ---------------------------------------------------------------------------------------------
# random graphs
def _same_results(before, after, seed=0):
    rng = np.random.default_rng(seed)
    args = [random_value(p.checked_type, rng) for p in before["main"].params]
    with np.errstate(all="ignore"):
        want = _flat(create_executor("debug", mod=before).evaluate()(*args))
        got = _flat(create_executor("debug", mod=after).evaluate()(*args))
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert w.shape == g.shape and w.dtype == g.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, equal_nan=True)


def _flat(value):
    out, stack = [], [value]
    while stack:
        v = stack.pop(0)
        if isinstance(v, tuple):
            stack[:0] = list(v)
        else:
            out.append(v.numpy())
    return out


_RANDOM = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))


@_RANDOM
@given(relay_functions(max_steps=10))
def test_partition_random_graphs(func):
    mod = infer(IRModule.from_expr(func))
    for include_non_call_ops in (True, False):
        annotated = transform.AnnotateTarget([TARGET], include_non_call_ops)(mod)
        merged = transform.MergeCompilerRegions()(annotated)
        partitioned = transform.PartitionGraph()(merged)
        for gv in partitioned.get_global_vars():
            counts = count_ops(partitioned[gv])
            assert not counts["annotation.compiler_begin"]
            assert not counts["annotation.compiler_end"]
        _same_results(mod, partitioned)
