"""The Relay text printer against TVM's documented output, byte for byte."""

import numpy as np
import pytest

import irlab.relay as relay
from irlab.ir import DictAttrs, GlobalVar, IRModule, Span, TensorType, TupleType, FuncType
from irlab.relay.printer import astext, pretty_print, pretty_print_located
from irlab.relay.transform import InferType

F4 = "Tensor[(1, 64, 54, 54), float32]"


def typed(mod):
    return InferType()(mod)


def tutorial_example():
    """``example()`` of TVM's pass-infra tutorial (docs/how_to/extend_tvm/use_pass_infra)."""
    c = relay.const(np.zeros((1, 64, 54, 54), "float32"))
    weight = relay.var("weight", shape=(64, 64, 3, 3))
    x = relay.var("x", relay.TensorType((1, 64, 56, 56), "float32"))
    conv = relay.nn.conv2d(x, weight)
    y = relay.add(c, c)
    y = relay.multiply(y, relay.const(2, "float32"))
    y = relay.add(conv, y)
    z = relay.add(y, c)
    z1 = relay.add(y, c)
    return relay.Function([x, weight], relay.add(z, z1)), x, weight, conv


def test_tutorial_module_untyped():
    f, *_ = tutorial_example()
    assert str(IRModule.from_expr(f)) == """\
def @main(%x: Tensor[(1, 64, 56, 56), float32], %weight: Tensor[(64, 64, 3, 3), float32]) {
  %0 = add(meta[relay.Constant][0], meta[relay.Constant][0]);
  %1 = nn.conv2d(%x, %weight, padding=[0, 0, 0, 0]);
  %2 = multiply(%0, 2f);
  %3 = add(%1, %2);
  %4 = add(%3, meta[relay.Constant][0]);
  %5 = add(%3, meta[relay.Constant][0]);
  add(%4, %5)
}

"""  # TVM's PrintFinal adds a line break whenever meta is non-empty


def test_tutorial_custom_pipeline_typed():
    # The tutorial's CustomPipeline replaces every constant c by multiply(3f, c) (memoized).
    _, x, weight, conv = tutorial_example()
    c = relay.const(np.zeros((1, 64, 54, 54), "float32"))
    three = relay.const(3, "float32")
    c3 = relay.multiply(three, c)
    y = relay.multiply(relay.add(c3, c3), relay.multiply(three, relay.const(2, "float32")))
    y = relay.add(conv, y)
    mod = typed(IRModule.from_expr(relay.Function(
        [x, weight], relay.add(relay.add(y, c3), relay.add(y, c3)))))
    t = f" /* ty={F4} */"
    assert str(mod) == (
        "def @main(%x: Tensor[(1, 64, 56, 56), float32] /* ty=Tensor[(1, 64, 56, 56), float32] */"
        ", %weight: Tensor[(64, 64, 3, 3), float32] /* ty=Tensor[(64, 64, 3, 3), float32] */) "
        f"-> {F4} {{\n"
        f"  %0 = multiply(3f /* ty=float32 */, meta[relay.Constant][0]{t}){t};\n"
        f"  %1 = add(%0, %0){t};\n"
        "  %2 = multiply(3f /* ty=float32 */, 2f /* ty=float32 */) /* ty=float32 */;\n"
        f"  %3 = nn.conv2d(%x, %weight, padding=[0, 0, 0, 0]){t};\n"
        f"  %4 = multiply(%1, %2){t};\n"
        f"  %5 = add(%3, %4){t};\n"
        f"  %6 = add(%5, %0){t};\n"
        f"  %7 = add(%5, %0){t};\n"
        f"  add(%6, %7){t}\n"
        "}\n\n")


