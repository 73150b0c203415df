"""The Relay text parser: every construct the printer writes, and clear errors."""

import numpy as np
import pytest

import irlab.relay as relay
from irlab import parser as irlab_parser
from irlab.errors import IrlabError, ParseError
from irlab.ir import (FuncType, GlobalVar, IncompleteType, IRModule, TensorType, TupleType,
                      structural_equal)
from irlab.relay.parser import parse, parse_expr
from irlab.ir import structural_equal as irlab_structural_equal


def body_of(text):
    return parse_expr(text).body


def test_entry_points_are_wired():
    assert irlab_parser.parse is parse and irlab_parser.parse_expr is parse_expr
    assert relay.fromtext is parse
    assert relay.parse_expr is parse_expr


@pytest.mark.parametrize("text, value, dtype", [
    ("1f", 1.0, "float32"), ("1", 1, "int32"), ("1i64", 1, "int64"), ("1f64", 1.0, "float64"),
    ("1f16", 1.0, "float16"), ("True", True, "bool"), ("False", False, "bool"),
    ("-3i16", -3, "int16"), ("-2.5f", -2.5, "float32"), ("1e-05f", 1e-05, "float32"),
    ("1.234567e+06f", 1234567.0, "float32"), ("0.5", 0.5, "float32"),
    ("3000000000", 3000000000, "int64"), ("inff", np.inf, "float32"),
    ("-inff", -np.inf, "float32"), ("5i8", 5, "int8"),
])
def test_scalar_literals(text, value, dtype):
    const = parse_expr(text)
    assert isinstance(const, relay.Constant)
    assert const.data.dtype == dtype and const.data.ndim == 0
    assert const.data.numpy()[()] == np.array(value, dtype=dtype)


def test_nan_literal():
    assert np.isnan(parse_expr("nanf").data.numpy())


@pytest.mark.parametrize("text, ty", [
    ("Tensor[(1, 3), float32]", TensorType((1, 3))),
    ("Tensor[(3), float32]", TensorType((3,))),
    ("Tensor[(3,), int8]", TensorType((3,), "int8")),
    ("Tensor[(), bool]", TensorType((), "bool")),
    ("float16", TensorType((), "float16")),
    ("(Tensor[(2), float32], int64)", TupleType([TensorType((2,)), TensorType((), "int64")])),
    ("(float32,)", TupleType([TensorType(())])),
    ("()", TupleType([])),
    ("fn (Tensor[(1), float32], bool) -> (float32, float32)",
     FuncType([TensorType((1,)), TensorType((), "bool")],
              TupleType([TensorType(()), TensorType(())]))),
])
def test_types(text, ty):
    fn = parse_expr(f"fn (%x: {text}) {{ %x }}")
    assert fn.params[0].type_annotation == ty


def test_incomplete_type_and_missing_annotations():
    fn = parse_expr("fn (%x: _, %y) { %y }")
    assert isinstance(fn.params[0].type_annotation, IncompleteType)
    assert fn.params[1].type_annotation is None and fn.ret_type is None and fn.attrs is None


def test_module_with_comments_version_and_globals():
    mod = parse("""#[version = "0.0.5"]
// a line comment
def @main(%x: Tensor[(2), float32] /* ty=Tensor[(2), float32] */) -> Tensor[(2), float32] {
  %0 = @helper(%x) /* nested /* comments */ are skipped */;
  negative(%0)
}

def @helper(%y: Tensor[(2), float32], Primitive=1, Composite="a.b") {
  exp(%y)
}
""")
    main, helper = mod["main"], mod["helper"]
    gv = main.body.args[0].op
    assert isinstance(gv, GlobalVar) and gv is mod.get_global_var("helper")
    assert main.ret_type == TensorType((2,))
    assert helper.attrs.as_dict() == {"Primitive": 1, "Composite": "a.b"}


