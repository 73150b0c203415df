"""NaN in compiled max/min/relu/clip, reductions and pooling: propagated as numpy does
(``np.maximum`` / ``np.minimum`` / ``np.max`` / ``np.argmax``) on the LLVM and C targets, in the
TIR interpreter and in constant folding (issue 20, finding 4)."""

import numpy as np
import pytest

import irlab
from irlab import relay, te
from irlab.contrib import graph_executor
from irlab.runtime.module import find_c_compiler
from irlab.tir import op as O
from irlab.tir.interpreter import run

TARGETS = ["llvm", pytest.param("c", marks=pytest.mark.skipif(
    find_c_compiler() is None, reason="no C compiler"))]
NAN = float("nan")
# NaN first, NaN second, NaN in both, and ordinary numbers around the constants used below
X = np.array([NAN, 1, -2, 3, NAN, -0.5, 2, 0, NAN, 7, -7, 0.25, 5, NAN, -1, 1.5], "float32")
Y = np.array([0, NAN, 1, NAN, NAN, 0.5, -3, 2, 4, 1, NAN, -0.25, 6, 2, -1, NAN], "float32")


def _elementwise(fn, n_inputs):
    tensors = [te.placeholder((16,), name=f"A{k}") for k in range(n_inputs)]
    out = te.compute((16,), lambda i: fn(*[t[i] for t in tensors]), name="B")
    return te.create_prim_func([*tensors, out])


def _build(func, target):
    return irlab.build(func.with_attr("global_symbol", "f"), target=target)


def _zero():
    return O.const(0.0, "float32")


ELEMENTWISE = {
    "max(x, 0)": (lambda x: O.max(x, _zero()), lambda x: np.maximum(x, 0)),
    "max(0, x)": (lambda x: O.max(_zero(), x), lambda x: np.maximum(0, x)),
    "min(x, 0)": (lambda x: O.min(x, _zero()), lambda x: np.minimum(x, 0)),
    "min(0, x)": (lambda x: O.min(_zero(), x), lambda x: np.minimum(0, x)),
    "max(x, y)": (lambda x, y: O.max(x, y), np.maximum),
    "min(x, y)": (lambda x, y: O.min(x, y), np.minimum),
    "max(y, x)": (lambda x, y: O.max(y, x), lambda x, y: np.maximum(y, x)),
}


def _inputs(n_inputs):
    return [X.copy(), Y.copy()][:n_inputs]


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
@pytest.mark.parametrize("target", TARGETS)
def test_elementwise_min_max_propagate_nan(name, target):
    fn, ref = ELEMENTWISE[name]
    n_inputs = fn.__code__.co_argcount
    func = _elementwise(fn, n_inputs)
    args = _inputs(n_inputs)
    expected = ref(*args)
    out = np.zeros(16, "float32")
    _build(func, target)(*args, out)
    np.testing.assert_array_equal(out, expected)
    interpreted = np.zeros(16, "float32")
    run(func, *args, interpreted)
    np.testing.assert_array_equal(interpreted, expected)


@pytest.mark.parametrize("target", TARGETS)
def test_vectorized_relu_propagates_nan(target):
    """The vector path (a ``vectorize`` loop: LLVM vector select; C lanes) keeps NaN too."""
    a = te.placeholder((64,), name="A")
    b = te.compute((64,), lambda i: O.max(a[i], _zero()), name="B")
    func = te.create_prim_func([a, b])
    sch = irlab.tir.Schedule(func)
    (i,) = sch.get_loops(sch.get_block("B"))
    _, inner = sch.split(i, [None, 16])
    sch.vectorize(inner)
    x = np.tile(X, 4)
    out = np.zeros(64, "float32")
    _build(sch.mod["main"], target)(x, out)
    np.testing.assert_array_equal(out, np.maximum(x, 0))


def _run_relay(expr, inputs, target, opt_level=3):
    mod = irlab.IRModule.from_expr(relay.Function(relay.analysis.free_vars(expr), expr))
    with irlab.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, target=target)
    gm = graph_executor.GraphModule(lib["default"](irlab.cpu()))
    for name, value in inputs.items():
        gm.set_input(name, value)
    gm.run()
    return gm.get_output(0).numpy()


RELAY_OPS = {
    "relu": (relay.nn.relu, lambda x: np.maximum(x, 0)),
    "clip": (lambda x: relay.clip(x, -1.0, 1.0), lambda x: np.clip(x, -1.0, 1.0)),
    "max": (lambda x: relay.max(x, axis=1), lambda x: np.max(x, axis=1)),
    "min": (lambda x: relay.min(x, axis=1), lambda x: np.min(x, axis=1)),
    "argmax": (lambda x: relay.argmax(x, axis=1), lambda x: np.argmax(x, axis=1)),
    "argmin": (lambda x: relay.argmin(x, axis=1), lambda x: np.argmin(x, axis=1)),
    "max_pool2d": (lambda x: relay.nn.max_pool2d(relay.reshape(x, (1, 1, 4, 4)), (2, 2),
                                                 strides=(2, 2)),
                   lambda x: x.reshape(2, 2, 2, 2).transpose(0, 2, 1, 3).reshape(
                       1, 1, 2, 2, 4).max(axis=-1)),
}