def test_fused_functions_names_and_numbering():
    # TVM's tutorial output after FuseOps(fuse_opt_level=0): the fn printed first gets %p03,
    # because the dataflow is expanded from the output (the last fn is named first).
    x = relay.var("x", shape=(1, 64, 56, 56))
    weight = relay.var("weight", shape=(64, 64, 3, 3))
    c0 = relay.const(np.zeros((1, 64, 54, 54), "float32"))
    c1 = relay.const(np.ones((1, 64, 54, 54), "float32"))

    def prim(nparams, make):
        params = [relay.var(f"p{i}", shape=(1, 64, 54, 54)) for i in range(nparams)]
        return relay.Function(params, make(*params)).with_attr("Primitive", 1)

    p0 = relay.var("p0", shape=(1, 64, 56, 56))
    p1 = relay.var("p1", shape=(64, 64, 3, 3))
    f0 = relay.Function([p0, p1], relay.nn.conv2d(p0, p1)).with_attr("Primitive", 1)
    f2 = prim(2, relay.add)
    f4 = prim(2, relay.add)
    f6 = prim(1, lambda p: relay.add(p, p))
    out = f6(f4(f2(f0(x, weight), c0), c1))
    text = str(typed(IRModule.from_expr(relay.Function([x, weight], out))))
    lines = text.splitlines()
    assert lines[1].startswith(
        "  %0 = fn (%p03: Tensor[(1, 64, 56, 56), float32] /* ty=Tensor[(1, 64, 56, 56), "
        "float32] */, %p12: Tensor[(64, 64, 3, 3), float32] /* ty=Tensor[(64, 64, 3, 3), "
        "float32] */, Primitive=1) -> Tensor[(1, 64, 54, 54), float32] {")
    assert lines[2] == f"    nn.conv2d(%p03, %p12, padding=[0, 0, 0, 0]) /* ty={F4} */"
    assert lines[3] == (
        "  } /* ty=fn (Tensor[(1, 64, 56, 56), float32], Tensor[(64, 64, 3, 3), float32]) -> "
        f"{F4} */;")
    assert lines[4] == f"  %1 = %0(%x, %weight) /* ty={F4} */;"
    assert lines[5].startswith(f"  %2 = fn (%p02: {F4} /* ty={F4} */, %p11: {F4}")
    assert lines[8] == (f"  %3 = %2(%1, meta[relay.Constant][0] /* ty={F4} */) /* ty={F4} */;")
    assert lines[9].startswith(f"  %4 = fn (%p01: {F4} /* ty={F4} */, %p1: {F4}")
    assert lines[13].startswith(f"  %6 = fn (%p0: {F4} /* ty={F4} */, Primitive=1) -> {F4} {{")
    assert lines[14] == f"    add(%p0, %p0) /* ty={F4} */"
    assert lines[-3:] == [f"  %6(%5) /* ty={F4} */", "}", ""]


def test_resnet_stem_attrs_and_tuple_getitem():
    data = relay.var("data", shape=(1, 3, 224, 224))
    bn_vars = [relay.var("bn_data_" + n, shape=(3,))
               for n in ("gamma", "beta", "moving_mean", "moving_var")]
    w = relay.var("conv0_weight", shape=(64, 3, 7, 7))
    bn = relay.nn.batch_norm(data, *bn_vars, epsilon=2e-05, scale=False)[0]
    out = relay.nn.conv2d(bn, w, strides=(2, 2), padding=(3, 3), channels=64,
                          kernel_size=(7, 7))
    body = str(typed(IRModule.from_expr(relay.Function([data, *bn_vars, w], out))))
    assert body.splitlines()[1:] == [
        "  %0 = nn.batch_norm(%data, %bn_data_gamma, %bn_data_beta, %bn_data_moving_mean, "
        "%bn_data_moving_var, epsilon=2e-05f, scale=False) /* ty=(Tensor[(1, 3, 224, 224), "
        "float32], Tensor[(3), float32], Tensor[(3), float32]) */;",
        "  %1 = %0.0 /* ty=Tensor[(1, 3, 224, 224), float32] */;",
        "  nn.conv2d(%1, %conv0_weight, strides=[2, 2], padding=[3, 3, 3, 3], channels=64, "
        "kernel_size=[7, 7]) /* ty=Tensor[(1, 64, 112, 112), float32] */",
        "}"]


@pytest.mark.parametrize("value, dtype, text", [
    (1.0, "float32", "1f"), (1, "int32", "1"), (1, "int64", "1i64"), (1.0, "float64", "1f64"),
    (1.0, "float16", "1f16"), (True, "bool", "True"), (False, "bool", "False"),
    (-3, "int16", "-3i16"), (0.5, "float32", "0.5f"), (1e-05, "float32", "1e-05f"),
    (123456.0, "float32", "123456f"), (1234567.0, "float32", "1.234567e+06f"),
    (0.1, "float64", "0.1f64"), (float("inf"), "float32", "inff"),
    (float("-inf"), "float32", "-inff"), (float("nan"), "float32", "nanf"),
    (-0.0, "float32", "-0f"), (2.5, "float16", "2.5f16"),
])
def test_scalar_constants(value, dtype, text):
    assert pretty_print(relay.const(value, dtype)) == text


