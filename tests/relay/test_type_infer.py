"""Type inference: every node kind, unknown types solved through relations, clear errors."""

import pytest

import irlab
from irlab import relay
from irlab.errors import RelayTypeError
from irlab.ir import FuncType, TensorType, TupleType
from irlab.relay.transform import InferType


def infer(expr_or_fn):
    mod = irlab.IRModule.from_expr(expr_or_fn)
    return InferType()(mod)


def test_every_node_gets_checked_type_and_function_ret_type():
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(1, 3))
    s = relay.add(x, y)
    t = relay.Tuple([s, y])
    g = relay.TupleGetItem(t, 1)
    fn = relay.Function([x, y], relay.Tuple([relay.exp(s), g]))
    main = infer(fn)["main"]
    assert main.ret_type == TupleType([TensorType((2, 3)), TensorType((1, 3))])
    assert main.checked_type == FuncType([TensorType((2, 3)), TensorType((1, 3))],
                                         main.ret_type)
    for node in (s, t, g):
        assert node.has_checked_type()
    assert s.checked_type == TensorType((2, 3))
    assert t.checked_type == TupleType([TensorType((2, 3)), TensorType((1, 3))])


def test_broadcast_and_comparison_types():
    a = relay.var("a", shape=(4, 1, 3))
    b = relay.var("b", shape=(5, 1))
    main = infer(relay.Function([a, b], relay.less(a, b)))["main"]
    assert main.ret_type == TensorType((4, 5, 3), "bool")


def test_let_if_and_closures():
    x = relay.var("x", shape=(3,))
    c = relay.var("c", "bool")
    v = relay.var("v")  # unannotated: typed from its value
    inner_p = relay.var("p", shape=(3,))
    inner = relay.Function([inner_p], relay.negative(inner_p))
    f = relay.var("f")
    body = relay.Let(v, relay.exp(x), relay.If(c, relay.Call(f, [v]), x))
    fn = relay.Function([x, c], relay.Let(f, inner, body))
    main = infer(fn)["main"]
    assert main.ret_type == TensorType((3,))
    let_v = main.body.body
    assert let_v.var.type_annotation == TensorType((3,))  # annotation filled in, as TVM



def test_global_functions_call_each_other():
    mod = irlab.IRModule()
    p = relay.var("p", shape=(2,))
    mod["double"] = relay.Function([p], relay.add(p, p))
    x = relay.var("x", shape=(2,))
    mod["main"] = relay.Function([x], relay.Call(mod.get_global_var("double"), [x]))
    typed = InferType()(mod)
    assert typed["main"].ret_type == TensorType((2,))
    assert typed["double"].ret_type == TensorType((2,))


def test_errors_name_the_op_and_state_expected_vs_actual():
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(4, 3))
    with pytest.raises(RelayTypeError) as info:
        infer(relay.Function([x, y], relay.exp(relay.add(x, y))))
    text = str(info.value)
    assert text.startswith("add:") and "(2, 3) and (4, 3) cannot be broadcast" in text

    z = relay.var("z", shape=(2, 3), dtype="int32")
    with pytest.raises(RelayTypeError, match="float32 vs int32"):
        infer(relay.Function([x, z], relay.add(x, z)))


def test_if_branches_must_agree_and_condition_is_bool():
    x = relay.var("x", shape=(2,))
    c = relay.var("c", "bool")
    with pytest.raises(RelayTypeError):
        infer(relay.Function([x, c], relay.If(c, x, relay.Tuple([x]))))
    with pytest.raises(RelayTypeError):
        infer(relay.Function([x], relay.If(x, x, x)))


def test_tuple_getitem_out_of_range():
    x = relay.var("x", shape=(2,))
    with pytest.raises(RelayTypeError, match="out of range"):
        infer(relay.Function([x], relay.TupleGetItem(relay.Tuple([x]), 3)))


def test_unknown_types_that_nothing_determines_are_reported():
    x = relay.var("x")
    with pytest.raises(RelayTypeError, match="cannot infer"):
        infer(relay.Function([x], relay.exp(x)))


def test_wrong_number_of_arguments():
    x = relay.var("x", shape=(2,))
    bad = relay.Call(relay.op.get("exp"), [x, x])
    with pytest.raises(RelayTypeError, match="expects 1 arguments, got 2"):
        infer(relay.Function([x], bad))