def test_call_attrs_use_the_op_attrs_type():
    conv = body_of("fn (%x: Tensor[(1, 1, 4, 4), float32], %w: Tensor[(1, 1, 3, 3), float32]) "
                   "{ nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], channels=1, "
                   "kernel_size=[3, 3], out_dtype=\"float32\") }")
    attrs = conv.attrs
    assert type(attrs).__name__ == "Conv2DAttrs"
    assert attrs.strides == (2, 2) and attrs.padding == (1, 1, 1, 1)
    assert attrs.kernel_size == (3, 3) and attrs.out_dtype == "float32"
    clip = body_of("fn (%x: float32) { clip(%x, a_min=0, a_max=6f) }")
    assert clip.attrs.a_min == 0.0 and isinstance(clip.attrs.a_min, float)
    # No attrs written: the op's attrs type with its defaults (as TVM's parser does).
    assert type(body_of("fn (%x: float32) { nn.softmax(%x) }").attrs).__name__ == \
        "SoftmaxAttrs"
    assert body_of("fn (%x: float32) { exp(%x) }").attrs is None


def test_let_if_tuples_and_getitem():
    fn = parse_expr("""fn (%x: float32, %c: bool) {
  let %y: float32 = exp(%x);
  let %z = (%y, %x,);
  if (%c) { %z.1 } else { (%y,).0 }
}""")
    let = fn.body
    assert isinstance(let, relay.Let) and let.var.type_annotation == TensorType(())
    inner = let.body
    assert isinstance(inner.value, relay.Tuple) and len(inner.value.fields) == 2
    ite = inner.body
    assert isinstance(ite, relay.If) and ite.cond is fn.params[1]
    assert ite.true_branch.tuple_value is inner.var and ite.true_branch.index == 1
    assert ite.false_branch.tuple_value.fields[0] is let.var
    assert parse_expr("()").fields == ()


def test_graph_bindings_are_shared():
    fn = parse_expr("fn (%x: float32) {\n  %0 = exp(%x);\n  %1 = add(%0, %0);\n"
                    "  multiply(%1, %0)\n}")
    assert fn.body.args[0].args[0] is fn.body.args[0].args[1] is fn.body.args[1]


def test_free_vars_and_scopes():
    expr = parse_expr("free_var %a: Tensor[(2), float32];\nfree_var %b;\nadd(%a, %b)")
    a, b = expr.args
    assert a.name_hint == "a" and a.type_annotation == TensorType((2,))
    assert b.type_annotation is None
    # A let variable shadows only inside its body; fn params are local to the fn.
    fn = parse_expr("fn (%x: float32) { let %x = exp(%x); %x }")
    assert fn.body.value.args[0] is fn.body.var  # bound before its value, as in TVM
    assert fn.body.body is fn.body.var


def test_fn_literal_call_and_attrs():
    fn = parse_expr("""fn (%x: float32) {
  %0 = fn (%p0: float32, Primitive=1) -> float32 {
    negative(%p0)
  };
  %0(%x)
}""")
    call = fn.body
    assert isinstance(call.op, relay.Function) and call.op.attrs["Primitive"] == 1
    assert call.args[0] is fn.params[0]


def test_metadata_section_and_init_meta_table():
    x = relay.var("x", shape=(2,))
    data = np.array([1.5, -2.0], "float32")
    mod = IRModule.from_expr(relay.Function([x], relay.add(x, relay.const(data))))
    parsed = parse(mod.astext())
    assert np.array_equal(parsed["main"].body.args[1].data.numpy(), data)
    text = str(mod)  # no metadata section: give the table instead
    const = relay.const(data)
    parsed = parse(text, init_meta_table={"relay.Constant": [const]})
    assert parsed["main"].body.args[1] is const


def test_meta_references_are_shared_and_dtypes_exact():
    for dtype in ("float32", "int8", "uint8", "bool", "float16", "int64"):
        data = (np.arange(6).reshape(2, 3) % 2).astype(dtype)
        c = relay.const(data, dtype)
        tup = relay.Tuple([c, c])
        parsed = parse_expr(relay.astext(tup))
        assert parsed.fields[0] is parsed.fields[1]
        assert parsed.fields[0].data.dtype == dtype
        assert np.array_equal(parsed.fields[0].data.numpy(), data)


def test_init_module_provides_globals():
    base = IRModule()
    helper = GlobalVar("helper")
    p = relay.var("p", "float32")
    base[helper] = relay.Function([p], relay.negative(p))
    mod = parse("def @main(%x: float32) { @helper(%x) }", init_module=base)
    assert mod["main"].body.op is helper
    # parse type-checks the result (as TVM's parser does): @helper comes back typed
    assert mod["helper"].ret_type == TensorType((), "float32")
    assert base["helper"].ret_type is None
    assert "main" not in base  # the initial module is not changed


