"""Algebraic data types, pattern matching, polymorphic functions and references: built,
printed and parsed back, type-checked, and run by the reference interpreter."""

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.errors import IrlabError, ParseError, RelayTypeError
from irlab.relay.transform import InferType, InferTypeLocal

LIST_TEXT = """
#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}
"""

SUM_TEXT = LIST_TEXT + """
def @sum(%xs: List[float32]) -> float32 {
  match (%xs) {
    Cons(%h, %t) => %h + @sum(%t),
    Nil => 0f,
  }
}
def @main(%a: float32, %b: float32) -> float32 {
  @sum(Cons(%a, Cons(%b, Nil)))
}
"""


def list_module():
    """``List[A]`` built with the Python API."""
    mod = irlab.IRModule()
    lst = relay.GlobalTypeVar("List")
    a = relay.TypeVar("A")
    cons = relay.Constructor("Cons", [a, lst(a)], lst)
    nil = relay.Constructor("Nil", [], lst)
    mod[lst] = relay.TypeData(lst, [a], [cons, nil])
    return mod, lst, cons, nil


def run(mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args)


def test_type_data_lives_in_the_module_and_parses_from_text():
    mod, lst, cons, nil = list_module()
    assert mod.get_global_type_var("List") == lst
    assert mod.get_constructor("Nil") is nil and (cons.tag, nil.tag) == (0, 1)
    (gtv, data), = mod.type_definitions.items()
    assert gtv is lst and data.constructors == (cons, nil)
    irlab.ir.assert_structural_equal(relay.parse(LIST_TEXT), mod)


def test_match_sums_a_list_in_the_interpreter():
    mod = relay.parse(SUM_TEXT)
    out = run(mod, np.float32(1.5), np.float32(4.0))
    np.testing.assert_allclose(out.numpy(), 5.5)


def test_printed_module_parses_back_equal():
    mod = relay.parse(SUM_TEXT)
    text = mod.astext()
    assert "match (%xs) {" in text and "type List[A] {" in text
    irlab.ir.assert_structural_equal(relay.parse(text), mod)


def test_constructor_values_come_out_of_the_interpreter():
    mod, lst, cons, nil = list_module()
    x = relay.var("x", shape=(2,))
    mod["main"] = relay.Function([x], cons(x, nil()))
    out = run(mod, np.array([1, 2], dtype="float32"))
    assert out.constructor.name_hint == "Cons" and out.fields[1].constructor is nil
    np.testing.assert_array_equal(out.fields[0].numpy(), [1, 2])


def test_match_binds_tuple_patterns_and_wildcards():
    x, y = relay.var("x", "int32"), relay.var("y", "int32")
    a, b = relay.var("a"), relay.var("b")
    match = relay.Match(relay.Tuple([x, y]), [
        relay.Clause(relay.PatternTuple([relay.PatternVar(a), relay.PatternWildcard()]),
                     a - relay.const(1)),
    ])
    assert relay.analysis.free_vars(match) == [x, y]  # pattern variables are bound
    mod = irlab.IRModule.from_expr(match)
    assert run(mod, np.int32(7), np.int32(3)).numpy() == 6
    assert InferType()(mod)["main"].ret_type == relay.scalar_type("int32")


def test_polymorphic_function_is_instantiated_at_each_call():
    t = relay.TypeVar("T")
    p = relay.Var("p", t)
    ident = relay.Function([p], p, t, [t])
    f = relay.Var("f")
    body = relay.Let(f, ident, relay.Tuple([f(relay.const(1)), f(relay.const(2.0))]))
    InferTypeLocal(body)
    assert body.checked_type == relay.TupleType([relay.scalar_type("int32"),
                                                 relay.scalar_type("float32")])
    out = run(irlab.IRModule.from_expr(body))
    assert out[0].numpy() == 1 and out[1].numpy() == 2.0


def test_polymorphic_global_call_records_its_type_arguments():
    mod = relay.parse("""
    #[version = "0.0.5"]
    def @id[A](%x: A) -> A { %x }
    def @main(%f: float32) -> float32 { @id(%f) }
    """)
    assert list(mod["main"].body.type_args) == [relay.scalar_type("float32")]
    c = relay.TypeVar("C")
    assert mod["id"].checked_type == relay.FuncType([c], c, [c])
    a, b = relay.TypeVar("a"), relay.TypeVar("b")
    # types over type variables compare structurally, the bound variables mapped
    assert relay.FuncType([a], a, [a]) == relay.FuncType([b], b, [b])
    assert relay.FuncType([a], a, [a]) != relay.FuncType([b], a, [b])
    assert hash(relay.FuncType([a], a, [a])) == hash(relay.FuncType([b], b, [b]))


def test_calling_an_unannotated_parameter_infers_its_function_type():
    tt = relay.scalar_type("int32")
    x, f = relay.var("x", tt), relay.var("f")
    fn = relay.Function([x, f], f(x), tt)
    InferTypeLocal(fn)
    assert fn.checked_type == relay.FuncType([tt, relay.FuncType([tt], tt)], tt)


def test_references_read_what_was_written():
    mod = relay.parse("""
    #[version = "0.0.5"]
    def @main(%a: float32) -> float32 {
      let %r = ref(%a);
      let %u = ref_write(%r, ref_read(%r) * 3f);
      ref_read(%r)
    }
    """)
    assert "ref_write(" in mod.astext()
    assert run(mod, np.float32(2)).numpy() == 6
    r = relay.RefCreate(relay.var("x", "float32"))
    InferTypeLocal(r)
    assert r.checked_type == relay.RefType(relay.scalar_type("float32"))


def test_errors_name_what_is_wrong():
    mod, lst, cons, nil = list_module()
    with pytest.raises(IrlabError, match="takes 2 fields"):
        relay.PatternConstructor(cons, [relay.PatternWildcard()])
    with pytest.raises(ParseError, match="defined twice"):
        relay.parse("type A { X }\ntype B { X }")
    x = relay.var("x", shape=(2,))
    bad = irlab.IRModule()
    bad["main"] = relay.Function([x], cons(x, nil()))  # List is not defined in `bad`
    with pytest.raises(RelayTypeError, match="List is not defined"):
        InferType()(bad)
    mod["main"] = relay.Function([x], cons(x, x))
    with pytest.raises(RelayTypeError):
        InferType()(mod)