def test_deep_chain_type_checks():
    x = relay.var("x", shape=(1, 4))
    e = x
    for _ in range(10000):
        e = relay.exp(e)
    main = infer(relay.Function([x], e))["main"]
    assert main.ret_type == TensorType((1, 4))
    assert main.body.checked_type == TensorType((1, 4))


def test_input_module_not_mutated_structurally():
    x = relay.var("x")
    y = relay.var("y", shape=(2,))
    fn = relay.Function([x, y], relay.add(y, y))
    mod = irlab.IRModule.from_expr(relay.Function([y], relay.add(y, y)))
    before = mod["main"]
    InferType()(mod)
    assert mod["main"] is before and before.ret_type is None
    assert fn.params[0].type_annotation is None


def test_cast_and_initializers():
    x = relay.var("x", shape=(2, 3))
    main = infer(relay.Function([x], relay.Tuple([relay.cast(x, "int8"), relay.zeros((4,), "int64"),
                                                  relay.full(relay.const(1.5), (2, 2))])))["main"]
    assert main.ret_type == TupleType([TensorType((2, 3), "int8"), TensorType((4,), "int64"),
                                       TensorType((2, 2), "float32")])


def _error_text(fn):
    with pytest.raises(RelayTypeError) as info:
        infer(fn)
    return str(info.value)


def test_conv2d_channel_mismatch_shows_call_with_caret():
    data = relay.var("data", shape=(1, 3, 32, 32))
    w = relay.var("w", shape=(8, 4, 3, 3))
    conv = relay.nn.conv2d(data, w, kernel_size=(3, 3), padding=(1, 1))
    text = _error_text(relay.Function([data, w], relay.nn.relu(conv)))
    lines = text.splitlines()
    assert lines[0].startswith("nn.conv2d: input channels differ")
    assert "3 channels" in lines[0] and "expects 4" in lines[0]  # actual vs expected
    assert "def @main(%data: Tensor[(1, 3, 32, 32), float32]" in text
    call_line = next(i for i, line in enumerate(lines) if "nn.conv2d(%data, %w" in line)
    caret_line = lines[call_line + 1]
    code = lines[call_line]
    start = caret_line.index("^")
    assert code[start:].startswith("nn.conv2d(")  # the caret sits under the call
    assert set(caret_line.split("|", 1)[1].strip()) == {"^"}


def test_dense_inner_dimension_mismatch():
    x = relay.var("x", shape=(4, 16))
    w = relay.var("w", shape=(10, 15))
    text = _error_text(relay.Function([x, w], relay.nn.dense(x, w)))
    assert text.startswith("nn.dense: inner dimensions differ")
    assert "16" in text.splitlines()[0] and "15" in text.splitlines()[0]
    assert "^" in text


def test_unannotated_weights_inferred_from_attrs():
    data = relay.var("data", shape=(2, 3, 8, 8))
    w = relay.var("w")
    conv = relay.nn.conv2d(data, w, channels=5, kernel_size=(3, 3))
    gamma, beta, mean, var = (relay.var(n) for n in ("g", "b", "m", "v"))
    bn = relay.nn.batch_norm(conv, gamma, beta, mean, var)[0]
    d = relay.var("d")
    out = relay.nn.dense(relay.nn.batch_flatten(bn), d, units=7)
    main = infer(relay.Function(relay.analysis.free_vars(out), out))["main"]
    types = {p.name_hint: p.type_annotation for p in main.params}
    assert types["w"] == TensorType((5, 3, 3, 3))
    assert types["g"] == types["v"] == TensorType((5,))
    assert types["d"] == TensorType((7, 5 * 6 * 6))
    assert main.ret_type == TensorType((2, 7))


def test_a_module_inferred_already_is_not_inferred_again_but_a_changed_one_is():
    x = relay.var("x", shape=(2, 3))
    typed = infer(relay.Function([x], relay.exp(x)))
    again = InferType()(typed)  # the same functions: nothing to infer (a copy comes back)
    assert again is not typed and again["main"] is typed["main"]
    changed = typed.copy()
    y = relay.var("y", shape=(4,))
    changed["main"] = relay.Function([y], relay.sum(y))  # a new function under the same name
    assert InferType()(changed)["main"].ret_type == TensorType((), "float32")
    # the typed function again, next to a new global calling it: that one gets inferred
    mod = typed.copy()
    z = relay.var("z", shape=(2, 3))
    mod["caller"] = relay.Function([z], relay.Call(mod.get_global_var("main"), [z]))
    assert InferType()(mod)["caller"].ret_type == TensorType((2, 3))