@pytest.mark.parametrize("name", sorted(RELAY_OPS))
@pytest.mark.parametrize("target", TARGETS)
def test_relay_ops_propagate_nan(name, target):
    build, ref = RELAY_OPS[name]
    x = X.reshape(4, 4).copy()
    x[2, 1] = x[2, 3] = NAN  # row 2: two NaNs (argmax picks the first); row 3: none
    x[3, :] = [1.0, 4.0, 4.0, -2.0]
    var = relay.var("x", shape=(4, 4), dtype="float32")
    got = _run_relay(build(var), {"x": x}, target)
    np.testing.assert_array_equal(got, ref(x))


def test_constant_folding_keeps_nan():
    nan, zero = O.const(NAN, "float32"), O.const(0.0, "float32")
    for value in (O.max(nan, zero), O.max(zero, nan), O.min(nan, zero), O.min(zero, nan)):
        assert np.isnan(value.value), value
    x = irlab.tir.Var("x", "float32")
    # x * 0.0 is NaN for a NaN or infinite x: it must not fold to 0
    for product in (x * zero, zero * x, O.multiply(x, zero)):
        assert not isinstance(product, irlab.tir.FloatImm), product
    analyzer = irlab.arith.Analyzer()
    assert not isinstance(analyzer.simplify(x * zero + x), irlab.tir.Var)
    assert not isinstance(analyzer.simplify(x - x), irlab.tir.FloatImm)
    assert isinstance(analyzer.simplify(O.max(x, x)), irlab.tir.Var)  # NaN stays NaN: fine


@pytest.mark.parametrize("target", TARGETS)
def test_multiply_by_zero_keeps_nan_and_inf(target):
    func = _elementwise(lambda x: x * _zero(), 1)
    x = np.array([NAN, np.inf, -np.inf, 1.0] * 4, "float32")
    out = np.ones(16, "float32")
    _build(func, target)(x, out)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(out, x * np.float32(0))


def test_relay_constant_folding_keeps_nan():
    """FoldConstant evaluates relu/maximum of constants: a NaN constant stays NaN."""
    const = relay.const(np.array([NAN, -1.0, 2.0], "float32"))
    expr = relay.nn.relu(relay.maximum(const, relay.const(0.0)))
    mod = irlab.IRModule.from_expr(relay.Function([], expr))
    folded = relay.transform.FoldConstant()(mod)
    body = folded["main"].body
    assert isinstance(body, relay.Constant)
    np.testing.assert_array_equal(body.data.numpy(), [NAN, 0.0, 2.0])


@pytest.mark.parametrize("mcpu", ["haswell", "skylake-avx512"])
def test_relu_stays_one_max_instruction(mcpu):
    """relu ``max(x, 0)`` keeps NaN and still compiles to one ``vmaxps`` per vector (the
    constant goes first: ``0 > x ? 0 : x`` picks ``x`` when it is NaN), no compare + blend."""
    a = te.placeholder((256,), name="A")
    b = te.compute((256,), lambda i: O.max(a[i], _zero()), name="B")
    sch = irlab.tir.Schedule(te.create_prim_func([a, b]))
    (i,) = sch.get_loops(sch.get_block("B"))
    _, inner = sch.split(i, [None, 8])
    sch.vectorize(inner)
    func = sch.mod["main"].with_attr("global_symbol", "f")
    asm = irlab.build(func, target=f"llvm -mcpu={mcpu}").get_source("asm")
    body = _compute_asm(asm)
    assert "vmaxps" in body and "vcmp" not in body and "blend" not in body, body


def _max_of_two_asm(target):
    a, b = te.placeholder((256,), name="A"), te.placeholder((256,), name="B")
    c = te.compute((256,), lambda i: O.max(a[i], b[i]), name="C")
    sch = irlab.tir.Schedule(te.create_prim_func([a, b, c]))
    (i,) = sch.get_loops(sch.get_block("C"))
    _, inner = sch.split(i, [None, 8])
    sch.vectorize(inner)
    asm = irlab.build(sch.mod["main"].with_attr("global_symbol", "f"),
                      target=target).get_source("asm")
    return _compute_asm(asm)


def _compute_asm(asm):
    """The assembly of ``f_compute``, the body of the PrimFunc ``f`` (not inlined into ``f``,
    the ABI entry)."""
    start = asm.index("f_compute:")
    return asm[start:asm.index(".Lfunc_end", start)]


def test_max_of_two_variables_tests_nan_unless_fast_math():
    """Two variable operands need a NaN test (an unordered compare); ``-fast-math`` assumes
    no NaNs and keeps TVM's single compare."""
    assert "vcmpunordps" in _max_of_two_asm("llvm -mcpu=haswell")
    assert "vcmpunordps" not in _max_of_two_asm("llvm -mcpu=haswell -fast-math")
