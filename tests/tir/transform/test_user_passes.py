"""User-written TIR passes: ``tir.add_lower_pass`` in ``tvm.build`` and ``relay.build``,
``prim_func_pass`` (function and class forms), seed 000's ``add_custom_pass`` +
``ApplyCustomPass``, and the checks at the user pass's boundary. Effects are checked by
running the built code on random inputs."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relay, te, tir
from irlab.errors import IrlabError
from irlab.instrument import IRSnapshot
from irlab.ir.module import IRModule
from irlab.runtime.module import find_c_compiler
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.analysis import WellFormedError
from irlab.tir.functor import StmtExprMutator
from irlab.transform import PassContext


def scale_plus_one(n=64):
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0 + 1.0, name="B")
    return te.create_prim_func([A, B])


class _ReplaceFloat(StmtExprMutator):
    def __init__(self, old, new):
        super().__init__()
        self.old, self.new = old, new

    def visit_float_imm(self, e):
        return E.FloatImm(e.dtype, self.new) if e.value == self.old else e


class _DropMax(StmtExprMutator):
    """max(x, y) -> x: turns relu into the identity."""

    def visit_max(self, e):
        return self.visit_expr(e.a)


class _ShiftStores(StmtExprMutator):
    """Every store index i -> i + 1000: out of bounds."""

    def visit_buffer_store(self, s):
        return s.with_fields(indices=tuple(i + 1000 for i in s.indices))


@tvm.tir.transform.prim_func_pass(opt_level=0)
def two_to_three(func, mod, ctx):
    return func.with_body(_ReplaceFloat(2.0, 3.0).visit_stmt(func.body))


def _run(lib, n=64, seed=0):
    a = np.random.default_rng(seed).standard_normal(n).astype("float32")
    b = tvm.nd.array(np.zeros(n, "float32"))
    lib(tvm.nd.array(a), b)
    return a, b.numpy()


@pytest.mark.parametrize("phase", [0, 1, 2, 3])
def test_add_lower_pass_runs_in_build_at_every_phase(phase):
    with PassContext(config={"tir.add_lower_pass": [(phase, two_to_three)]}):
        lib = tvm.build(scale_plus_one(), target="llvm")
    a, b = _run(lib)
    np.testing.assert_allclose(b, a * 3.0 + 1.0, rtol=1e-6)
    a, b = _run(tvm.build(scale_plus_one(), target="llvm"))  # no pass, no cached mix-up
    np.testing.assert_allclose(b, a * 2.0 + 1.0, rtol=1e-6)


def test_add_lower_pass_order_and_instruments():
    seen = []

    def spy(tag):
        @tvm.tir.transform.prim_func_pass(opt_level=0, name=f"user.{tag}")
        def record(func, mod, ctx):
            seen.append((tag, any(isinstance(n, S.Block) for n in _stmts(func.body))))
            return func
        return record

    snap = IRSnapshot(track_counts=False)
    config = {"tir.add_lower_pass": [(3, spy("p3")), (1, spy("p1")), (0, spy("p0")),
                                     (7, spy("p7")), (2, spy("p2"))]}
    with PassContext(config=config, instruments=[snap]):
        tvm.build(scale_plus_one(), target="llvm")
    assert [t for t, _ in seen] == ["p0", "p1", "p2", "p3", "p7"]
    assert seen[0][1] and not seen[1][1]  # phase 0 sees blocks, phase 1 flat loops
    names = [r.name for r in snap.records]
    assert names.index("user.p0") < names.index("tir.LowerInitBlock")
    assert names.index("tir.FlattenBuffer") < names.index("user.p1") < names.index(
        "tir.VectorizeLoop")
    assert names.index("tir.UnrollLoop") < names.index("user.p2") < names.index("user.p3")
    assert names.index("tir.RemoveNoOp") < names.index("user.p3")


def _stmts(stmt):
    found = []
    tir.post_order_visit(stmt, found.append)
    return found


@pytest.mark.skipif(find_c_compiler() is None, reason="no C compiler")
def test_add_lower_pass_class_form_and_c_target():
    @tvm.tir.transform.prim_func_pass(opt_level=0)
    class Replace:
        def __init__(self, old, new):
            self.old, self.new = old, new

        def transform_function(self, func, mod, ctx):
            return func.with_body(_ReplaceFloat(self.old, self.new).visit_stmt(func.body))

    with PassContext(config={"tir.add_lower_pass": [(1, Replace(1.0, -5.0))]}):
        func = scale_plus_one().with_attr("global_symbol", "scale_plus_one")
        lib = tvm.build(func, target="c")
    a, b = _run(lib)
    np.testing.assert_allclose(b, a * 2.0 - 5.0, rtol=1e-6)


def test_add_lower_pass_in_relay_build():
    x = relay.var("x", shape=(4, 16), dtype="float32")
    func = relay.Function([x], relay.nn.relu(relay.multiply(x, relay.const(2.0))))
    mod = tvm.IRModule.from_expr(func)
    names = []

    @tvm.tir.transform.prim_func_pass(opt_level=0, name="user.DropMax")
    def drop_max(func, mod, ctx):
        names.append(func.attrs["global_symbol"])
        return func.with_body(_DropMax().visit_stmt(func.body))

    data = np.random.default_rng(1).standard_normal((4, 16)).astype("float32")
    outputs = {}
    for key, config in [("plain", {}), ("user", {"tir.add_lower_pass": [(1, drop_max)]})]:
        with PassContext(opt_level=3, config=config):
            factory = relay.build(mod, target="llvm")
        gmod = tvm.contrib.graph_executor.GraphModule(factory["default"](tvm.cpu()))
        gmod.set_input("x", data)
        gmod.run()
        outputs[key] = gmod.get_output(0).numpy()
    np.testing.assert_allclose(outputs["plain"], np.maximum(data * 2, 0), rtol=1e-6)
    np.testing.assert_allclose(outputs["user"], data * 2, rtol=1e-6)  # relu dropped
    assert names and all("relu" in n or "multiply" in n for n in names)


# -- bad input ----------------------------------------------------------------------------
def test_add_lower_pass_refuses_bad_entries():
    for bad, words in [([(1, lambda f, m, c: f)], "not a pass"), ([(-1, two_to_three)], ">= 0"),
                       ([two_to_three], "(phase, pass)"), (two_to_three, "list")]:
        with PassContext(config={"tir.add_lower_pass": bad}):
            with pytest.raises(IrlabError, match="tir.add_lower_pass") as info:
                tvm.build(scale_plus_one(), target="llvm")
        assert words in str(info.value)


def test_user_pass_returning_non_primfunc_is_named():
    @tvm.tir.transform.prim_func_pass(opt_level=0, name="user.ReturnsBody")
    def returns_body(func, mod, ctx):
        return func.body

    with PassContext(config={"tir.add_lower_pass": [(1, returns_body)]}):
        with pytest.raises(IrlabError, match="user.ReturnsBody.*not a PrimFunc"):
            tvm.build(scale_plus_one(), target="llvm")


def test_user_pass_breaking_well_formedness_is_named():
    @tvm.tir.transform.prim_func_pass(opt_level=0, name="user.ShiftStores")
    def shift(func, mod, ctx):
        return func.with_body(_ShiftStores().visit_stmt(func.body))

    with PassContext(config={"tir.add_lower_pass": [(1, shift)]}):
        with pytest.raises(WellFormedError, match="pass user.ShiftStores left @.* not well"):
            tvm.build(scale_plus_one(), target="llvm")


# -- seed 000's spelling: add_custom_pass + ApplyCustomPass ---------------------------------
@pytest.fixture
def clean_default_context():
    PassContext.current().custom_passes.clear()
    yield
    PassContext.current().custom_passes.clear()


def _lowered():
    return tvm.lower(scale_plus_one())


def test_custom_pass_registered_outside_applies_inside(clean_default_context):
    def two_to_five(stmt):
        return _ReplaceFloat(2.0, 5.0).visit_stmt(stmt)

    tir.transform.PassContext.current().add_custom_pass(two_to_five, "tir.custom_pass")
    tir.transform.PassContext.current().add_custom_pass(two_to_five, "tir.custom_pass")
    mod = _lowered()
    snap = IRSnapshot(track_counts=False)
    with tvm.transform.PassContext(opt_level=3, instruments=[snap]):
        mod = tir.transform.ApplyCustomPass()(mod)
    assert [r.name for r in snap.records] == ["tir.ApplyCustomPass", "tir.custom_pass"]
    a, b = _run(tvm.build(mod, target="llvm"))
    np.testing.assert_allclose(b, a * 5.0 + 1.0, rtol=1e-6)


def test_custom_passes_run_in_order_and_inner_scope_shadows(clean_default_context):
    ctx = PassContext.current()
    ctx.add_custom_pass(lambda s: _ReplaceFloat(2.0, 4.0).visit_stmt(s), "first")
    ctx.add_custom_pass(lambda s: _ReplaceFloat(4.0, 6.0).visit_stmt(s), "second")
    a, b = _run(tvm.build(tir.transform.ApplyCustomPass()(_lowered()), target="llvm"))
    np.testing.assert_allclose(b, a * 6.0 + 1.0, rtol=1e-6)
    with PassContext() as inner:
        inner.add_custom_pass(lambda s: s, "second")
        a, b = _run(tvm.build(tir.transform.ApplyCustomPass()(_lowered()), target="llvm"))
        np.testing.assert_allclose(b, a * 4.0 + 1.0, rtol=1e-6)
        mod = tir.transform.ApplyCustomPass(["second"])(_lowered())
        assert mod.script() == _lowered().script()
    assert list(PassContext.visible_custom_passes()) == ["first", "second"]


def test_custom_pass_bad_results_are_named(clean_default_context):
    ctx = PassContext.current()
    ctx.add_custom_pass(lambda stmt: None, "tir.returns_none")
    with pytest.raises(IrlabError, match="tir.returns_none returned NoneType.*not a tir.Stmt"):
        tir.transform.ApplyCustomPass()(_lowered())
    ctx.custom_passes.clear()
    ctx.add_custom_pass(lambda stmt: _ShiftStores().visit_stmt(stmt), "tir.shift")
    with pytest.raises(WellFormedError, match="pass tir.shift left @"):
        tir.transform.ApplyCustomPass()(_lowered())
    with pytest.raises(IrlabError, match="no custom pass named 'nope'"):
        tir.transform.ApplyCustomPass(["nope"])(_lowered())
    with pytest.raises(IrlabError, match="must be given a function"):
        ctx.add_custom_pass("not callable", "x")


def test_prim_func_pass_applied_directly_checks_its_result():
    @tvm.tir.transform.prim_func_pass(opt_level=0, name="user.DirectShift")
    def shift(func, mod, ctx):
        return func.with_body(_ShiftStores().visit_stmt(func.body))

    with pytest.raises(WellFormedError, match="pass user.DirectShift left @main not well"):
        shift(_lowered())


def test_user_passes_are_steps_of_a_pass_trace():
    from irlab.tir.transform.pipeline import lowering_passes
    from irlab.transform import Sequential
    from irlab.viz.pass_trace import PassTrace

    config = {"tir.add_lower_pass": [(1, two_to_three)]}
    passes = [Sequential(lowering_passes(PassContext(config=config)), name="tir.lower")]
    trace = PassTrace(IRModule({"main": scale_plus_one()}), passes, config=config)
    names = [step.name for step in trace.steps]
    assert trace.error is None
    assert names.index("tir.FlattenBuffer") < names.index("two_to_three") < names.index(
        "tir.VectorizeLoop")
    step = trace.steps[names.index("two_to_three")]
    assert step.changed and "T.float32(3)" in step.module.script()