def test_parse_type_checks_the_module():
    mod = parse("def @main(%z: int32) { let %x = 1; add(%x, %x) }")
    func = mod["main"]
    assert func.ret_type == TensorType((), "int32")
    assert func.body.var.type_annotation == TensorType((), "int32")
    built = relay.Function([relay.var("z", "int32")], relay.const(1))
    expected = relay.transform.InferType()(IRModule.from_expr(built))["main"]
    assert parse("def @main(%z: int32) { 1 }")["main"].ret_type == expected.ret_type
    with pytest.raises(IrlabError):
        parse("def @main(%x: float32, %y: int32) { add(%x, %y) }")


def test_bare_expression_becomes_main():
    mod = parse("free_var %x: float32;\nexp(%x)")
    assert structural_equal(mod["main"].body.op, relay.Op.get("exp"))


def test_forward_reference_from_tvm_printer_is_read_ahead():
    # TVM's printer can use %0 before the binding it printed inside an if branch.
    fn = parse_expr("""fn (%x: Tensor[(1), float32], %cond: bool) {
  %1 = (%0,);
  %2 = if (%cond) {
    %0 = exp(%x);
    exp(%0)
  } else {
    exp(%0)
  };
  %3 = %1.0;
  (%2, %3)
}""")
    ite, getitem = fn.body.fields
    shared = getitem.tuple_value.fields[0]
    assert ite.true_branch.args[0] is shared and ite.false_branch.args[0] is shared


def test_long_let_chain_and_binding_sequence():
    lines = ["fn (%x: float32) {"] + [f"  let %v{i} = add(%x, %x);" for i in range(5000)]
    lines += [f"  %{i} = exp(%v{i});" for i in range(5000)] + ["  %4999", "}"]
    fn = parse_expr("\n".join(lines))
    node, depth = fn.body, 0
    while isinstance(node, relay.Let):
        node, depth = node.body, depth + 1
    assert depth == 5000 and node.op.name == "exp"


# ---------------------------------------------------------------------------------------------
# errors
def error_of(text, entry=parse_expr):
    with pytest.raises(ParseError) as info:
        entry(text)
    return str(info.value)


def test_error_expected_paren_with_caret():
    message = error_of("def @main(%x: float32) {\n%0 = add(%x, %x);\n%1 = add(%0, , %x);\n"
                       "%1\n}", parse)
    assert message == ("from_string:3:14: expected ')' but got ','\n"
                       "  %1 = add(%0, , %x);\n"
                       "               ^")


@pytest.mark.parametrize("text, message, caret_col", [
    ("fn (%x: float32) {\n  foo(%x)\n}", "2:3: unknown operator 'foo'", 3),
    ("fn (%x: float32) {\n  nn.softmax(%x, axiz=1)\n}",
     "2:18: operator 'nn.softmax' has no attribute 'axiz' (attributes: axis)", 18),
    ("fn (%x: float32) {\n  add(%x, %y)\n}", "2:11: undefined variable '%y'", 11),
    ("fn (%x: float32) {\n  add(%x, %7)\n}", "2:11: '%7' is not defined", 11),
    ("fn (%x: float32) {\n  %0 = add(%0, %x);\n  %0\n}",
     "2:12: '%0' is used before it is defined", 12),
    ("fn (%x: float32) {\n  exp(%x, axis=1)\n}", "2:11: operator 'exp' takes no attributes",
     11),
    ("fn (%x: float32) {\n  cast(%x, dtype=1f)\n}",
     "2:12: attribute 'dtype' of 'cast' expects a string, got 1.0", 12),
    ("fn (%x: floaty) { %x }", "1:9: unknown type 'floaty'", 9),
    ("fn (%x: float32) { add(%x, 1x) }", "1:28: invalid number '1x'", 28),
    ("fn (%x: float32) { $ }", "1:20: unexpected character '$'", 20),
    ("fn (%x: float32) { /* open", "1:20: unterminated comment", 20),
    ("fn (%x: float32) { 1 } 2", "1:24: expected end of input but got '2'", 24),
    ("fn (%x: float32) { exp(%x) ", "1:27: expected '}' but got end of input", 27),
    ("fn (%x: float32) { meta[relay.Constant][0] }",
     "1:20: no metadata entries for 'relay.Constant'", 20),
])
def test_errors_point_at_the_offending_token(text, message, caret_col):
    got = error_of(text)
    head, line, caret = got.split("\n")
    assert head.startswith("from_string:" + message)
    assert caret == " " * (caret_col + 1) + "^"
    assert line == "  " + text.split("\n")[int(message.split(":")[0]) - 1]


