"""FoldConstant: the cases of TVM's tests/python/relay/test_pass_fold_constant.py, what is never
folded, numerics on every model with bound params, and random graphs (hypothesis)."""

import numpy as np
import pytest
from _model_references import MODEL_NAMES, bound_model, check_model
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irlab
from irlab import relay
from irlab.ir import assert_structural_equal
from irlab.relay import transform
from irlab.relay.analysis import count_ops
from irlab.relay.build_module import bind_params_by_name
from irlab.relay.expr import Constant
from irlab.relay.expr_functor import expr_children
from irlab.relay.transform.fold_constant import is_constant
from irlab.relay.testing import create_workload, run_opt_pass
from irlab.testing.check import check_numerics, random_value
from irlab.testing.strategies import relay_functions
from irlab.transform import PassContext, Sequential


def _typed(expr):
    return run_opt_pass(expr, transform.InferType())


def test_fold_const():
    c_data = np.array([1, 2, 3]).astype("float32")
    t = relay.TensorType([1, 2, 3], "float32")

    def before():
        c = relay.const(c_data)
        x = relay.var("x", t)
        y = relay.add(c, c)
        y = relay.multiply(y, relay.const(2, "float32"))
        y = relay.add(x, y)
        z = relay.add(y, c)
        return relay.Function([x], z)

    def expected():
        x = relay.var("x", t)
        c_folded = (c_data + c_data) * 2
        y = relay.add(x, relay.const(c_folded))
        z = relay.add(y, relay.const(c_data))
        return relay.Function([x], z)

    assert_structural_equal(run_opt_pass(before(), transform.FoldConstant()),
                            _typed(expected()))


def test_fold_let():
    c_data = np.array(1).astype("float32")
    t = relay.TensorType([1], "float32")
    x = relay.var("x", t)
    t1, t2, t3 = relay.var("t1"), relay.var("t2"), relay.var("t3")
    body = relay.Let(t1, relay.const(c_data),
                     relay.Let(t2, relay.add(t1, t1),
                               relay.Let(t3, relay.add(t2, x), t3)))
    before = relay.Function([x], body)

    x2, t3b = relay.var("x", t), relay.var("t3")
    expected = relay.Function([x2], relay.Let(t3b, relay.add(relay.const(c_data + c_data), x2),
                                              t3b))
    assert_structural_equal(run_opt_pass(before, transform.FoldConstant()), _typed(expected))


def test_fold_tuple():
    c_data = np.array(1).astype("float32")
    t = relay.TensorType([1], "float32")

    def before():
        c = relay.const(c_data)
        x = relay.var("x", t)
        y = relay.Tuple([x, c])
        z = relay.add(y[1], c)
        z = relay.add(z, y[0])
        return relay.Function([x], z)

    def expected():
        c = relay.const(c_data + c_data)
        x = relay.var("x", t)
        z = relay.add(c, x)
        return relay.Function([x], z)

    assert_structural_equal(run_opt_pass(before(), transform.FoldConstant()),
                            _typed(expected()))


def test_fold_concat():
    c_data = np.array([[1, 2, 3]]).astype("float32")
    before = relay.Function([], relay.concatenate((relay.const(c_data), relay.const(c_data)),
                                                  axis=0))
    expected = relay.Function([], relay.const(np.concatenate((c_data, c_data), axis=0)))
    assert_structural_equal(run_opt_pass(before, transform.FoldConstant()), _typed(expected))


def test_fold_if():
    cond_data = np.array(1).astype("bool")
    x_data = np.array([[1, 2, 3]]).astype("float32")
    x = relay.var("x", relay.TensorType((1, 3), "float32"))

    def before():
        a = relay.const(cond_data)
        y = relay.If(a, relay.add(relay.const(x_data), relay.const(x_data)),
                     relay.subtract(relay.const(x_data), relay.const(x_data)))
        return relay.Function([x], relay.add(x, y))

    expected = relay.Function([x], relay.add(x, relay.const(x_data + x_data)))
    assert_structural_equal(run_opt_pass(before(), transform.FoldConstant()), _typed(expected))

    cond_data = np.array(0).astype("bool")
    expected = relay.Function([x], relay.add(x, relay.const(x_data - x_data)))
    assert_structural_equal(run_opt_pass(before(), transform.FoldConstant()), _typed(expected))