def test_float_text_is_exact_when_6_digits_are_not_enough():
    # TVM would print 0.123457f and lose the value; irlab keeps %g when it is exact.
    assert pretty_print(relay.const(0.1234567, "float32")) == "0.1234567f"
    assert pretty_print(relay.const(3.14159265358979, "float64")) == "3.14159265358979f64"


def test_non_scalar_and_other_dtype_constants_go_to_meta():
    # With a non-empty meta table TVM's PrintFinal always adds a line break.
    tensor = relay.const(np.arange(3, dtype="float32"))
    assert pretty_print(tensor) == "meta[relay.Constant][0]\n"
    assert pretty_print(relay.const(7, "uint8")) == "meta[relay.Constant][0]\n"
    a, b = relay.const(np.ones(2, "float32")), relay.const(np.ones(2, "float32"))
    assert pretty_print(relay.Tuple([a, b, a])) == (
        "(meta[relay.Constant][0], meta[relay.Constant][1], meta[relay.Constant][0])\n")


def test_types():
    x = relay.var("x", TupleType([TensorType((3,)), TensorType(())]))
    f = relay.var("f", FuncType([TensorType((1, 2), "int8")], TensorType((), "bool")))
    one = relay.var("o", TupleType([TensorType((2, 2), "float16")]))
    fn = relay.Function([x, f, one], relay.TupleGetItem(x, 1))
    assert pretty_print(fn) == (
        "fn (%x: (Tensor[(3), float32], float32), %f: fn (Tensor[(1, 2), int8]) -> bool, "
        "%o: (Tensor[(2, 2), float16],)) {\n  %x.1\n}")


def test_free_vars_tuples_and_dedup_names():
    a = relay.var("a", shape=(2,))
    a2 = relay.var("a", shape=(2,))
    digit = relay.var("0", "float32")
    expr = relay.Tuple([relay.Tuple([relay.add(a, a2)]), digit])
    assert pretty_print(expr) == (
        "free_var %a: Tensor[(2), float32];\n"
        "free_var %a1: Tensor[(2), float32];\n"
        "%0 = add(%a, %a1);\n"
        "%1 = (%0,);\n"
        "free_var %v0: float32;\n"
        "(%1, %v0)")


def test_let_if_and_nested_function_numbering():
    x = relay.var("x", shape=(2,))
    c = relay.var("c", "bool")
    y = relay.var("y")
    inner_p = relay.var("x", shape=(2,))
    inner = relay.Function([inner_p], relay.exp(relay.exp(inner_p)))
    body = relay.Let(y, inner(x), relay.If(c, relay.negative(y), relay.abs(y)))
    assert pretty_print(relay.Function([x, c], body)) == """\
fn (%x: Tensor[(2), float32], %c: bool) {
  %1 = fn (%x1: Tensor[(2), float32]) {
    %0 = exp(%x1);
    exp(%0)
  };
  let %y = %1(%x);
  if (%c) {
    negative(%y)
  } else {
    abs(%y)
  }
}"""


def test_let_as_an_argument_is_parenthesized():
    x = relay.var("x", shape=(2,))
    v = relay.var("v")
    let = relay.Let(v, relay.exp(x), relay.negative(v))
    assert pretty_print(relay.Function([x], relay.add(let, let))) == """\
fn (%x: Tensor[(2), float32]) {
  %0 = (
    let %v = exp(%x);
    negative(%v)
  );
  add(%0, %0)
}"""


def test_module_functions_sorted_names_continue_and_attrs():
    mod = IRModule()
    x = relay.var("x", shape=(2,))
    helper = GlobalVar("helper")
    mod[helper] = relay.Function([x], relay.clip(x, -1.0, 6.0),
                                 attrs={"Composite": "my.clip", "Primitive": 1})
    x2 = relay.var("x", shape=(2,))
    mod["main"] = relay.Function([x2], relay.cast(helper(x2), "int32"))
    assert str(mod) == """\
def @helper(%x: Tensor[(2), float32], Composite="my.clip", Primitive=1) {
  clip(%x, a_min=-1f, a_max=6f)
}

def @main(%x1: Tensor[(2), float32]) {
  %0 = @helper(%x1);
  cast(%0, dtype="int32")
}
"""