def test_error_attributes_and_source_name():
    with pytest.raises(ParseError) as info:
        parse("def @f() { 1 }\ndef @f() { 2 }", source_name="net.relay")
    assert str(info.value).startswith("net.relay:2:5: @f is defined twice")
    assert (info.value.line, info.value.column) == (2, 5)


def test_error_bad_metadata():
    message = error_of("fn () { 1 }\n#[metadata]\n{not json")
    assert message.startswith("from_string:2:1: invalid metadata section")
    message = error_of("meta[relay.Constant][3]\n#[metadata]\n{\"relay.Constant\": []}")
    assert "meta[relay.Constant][3] is out of range" in message


def test_infix_operators_follow_precedence_and_left_associativity():
    """TVM's text format: ``* /`` bind tighter than ``+ -``, then comparisons, then ``== !=``;
    a ``-`` right after an operand is subtraction (``%n -1``), else a sign."""
    from irlab import relay as _relay
    from irlab.ir import assert_structural_equal

    mod = _relay.parse('#[version = "0.0.5"]\ndef @main(%n: int, %x: float) {\n'
                       '  (%n - 1 * 2 + 3, %x / 2f == %x, %n -1, -1)\n}')
    n, x = mod["main"].params
    assert n.type_annotation == _relay.TensorType((), "int32")
    assert x.type_annotation == _relay.TensorType((), "float32")
    one, two, three = (_relay.const(v) for v in (1, 2, 3))
    expected = _relay.Tuple([
        _relay.add(_relay.subtract(n, _relay.multiply(one, two)), three),
        _relay.equal(_relay.divide(x, _relay.const(2.0)), x),
        _relay.subtract(n, one), _relay.const(-1)])
    assert_structural_equal(mod["main"].body, expected, map_free_vars=True)


def test_unary_minus_and_parse_errors_are_diagnostics():
    from irlab.errors import DiagnosticError

    assert int(parse_expr("--10").data.numpy()) == 10
    assert int(parse_expr("---10").data.numpy()) == -10
    neg = parse_expr("free_var %x: float32;\n-%x")
    assert neg.op.name == "negative"
    with pytest.raises(DiagnosticError, match="does not fit in int32"):
        parse_expr("2147483648i32")


def test_sequence_is_a_let_of_underscore_and_empty_tuples_are_not_shared():
    """``e; rest`` parses as ``let %_ = e; rest`` (TVM's text format), and the empty tuple is
    a constant for structural equality: one ``()`` used twice equals two ``()``s."""
    from irlab.ir import assert_structural_equal

    parsed = parse_expr("(); ()")
    assert isinstance(parsed, relay.Let) and parsed.var.name_hint == "_"
    unit = relay.Tuple([])
    assert_structural_equal(parsed, relay.Let(relay.var("_"), unit, unit), map_free_vars=True)
    x = relay.var("x")
    pair = relay.Tuple([x])
    shared = relay.Let(relay.var("_"), pair, pair)
    unshared = relay.Let(relay.var("_"), relay.Tuple([x]), relay.Tuple([x]))
    assert not irlab_structural_equal(shared, unshared, map_free_vars=True)
    nested = parse_expr("fn (%a) { %a; (%a, %a) }")
    assert isinstance(nested.body, relay.Let) and isinstance(nested.body.body, relay.Tuple)


def test_global_var_prints_and_parses_back():
    gv = GlobalVar("foo")
    parsed = parse_expr(gv.astext())
    assert isinstance(parsed, GlobalVar) and parsed.name_hint == "foo"