def test_fold_full_and_generators_stay():
    # Folding a cheap generator would only trade it for a big literal.
    full = relay.full(relay.const(1.0, "float32"), (8, 9, 10), dtype="float32")
    assert_structural_equal(run_opt_pass(full, transform.FoldConstant()), _typed(full))
    zeros = relay.zeros((4, 5), "float32")  # no arguments at all
    assert_structural_equal(run_opt_pass(zeros, transform.FoldConstant()), _typed(zeros))
    like = relay.ones_like(relay.const(np.ones((2, 2), "float32")))
    assert_structural_equal(run_opt_pass(like, transform.FoldConstant()), _typed(like))


def test_fold_dropout():
    # dropout is stateful: a constant graph around it keeps it.
    data = relay.const(np.arange(10).astype(np.float32))
    add = relay.nn.dropout(data) + relay.const(1.0)
    before_mod = irlab.IRModule.from_expr(relay.Function(relay.analysis.free_vars(add), add))
    passes = Sequential([transform.InferType(), transform.FoldConstant()])
    with PassContext(opt_level=3):
        after_mod = passes(before_mod)
    assert_structural_equal(transform.InferType()(before_mod)["main"], after_mod["main"])


def test_primitive_function_not_folded():
    c = relay.const(np.ones((2,), "float32"))
    p = relay.var("p", shape=(2,))
    inner = relay.Function([p], relay.add(p, relay.add(c, c)), attrs={"Primitive": 1})
    before = relay.Function([], inner(relay.add(c, c)))
    after = run_opt_pass(before, transform.FoldConstant())
    # The argument is folded; the primitive body is left for codegen; the call stays.
    assert count_ops(after.body.op) == count_ops(inner)
    assert isinstance(after.body.args[0], Constant)
    check_numerics(before, after)


def test_tuple_result_and_nested_function():
    c = relay.const(np.arange(6, dtype="float32").reshape(2, 3))
    parts = relay.split(c, 3, axis=1)  # an all-constant op with a tuple result
    x = relay.var("x", shape=(2, 1))
    inner = relay.Function([x], relay.add(x, relay.multiply(parts[1], relay.const(2.0))))
    y = relay.var("y", shape=(2, 1))
    before = relay.Function([y], inner(y))
    after = run_opt_pass(before, transform.FoldConstant())
    counts = count_ops(after)
    assert counts == {"add": 1}, counts
    check_numerics(before, after)


def test_fold_batch_norm():
    """SimplifyInference + FoldConstant + FoldScaleAxis leave conv + add of constants."""
    data = relay.var("data", relay.TensorType((1, 3, 32, 32), "float32"))
    weight = relay.var("weight")
    conv = relay.nn.conv2d(data=data, weight=weight, kernel_size=(3, 3), channels=16,
                           padding=(1, 1))
    bn = relay.nn.batch_norm(conv, relay.var("bn_gamma"), relay.var("bn_beta"),
                             relay.var("bn_mean"), relay.var("bn_var"))
    mod, params = create_workload(relay.Function(relay.analysis.free_vars(bn[0]), bn[0]))
    mod["main"] = bind_params_by_name(mod["main"], params)
    remove_bn = Sequential([transform.InferType(), transform.SimplifyInference(),
                            transform.FoldConstant(), transform.FoldScaleAxis()])
    with PassContext(opt_level=3):
        after = remove_bn(mod)
    body = after["main"].body
    assert body.op.name == "add" and isinstance(body.args[1], Constant)
    conv_call = body.args[0]
    assert conv_call.op.name == "nn.conv2d" and isinstance(conv_call.args[1], Constant)
    assert body.args[1].data.shape == (16, 1, 1)
    check_numerics(mod, after, rtol=1e-4, atol=1e-4)


def test_pass_info():
    info = transform.FoldConstant().info
    assert (info.name, info.opt_level, info.required) == ("FoldConstant", 2, [])


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_models_numerics(name):
    # After SimplifyInference, batch_norm's scale/shift are all-constant sub-graphs.
    folded = transform.FoldConstant()(transform.SimplifyInference()(bound_model(name)))
    counts = count_ops(folded["main"])
    assert not {"sqrt", "negative", "expand_dims"} & set(counts) or name == "bert"
    assert not _foldable_calls(folded["main"])
    check_model(name, folded)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(func=relay_functions(max_steps=8), data=st.data())
