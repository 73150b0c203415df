"""ExprFunctor / ExprVisitor / ExprMutator: dispatch, memoization, copy-on-write, depth."""

import pytest

from irlab import relay
from irlab.relay.expr_functor import ExprFunctor, ExprMutator, ExprVisitor


def _diamond():
    x = relay.var("x", shape=(2,))
    shared = relay.exp(x)
    return x, shared, relay.Function([x], relay.add(shared, relay.negative(shared)))


def test_visitor_visits_shared_nodes_once():
    class CountCalls(ExprVisitor):
        def __init__(self):
            super().__init__()
            self.names = []

        def visit_call(self, call):
            self.names.append(call.op.name)
            super().visit_call(call)

    _, _, fn = _diamond()
    v = CountCalls()
    v.visit(fn)
    assert sorted(v.names) == ["add", "exp", "negative"]


def test_dispatch_uses_subclass_overrides_and_rejects_unknown():
    class Kinds(ExprFunctor):
        def visit_var(self, v):
            return "var"

        def visit_constant(self, c):
            return "const"

    k = Kinds()
    assert k.visit(relay.var("x")) == "var" and k.visit(relay.const(1)) == "const"
    with pytest.raises(NotImplementedError):
        k.visit(relay.Tuple([]))
    with pytest.raises(Exception, match="not a Relay expression"):
        k.visit(3)


def test_mutator_copy_on_write_and_sharing_preserved():
    x, shared, fn = _diamond()
    assert ExprMutator().visit(fn) is fn  # nothing changed

    class ExpToSqrt(ExprMutator):
        def visit_call(self, call):
            new = super().visit_call(call)
            if new.op.name == "exp":
                return relay.sqrt(new.args[0])
            return new

    out = ExpToSqrt().visit(fn)
    assert out is not fn and out.attrs == fn.attrs
    add = out.body
    assert add.args[0] is add.args[1].args[0]  # still shared after rewriting
    assert add.args[0].op.name == "sqrt"


def test_mutator_keeps_function_attrs_and_tuple_getitem():
    x = relay.var("x", shape=(2,))
    t = relay.Tuple([x, x])
    g = relay.TupleGetItem(t, 0)
    fn = relay.Function([x], g).with_attr("Primitive", 1)
    out = ExprMutator().visit(fn)
    assert out is fn and out.get_attr("Primitive") == 1


def test_deep_chain_visit_and_mutate():
    x = relay.var("x", shape=(1,))
    e = x
    for _ in range(10000):
        e = relay.exp(e)
    fn = relay.Function([x], e)

    class Count(ExprVisitor):
        n = 0

        def visit_call(self, call):
            Count.n += 1
            super().visit_call(call)

    Count().visit(fn)
    assert Count.n == 10000

    class ExpToNeg(ExprMutator):
        def visit_call(self, call):
            new = super().visit_call(call)
            return relay.negative(new.args[0])

    out = ExpToNeg().visit(fn)
    assert relay.analysis.count_ops(out) == {"negative": 10000}


def test_deep_let_chain():
    x = relay.var("x", shape=(1,))
    bindings = []
    prev = x
    for i in range(5000):
        v = relay.var(f"v{i}")
        bindings.append((v, relay.exp(prev)))
        prev = v
    body = prev
    for v, value in reversed(bindings):
        body = relay.Let(v, value, body)
    fn = relay.Function([x], body)
    ExprVisitor().visit(fn)
    assert ExprMutator().visit(fn) is fn