def test_astext_header_metadata_and_omitted_comment():
    x = relay.var("x", shape=(2,))
    mod = IRModule.from_expr(relay.Function([x], relay.add(x, relay.const(
        np.array([1.0, 2.0], "float32")))))
    program = "def @main(%x: Tensor[(2), float32]) {\n  add(%x, meta[relay.Constant][0])\n}\n"
    assert mod.astext() == (
        '#[version = "0.0.5"]\n' + program + "\n#[metadata]\n{\n  \"relay.Constant\": [\n"
        '    {"dtype": "float32", "shape": [2], "data": "AACAPwAAAEA="}\n  ]\n}')
    assert mod.astext(show_meta_data=False) == (
        '#[version = "0.0.5"]\n' + program + "\n"
        "/* For debugging purposes the metadata section has been omitted.\n"
        " * If you would like to see the full metadata section you can set the \n"
        " * option to `True` when invoking `astext`. \n"
        " */")
    assert str(mod) == program + "\n"
    plain = IRModule.from_expr(relay.Function([x], x))
    assert plain.astext() == (
        '#[version = "0.0.5"]\ndef @main(%x: Tensor[(2), float32]) {\n  %x\n}\n')
    assert astext(relay.const(1.0)) == '#[version = "0.0.5"]\n1f'


def test_checked_type_and_span_comments():
    x = relay.var("x", shape=(2,))
    call = relay.Call(relay.Op.get("exp"), [x], span=Span("model.onnx", 3, 7))
    fn = relay.Function([x], call)
    assert pretty_print(fn) == (
        "fn (%x: Tensor[(2), float32]) {\n  exp(%x) /* span=model.onnx:3:7 */\n}")
    typed_fn = typed(IRModule.from_expr(fn))["main"]
    assert str(typed_fn).splitlines()[1] == (
        "  exp(%x) /* ty=Tensor[(2), float32] span=model.onnx:3:7 */")
    fn_expr = relay.Function([x], relay.exp(x))
    for node in (x, fn_expr.body, fn_expr):
        node._set_checked_type(TensorType((2,)) if node is not fn_expr
                               else FuncType([TensorType((2,))], TensorType((2,))))
    assert pretty_print(fn_expr) == (
        "fn (%x: Tensor[(2), float32] /* ty=Tensor[(2), float32] */) {\n"
        "  exp(%x) /* ty=Tensor[(2), float32] */\n"
        "} /* ty=fn (Tensor[(2), float32]) -> Tensor[(2), float32] */")


def test_call_attrs_only_non_default():
    x = relay.var("x", shape=(1, 4))
    assert pretty_print(relay.nn.softmax(x)).endswith("nn.softmax(%x)")
    assert pretty_print(relay.nn.softmax(x, axis=0)).endswith("nn.softmax(%x, axis=0)")
    assert pretty_print(relay.nn.leaky_relu(x, alpha=0.1)).endswith(
        "nn.leaky_relu(%x, alpha=0.1f)")
    assert pretty_print(relay.Call(relay.Op.get("nn.relu"), [x], DictAttrs(
        {"note": 'say "hi"'}))).endswith('nn.relu(%x, note="say \\"hi\\"")')


def test_located_text_points_at_calls():
    x = relay.var("x", shape=(1, 3))
    inner = relay.exp(x)
    out = relay.add(inner, relay.const(2.0))
    text, where = pretty_print_located(relay.Function([x], out))
    lines = text.splitlines()
    line, start, end = where[inner]
    assert lines[line][start:end] == "exp(%x)"
    line, start, end = where[out]
    assert lines[line][start:end] == "add(%0, 2f)"
    line, start, end = where[x]
    assert lines[line][start:end] == "%x: Tensor[(1, 3), float32]"
    assert text == pretty_print(relay.Function([x], out))


def test_located_multiline_node_ends_with_its_first_line():
    x = relay.var("x", shape=(2,))
    fn = relay.Function([x], relay.exp(x))
    text, where = pretty_print_located(fn)
    assert where[fn] == (0, 0, len(text.splitlines()[0]))


def test_ten_thousand_op_chain_prints_without_recursion():
    x = relay.var("x", shape=(1,))
    out = x
    for _ in range(10000):
        out = relay.add(out, x)
    text = pretty_print(relay.Function([x], out))
    lines = text.splitlines()
    assert lines[1] == "  %0 = add(%x, %x);"
    assert lines[-2] == "  add(%9998, %x)"
    assert len(lines) == 10002