def test_random_graphs(func, data):
    """Binding some parameters to constants creates foldable sub-graphs; the folded program
    must compute exactly what the original computes."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    binds = {}
    for p in func.params:
        ty = p.type_annotation
        if ty.dtype == "float32" and data.draw(st.booleans()):
            binds[p] = relay.const(rng.standard_normal(ty.shape).astype("float32"))
    bound = relay.bind(func, binds)
    before = transform.InferType()(irlab.IRModule.from_expr(bound))
    after = transform.FoldConstant()(before)
    assert not _foldable_calls(after["main"])
    assert_same_values(before, after)


def assert_same_values(before, after, seed=0):
    """Both modules' @main on the same random inputs, given by position (random graphs repeat
    parameter names); NaN equals NaN."""
    rng = np.random.default_rng(seed)
    args = [random_value(p.checked_type, rng) for p in before["main"].params]
    results = [relay.create_executor("debug", mod=m).evaluate()(*args) for m in (before, after)]
    flat = []
    for result in results:
        stack, out = [result], []
        while stack:
            value = stack.pop()
            if isinstance(value, tuple):
                stack.extend(value)
            else:
                out.append(value.numpy())
        flat.append(out)
    for expected, got in zip(*flat):
        assert expected.dtype == got.dtype and expected.shape == got.shape
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, equal_nan=True)


def _foldable_calls(func):
    """Op calls with all-constant arguments left outside primitive functions."""
    left, stack, seen = [], [func.body], set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, relay.Function):
            if not node.get_attr("Primitive"):
                stack.append(node.body)
            continue
        if isinstance(node, relay.Call) and isinstance(node.op, relay.Op) \
                and node.args and all(is_constant(a) for a in node.args):
            left.append(node)
        stack.extend(c for c in expr_children(node) if not isinstance(c, relay.Op))
    return left


def test_shape_of_and_ndarray_size_fold_and_run():
    """``shape_of``/``ndarray_size`` of a static shape fold to constants; unfolded, the
    interpreter and the compiled graph give the same values."""
    import numpy as np

    import irlab
    from irlab import relay

    x = relay.var("x", shape=(2, 3, 4))
    for make, want in ((lambda v: relay.shape_of(v + v, "int64"), np.array([2, 3, 4])),
                       (lambda v: relay.ndarray_size(v, "float32"), np.array(24.0))):
        mod = irlab.IRModule.from_expr(relay.Function([x], make(x)))
        folded = relay.transform.FoldConstant()(relay.transform.InferType()(mod))
        assert isinstance(folded["main"].body, relay.Constant)
        np.testing.assert_array_equal(folded["main"].body.data.numpy(), want)
        data = np.ones((2, 3, 4), "float32")
        for kind in ("debug", "graph"):
            out = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(data)
            np.testing.assert_array_equal(out.numpy(), want)


def test_on_device_annotations_do_not_block_folding():
    """A constant under on_device folds like a constant; folded values keep the annotation;
    the program computes the same."""
    on_cpu = lambda e: relay.annotation.on_device(e, irlab.cpu(), constrain_result=True)
    c = relay.const(np.array([1.5, 2.0], "float32"))
    x = relay.var("x", shape=(2,))
    x.virtual_device_ = irlab.cpu()  # a note beside the node, as TVM's field
    t1 = relay.var("t1")
    t2 = relay.var("t2")
    body = relay.Let(t1, on_cpu(c), relay.Let(t2, on_cpu(relay.add(t1, t1)),
                                              on_cpu(relay.multiply(t2, x))))
    before = relay.Function([x], body)
    after = run_opt_pass(before, transform.FoldConstant())
    expected = run_opt_pass(relay.Function([x], on_cpu(relay.multiply(
        on_cpu(relay.const(np.array([3.0, 4.0], "float32"))), x))), transform.InferType())
    assert_structural_equal(after, expected)
    assert x.virtual_device_ == irlab.cpu()
    check_numerics(before, after)
