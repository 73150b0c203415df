"""The LLVM code generator against the TIR interpreter (issue 7).

Each test builds TIR with ``irlab.build(target="llvm")``, runs the compiled function on
random inputs and compares with ``irlab.tir.interpreter.run`` (or numpy where the interpreter
has no reference: strided buffers, popcount, packed calls): float32 to rtol 1e-5, integers
exactly. Covered: every intrinsic the codegen translates (scalar and 4-lane vector forms),
casts between all int/uint/float widths and bool, integer division with negative operands,
vector Ramp/Broadcast/Shuffle and strided vector accesses, bool buffers, symbolic and
strided buffers, scalar parameters, Let/LetStmt/While/IfThenElse, stack and heap
allocations, failing asserts and division by zero as ``IrlabError``, random programs from
``irlab.testing.tir_strategies`` and parallel loops on several threads.
"""

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import irlab
from irlab import tir
from irlab.errors import CodegenError, IrlabError
from irlab.runtime.dtype import parse_dtype, to_numpy_dtype
from irlab.testing.tir_strategies import loop_nests
from irlab.tir import stmt as S
from irlab.tir.expr import (Broadcast, FloatImm, IntImm, Let, Ramp, Shuffle, StringImm, Var)
from irlab.tir.interpreter import run

N = 16
LANES = 4
SERIAL, PARALLEL, VECTORIZED, UNROLLED = (S.ForKind.SERIAL, S.ForKind.PARALLEL,
                                          S.ForKind.VECTORIZED, S.ForKind.UNROLLED)


# -- helpers -----------------------------------------------------------------------------

def buf(name, shape, dtype="float32", strides=None):
    return tir.decl_buffer(shape, dtype, name, strides=strides)


def prim_func(buffers_and_scalars, body, name="f"):
    """A PrimFunc over ``buffers_and_scalars`` (Buffers become handle params)."""
    params, bmap = [], {}
    for item in buffers_and_scalars:
        if isinstance(item, tir.Buffer):
            p = Var(item.name + "_h", "handle")
            params.append(p)
            bmap[p] = item
        else:
            params.append(item)
    return tir.PrimFunc(params, body, buffer_map=bmap,
                        attrs={"global_symbol": name, "tir.noalias": True})


def loop(var, extent, body, kind=SERIAL, lo=0):
    return S.For(var, IntImm(var.dtype, lo), IntImm(var.dtype, extent), kind, body)


def seq(*stmts):
    return S.SeqStmt(list(stmts))


def build(func, target="llvm"):
    mod = irlab.build(func, target=target)
    return mod[str(func.attrs["global_symbol"])]


def build_ir(func):
    return irlab.build(func, target="llvm").get_source("ll-raw")


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def check(func, *args, rtol=1e-5, atol=1e-6, target="llvm", compiled=None):
    """Compiled vs interpreted ``func`` on ``args``: every array argument afterwards."""
    f = compiled or build(func, target)
    got, want = _copy(args), _copy(args)
    f(*got)
    run(func, *want)
    for g, w in zip(got, want):
        if isinstance(g, np.ndarray):
            assert_same(g, w, rtol, atol)
    return got


def assert_same(got, want, rtol=1e-5, atol=1e-6):
    assert got.dtype == want.dtype
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def rand(rng, shape, dtype, low=-10, high=10):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(low, info.min), min(high, info.max) + 1, shape).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


def elementwise(fn, in_dtypes, out_dtype, n=N, name="f"):
    """out[i] = fn(ins[i]) twice: a scalar loop into B, a 4-lane Ramp loop into C."""
    ins = [buf("A%d" % k, (n,), dt) for k, dt in enumerate(in_dtypes)]
    B, C = buf("B", (n,), out_dtype), buf("C", (n,), out_dtype)
    i, v = Var("i", "int32"), Var("v", "int32")
    scalar = loop(i, n, S.BufferStore(B, fn(*[A[i] for A in ins]), [i]))
    idx = Ramp(v * LANES, 1, LANES)
    vector = loop(v, n // LANES, S.BufferStore(C, fn(*[A[idx] for A in ins]), [idx]))
    return prim_func(ins + [B, C], seq(scalar, vector), name)


def run_elementwise(fn, inputs, out_dtype, **kw):
    func = elementwise(fn, [a.dtype.name if a.dtype != np.bool_ else "bool" for a in inputs],
                       out_dtype)
    np_out = to_numpy_dtype(out_dtype)
    out = check(func, *inputs, np.zeros(N, np_out), np.zeros(N, np_out), **kw)
    assert_same(out[-1], out[-2], **{k: v for k, v in kw.items() if k in ("rtol", "atol")})
    return out


def vt(x, dtype):
    """``dtype`` with as many lanes as ``x``."""
    lanes = parse_dtype(x.dtype).lanes
    return dtype if lanes == 1 else f"{dtype}x{lanes}"


def const_like(x, value):
    c = tir.const(value, str(parse_dtype(x.dtype).element_of()))
    lanes = parse_dtype(x.dtype).lanes
    return c if lanes == 1 else Broadcast(c, lanes)


RNG = np.random.default_rng(1234)


# -- (3) expressions: float intrinsics --------------------------------------------------------

def _positive(dt):
    return (RNG.uniform(0.1, 8.0, N).astype(dt),)


def _any(dt):
    return (RNG.uniform(-4.0, 4.0, N).astype(dt),)


def _unit(dt):
    return (RNG.uniform(-0.9, 0.9, N).astype(dt),)


def _halves(dt):  # round-half cases: round is to-nearest-even, as numpy
    return (np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -3.7, 3.7, 0.2, -0.2, 7.5, 8.5,
                      -0.0, 1.0, 2.49], dt),)


UNARY = {
    "exp": _any, "exp2": _any, "exp10": _unit, "log": _positive, "log2": _positive,
    "log10": _positive, "log1p": _positive, "sqrt": _positive, "rsqrt": _positive,
    "tanh": _any, "erf": _any, "sigmoid": _any, "fabs": _any, "floor": _halves,
    "ceil": _halves, "round": _halves, "nearbyint": _halves, "trunc": _halves, "sin": _any,
    "cos": _any, "tan": _unit, "asin": _unit, "acos": _unit, "atan": _any, "sinh": _any,
    "cosh": _any,
}


def _intrin(name):
    return lambda *args: tir.call_intrin(args[0].dtype, "tir." + name, *args)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float_intrinsics(name, dtype):
    run_elementwise(_intrin(name), UNARY[name](dtype), dtype, rtol=2e-5 if dtype ==
                    "float32" else 1e-12, atol=1e-6)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "fabs", "floor", "ceil", "round",
                                  "trunc", "tanh", "sigmoid"])
def test_unary_float16(name):
    (x,) = UNARY[name]("float16")
    run_elementwise(_intrin(name), [x], "float16", rtol=2e-3, atol=2e-3)


BINARY = {"pow": (0.5, 3.0, -2.0, 2.0), "copysign": (-4, 4, -4, 4), "atan2": (-4, 4, -4, 4),
          "hypot": (-4, 4, -4, 4), "fmod": (-8, 8, 0.5, 3), "nextafter": (-4, 4, -4, 4)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_float_intrinsics(name, dtype):
    lo_a, hi_a, lo_b, hi_b = BINARY[name]
    a = RNG.uniform(lo_a, hi_a, N).astype(dtype)
    b = RNG.uniform(lo_b, hi_b, N).astype(dtype)
    run_elementwise(_intrin(name), [a, b], dtype, rtol=2e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fma_min_max_select_arith(dtype):
    a, b, c = (RNG.uniform(-4, 4, N).astype(dtype) for _ in range(3))
    run_elementwise(lambda x, y, z: tir.fma(x, y, z), [a, b, c], dtype)
    run_elementwise(lambda x, y, z: tir.Select(x < y, tir.max(x, z), tir.min(y, z)),
                    [a, b, c], dtype)
    run_elementwise(lambda x, y, z: (x - y) * z / (tir.fabs(y) + const_like(y, 1)),
                    [a, b, c], dtype)
    run_elementwise(lambda x, y, z: tir.floordiv(x, y) + tir.floormod(x, z), [a, b, c], dtype,
                    rtol=1e-4, atol=1e-4)


def test_isnan_isinf_isfinite():
    x = np.array([0.0, np.nan, np.inf, -np.inf, 1.5, -2.0, np.nan, 3.0] * 2, "float32")
    for name in ("isnan", "isinf", "isfinite"):
        out = run_elementwise(lambda a: tir.call_intrin(vt(a, "bool"), "tir." + name, a),
                              [x], "bool")
        np.testing.assert_array_equal(out[-1], getattr(np, name)(x))
    run_elementwise(lambda a: tir.Select(tir.call_intrin(vt(a, "bool"), "tir.isnan", a),
                                         const_like(a, 1.0), a), [x], "float32")
    # comparisons with NaN: all false but !=
    y = np.roll(x, 1)
    for cmp in (tir.EQ, tir.NE, tir.LT, tir.LE, tir.GT, tir.GE):
        out = run_elementwise(cmp, [x, y], "bool")
        want = {tir.EQ: np.equal, tir.NE: np.not_equal, tir.LT: np.less, tir.LE: np.less_equal,
                tir.GT: np.greater, tir.GE: np.greater_equal}[cmp](x, y)
        np.testing.assert_array_equal(out[-1], want)


# -- (3) integer ops ----------------------------------------------------------------------

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("dtype", INTS)
def test_bitwise_and_shifts(dtype):
    a, b = rand(RNG, N, dtype, -100, 100), rand(RNG, N, dtype, -100, 100)
    bits = np.dtype(dtype).itemsize * 8
    sh = rand(RNG, N, dtype, 0, bits - 1)
    for fn in (lambda x, y: x & y, lambda x, y: x | y, lambda x, y: x ^ y,
               lambda x, y: ~x, lambda x, y: x + y * y - x, lambda x, y: tir.max(x, y),
               lambda x, y: tir.min(x, y) + tir.Select(x < y, x, y)):
        run_elementwise(fn, [a, b], dtype)
    for fn in (lambda x, s: x << s, lambda x, s: x >> s):
        run_elementwise(fn, [a, sh], dtype)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint16", "uint32"])
def test_popcount(dtype):
    a = rand(RNG, N, dtype, -1000, 1000)
    func = elementwise(lambda x: tir.call_intrin(x.dtype, "tir.popcount", x), [dtype], dtype)
    B, C = np.zeros(N, dtype), np.zeros(N, dtype)
    build(func)(a, B, C)
    want = np.array([bin(int(x) & ((1 << a.dtype.itemsize * 8) - 1)).count("1") for x in a],
                    dtype)
    np.testing.assert_array_equal(B, want)
    np.testing.assert_array_equal(C, want)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_integer_division_negative_operands(dtype):
    a = np.array([-7, 7, -7, 7, 0, -1, 1, -8, 8, -9, 9, 100, -100, 5, -5, 3], dtype)
    b = np.array([2, 2, -2, -2, 3, 3, -3, 3, -3, 4, -4, 7, 7, -7, -7, 1], dtype)
    out = {}
    for name, fn in [("div", tir.truncdiv), ("mod", tir.truncmod),
                     ("floordiv", tir.floordiv), ("floormod", tir.floormod)]:
        out[name] = run_elementwise(fn, [a, b], dtype)[-1]
    wide_a, wide_b = a.astype(np.int64), b.astype(np.int64)
    np.testing.assert_array_equal(out["floordiv"], wide_a // wide_b)
    np.testing.assert_array_equal(out["floormod"], wide_a % wide_b)
    np.testing.assert_array_equal(out["div"], np.trunc(wide_a / wide_b).astype(dtype))
    np.testing.assert_array_equal(out["mod"], np.fmod(wide_a, wide_b))


@pytest.mark.parametrize("dtype", ["uint8", "uint32", "uint64"])
def test_unsigned_division(dtype):
    a, b = rand(RNG, N, dtype, 0, 250), rand(RNG, N, dtype, 1, 9)
    for fn in (tir.truncdiv, tir.truncmod, tir.floordiv, tir.floormod):
        run_elementwise(fn, [a, b], dtype)


def test_division_by_minus_one():
    """Dividing by -1 is fine (only zero is an error); INT_MIN / -1 wraps."""
    a = np.array([5, -5, 0, 7, -2147483648, 2147483647, 1, -1] * 2, "int32")
    b = np.full(N, -1, "int32")
    for fn in (tir.truncdiv, tir.truncmod, tir.floordiv, tir.floormod):
        run_elementwise(fn, [a, b], "int32")
        run_elementwise(lambda x, y: fn(x, const_like(x, -1)) + y, [a, b], "int32")


def test_integer_division_by_zero_scalar_param_raises():
    A, B = buf("A", (N,), "int32"), buf("B", (N,), "int32")
    d = Var("d", "int32")
    i = Var("i", "int32")
    body = loop(i, N, S.BufferStore(B, tir.floordiv(A[i], d) + tir.truncmod(A[i], d), [i]))
    f = build(prim_func([A, B, d], body))
    a = np.arange(-8, 8, dtype="int32")
    out = np.zeros(N, "int32")
    f(a, out, 3)
    np.testing.assert_array_equal(out, a // 3 + np.fmod(a, 3))
    with pytest.raises(IrlabError, match="division"):
        f(a, out, 0)
    f(a, out, -3)  # still usable afterwards
    np.testing.assert_array_equal(out, a // -3 + np.fmod(a, -3))
    # a vector division by a broadcast scalar
    v = Var("v", "int32")
    idx = Ramp(v * LANES, 1, LANES)
    body = loop(v, N // LANES, S.BufferStore(B, tir.truncdiv(A[idx], Broadcast(d, LANES)),
                                             [idx]))
    f = build(prim_func([A, B, d], body))
    f(a, out, -2)
    np.testing.assert_array_equal(out, np.trunc(a / -2).astype("int32"))
    with pytest.raises(IrlabError, match="division"):
        f(a, out, 0)


def test_vector_if_then_else_condition_is_refused():
    """if_then_else guards its branches, so it needs a scalar condition: a clean
    CodegenError, not IR that LLVM rejects (the vectorizer scalarizes such loops)."""
    A, B = buf("A", (N,)), buf("B", (N,))
    v = Var("v", "int32")
    idx = Ramp(v * LANES, 1, LANES)
    body = loop(v, N // LANES, S.BufferStore(B, tir.if_then_else(
        A[idx] > Broadcast(FloatImm("float32", 0.0), LANES), A[idx], -A[idx]), [idx]))
    with pytest.raises(CodegenError, match="scalar condition"):
        build(prim_func([A, B], body))
    # scalar if_then_else guarding an out-of-bounds load, inside a vectorized loop
    i = Var("i", "int32")
    body = loop(i, N, S.BufferStore(B, tir.if_then_else(i < N - 1, A[i + 1], A[0]), [i]),
                VECTORIZED)
    check(prim_func([A, B], body), RNG.standard_normal(N).astype("float32"),
          np.zeros(N, "float32"))


def test_call_packed_argument_kinds():
    seen = []
    irlab.register_func("testing.codegen_llvm.args",
                        lambda *args: seen.append(args), override=True)
    A = buf("A", (2, 3), "int16")
    x, y = Var("x", "int64"), Var("y", "float64")
    body = S.Evaluate(tir.call_packed(StringImm("testing.codegen_llvm.args"), A.data,
                                      StringImm("hello"), x * 2, y / 2.0, A[1, 2]))
    f = build(prim_func([A, x, y], body))
    a = np.arange(6, dtype="int16").reshape(2, 3)
    f(a, -(2 ** 40), 3.0)
    (array, text, ix, fy, elem), = seen
    np.testing.assert_array_equal(array.numpy(), a)
    assert (text, ix, fy, elem) == ("hello", -(2 ** 41), 1.5, 5)


# -- (3) casts ----------------------------------------------------------------------------

ALL_TYPES = INTS + ["float16", "float32", "float64", "bool"]


def _cast_source(dtype):
    rng = np.random.default_rng(7)
    if dtype == "bool":
        return rng.integers(0, 2, N).astype(bool)
    if dtype.startswith("float"):
        # in range of every destination; negative values only where they are defined
        return np.round(rng.uniform(-100, 120, N) * 4).astype(dtype) / np.array(4, dtype)
    return rand(rng, N, dtype, -120, 250)


@pytest.mark.parametrize("src", ALL_TYPES)
def test_casts(src):
    """One function per source type casting to every other type (scalar and vector)."""
    x = _cast_source(src)
    if src.startswith("float"):
        unsigned_ok = np.abs(x)  # float -> uint of a negative value is undefined
    n_dst = len(ALL_TYPES)
    A = buf("A", (N,), src)
    Au = buf("Au", (N,), src)
    outs = [buf("O_" + d, (N,), d) for d in ALL_TYPES]
    vouts = [buf("V_" + d, (N,), d) for d in ALL_TYPES]
    i, v = Var("i", "int32"), Var("v", "int32")
    idx = Ramp(v * LANES, 1, LANES)
    stores, vstores = [], []
    for d, O, V in zip(ALL_TYPES, outs, vouts):
        source = Au if (src.startswith("float") and d.startswith("uint")) else A
        stores.append(S.BufferStore(O, tir.Cast(d, source[i]), [i]))
        vstores.append(S.BufferStore(V, tir.Cast(d + "x4", source[idx]), [idx]))
    body = seq(loop(i, N, seq(*stores)), loop(v, N // LANES, seq(*vstores)))
    func = prim_func([A, Au] + outs + vouts, body)
    zeros = [np.zeros(N, to_numpy_dtype(d)) for d in ALL_TYPES] * 2
    got = check(func, x, unsigned_ok if src.startswith("float") else x.copy(), *zeros,
                rtol=1e-3 if src == "float16" else 1e-6)
    for k in range(n_dst):
        assert_same(got[2 + k], got[2 + n_dst + k])


def test_float64_to_float16_rounds_once():
    """double -> half is correctly rounded (not double-rounded through float32); a float16
    scalar parameter arrives through the same conversion."""
    x = np.array([1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -11 - 2.0 ** -40, 1 + 2.0 ** -11,
                  1 + 3 * 2.0 ** -11, -(1 + 2.0 ** -11 + 2.0 ** -40), 65519.0, 65520.0, 1e6,
                  -1e6, 1e-9, -1e-9, 6e-8, np.nan, np.inf, -np.inf, 0.0], "float64")
    out = run_elementwise(lambda a: tir.Cast(vt(a, "float16"), a), [x], "float16")
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out[-1], x.astype("float16"))
    A, B = buf("A", (N,), "float16"), buf("B", (N,), "float16")
    h, i = Var("h", "float16"), Var("i", "int32")
    f = build(prim_func([A, B, h], loop(i, N, S.BufferStore(B, A[i] + h, [i]))))
    out = np.zeros(N, "float16")
    f(np.zeros(N, "float16"), out, 1 + 2.0 ** -11 + 2.0 ** -40)
    np.testing.assert_array_equal(out, np.float16(1 + 2.0 ** -10))


def test_float16_buffers_arith():
    a = RNG.uniform(-4, 4, N).astype("float16")
    b = RNG.uniform(-4, 4, N).astype("float16")
    # On a CPU with native half arithmetic (avx512fp16) LLVM contracts x * y + x into one FMA,
    # as TVM allows (FPOpFusion::Fast), skipping the rounding of x * y (|x * y| <= 16, whose
    # half-precision ulp is 2**-6): numpy rounds after every op, so allow a few such ulps.
    run_elementwise(lambda x, y: x * y + x - y, [a, b], "float16", rtol=1e-3, atol=2e-2)
    run_elementwise(lambda x, y: tir.Cast(x.dtype, tir.Cast(vt(x, "float32"), x) / tir.Cast(
        vt(y, "float32"), y)), [a, b], "float16", rtol=1e-3, atol=1e-3)


# -- (3) vectors --------------------------------------------------------------------------

def test_ramp_broadcast_shuffle():
    A, B, C, D = (buf(n, (N,), "int32") for n in "ABCD")
    v = Var("v", "int32")
    base = v * LANES
    idx = Ramp(base, 1, LANES)
    rev = Shuffle([A[idx]], [IntImm("int32", k) for k in (3, 2, 1, 0)])
    inter = Shuffle([A[idx], Ramp(base, 1, LANES)],
                    [IntImm("int32", k) for k in (0, 4, 2, 6)])
    body = loop(v, N // LANES, seq(
        S.BufferStore(B, rev + Broadcast(v, LANES), [idx]),
        S.BufferStore(C, inter * Ramp(IntImm("int32", 1), 2, LANES), [idx]),
        S.BufferStore(D, Broadcast(A[base], LANES) - Ramp(v, v + 1, LANES), [idx])))
    func = prim_func([A, B, C, D], body)
    a = rand(RNG, N, "int32", -50, 50)
    out = check(func, a, *[np.zeros(N, "int32") for _ in range(3)])
    np.testing.assert_array_equal(out[1][:4], a[3::-1])


def test_strided_vector_loads_and_stores():
    """Non-unit Ramp strides (gather/scatter), constant and variable."""
    A, B = buf("A", (4 * N,), "float32"), buf("B", (4 * N,), "float32")
    s = Var("s", "int32")
    v = Var("v", "int32")
    body = seq(
        # B[3v + (0,2,4,6)... ] : gather with stride 3, scatter with stride 2
        loop(v, N // LANES, S.BufferStore(
            B, A[Ramp(v * 12, 3, LANES)] * Broadcast(FloatImm("float32", 2.0), LANES),
            [Ramp(v * 8, 2, LANES)])),
        # a variable stride, a negative stride
        loop(v, 2, S.BufferStore(B, A[Ramp(v, s, LANES)], [Ramp(63 - v, -4, LANES)]),
             UNROLLED))
    func = prim_func([A, B, s], body)
    a = RNG.standard_normal(4 * N).astype("float32")
    check(func, a, np.zeros(4 * N, "float32"), 5)


def test_vectorized_loop_kind_with_tail():
    """A ``vectorized`` For (lowered by VectorizeLoop) inside a serial one; odd extents."""
    A, B = buf("A", (6, 7), "float32"), buf("B", (6, 7), "float32")
    i, j = Var("i", "int32"), Var("j", "int32")
    body = loop(i, 6, loop(j, 7, S.BufferStore(
        B, tir.exp(A[i, j]) * tir.Cast("float32", j) + tir.Select(A[i, j] > 0, A[i, j],
                                                                  -A[i, j]), [i, j]),
        VECTORIZED))
    func = prim_func([A, B], body)
    check(func, RNG.standard_normal((6, 7)).astype("float32"), np.zeros((6, 7), "float32"))


def test_bool_buffers():
    A, B = buf("A", (N,), "float32"), buf("B", (N,), "float32")
    M, P = buf("M", (N,), "bool"), buf("P", (N,), "bool")
    R, Q = buf("R", (N,), "bool"), buf("Q", (N,), "float32")
    i, v = Var("i", "int32"), Var("v", "int32")
    idx = Ramp(v * LANES, 1, LANES)
    body = seq(
        loop(i, N, seq(
            S.BufferStore(R, tir.Or(tir.And(A[i] < B[i], M[i]), tir.Not(P[i])), [i]),
            S.BufferStore(Q, tir.Select(M[i], A[i], B[i]) + tir.Cast("float32", P[i]), [i]))),
        loop(v, N // LANES, S.BufferStore(
            P, tir.And(tir.Not(P[idx]), A[idx] >= B[idx]), [idx])))
    func = prim_func([A, B, M, P, R, Q], body)
    check(func, RNG.standard_normal(N).astype("float32"), RNG.standard_normal(N).astype(
        "float32"), rand(RNG, N, "bool"), rand(RNG, N, "bool"), np.zeros(N, bool),
        np.zeros(N, "float32"))


# -- (3) buffers and parameters -----------------------------------------------------------

def test_symbolic_shapes_shared_across_arguments():
    n, m = Var("n", "int32"), Var("m", "int32")
    A, B = buf("A", (n, m)), buf("B", (m,))
    C = buf("C", (n, m))
    i, j = Var("i", "int32"), Var("j", "int32")
    body = S.For(i, IntImm("int32", 0), n, SERIAL, S.For(
        j, IntImm("int32", 0), m, SERIAL,
        S.BufferStore(C, A[i, j] * B[j] + tir.Cast("float32", n * 100 + m), [i, j])))
    f = build(prim_func([A, B, C], body))
    func = prim_func([A, B, C], body)
    for shape in [(3, 5), (1, 1), (7, 2)]:
        a = RNG.standard_normal(shape).astype("float32")
        b = RNG.standard_normal(shape[1]).astype("float32")
        check(func, a, b, np.zeros(shape, "float32"), compiled=f)
    with pytest.raises(IrlabError):
        f(np.zeros((3, 5), "float32"), np.zeros(4, "float32"), np.zeros((3, 5), "float32"))


def test_explicit_strides():
    """Buffers with strides (variable and constant) read numpy views; checked with numpy."""
    s0 = Var("s0", "int32")
    A = buf("A", (4, 5), strides=(s0, 2))
    B = buf("B", (4, 5), strides=(5, 1))
    i, j = Var("i", "int32"), Var("j", "int32")
    body = loop(i, 4, loop(j, 5, S.BufferStore(B, A[i, j] * 2.0 + 1.0, [i, j])))
    f = build(prim_func([A, B], body))
    big = RNG.standard_normal((4, 13)).astype("float32")
    view = big[:, ::2][:, :5]
    out = np.zeros((4, 5), "float32")
    f(view, out)
    np.testing.assert_allclose(out, view * 2 + 1, rtol=1e-6)
    big2 = RNG.standard_normal((8, 10)).astype("float32")
    f(big2[::2, ::2], out)
    np.testing.assert_allclose(out, big2[::2, ::2] * 2 + 1, rtol=1e-6)


def test_scalar_params():
    A, B = buf("A", (N,)), buf("B", (N,), "float64")
    x32, x64 = Var("x32", "int32"), Var("x64", "int64")
    f32, f64, flag = Var("f32", "float32"), Var("f64", "float64"), Var("flag", "bool")
    i = Var("i", "int32")
    value = (tir.Cast("float64", A[i] * f32) + f64 * tir.Cast("float64", x32)
             + tir.Cast("float64", x64 * IntImm("int64", 3)))
    body = loop(i, N, S.BufferStore(B, tir.Select(flag, value, -value), [i]))
    func = prim_func([A, B, x32, x64, f32, f64, flag], body)
    f = build(func)
    a = RNG.standard_normal(N).astype("float32")
    for args in [(3, -(2 ** 40), 1.5, -0.25, True), (-7, 5, -2.0, 1e10, False),
                 (2 ** 31 - 1, 2 ** 62, 0.1, 3.3, True)]:
        check(func, a, np.zeros(N), *args, rtol=1e-12, compiled=f)


def test_let_letstmt_while_ifthenelse():
    A, B = buf("A", (N,), "int32"), buf("B", (N,), "int32")
    i, t, x, k = Var("i", "int32"), Var("t", "int32"), Var("x", "int32"), Var("k", "int32")
    Acc = buf("acc", (1,), "int32")
    # collatz-ish step count of A[i] with a While over a stack cell, then branches
    body = loop(i, N, S.LetStmt(
        t, A[i] * 2, S.Allocate(Acc.data, "int32", [1], body=seq(
            S.BufferStore(Acc, IntImm("int32", 0), [0]),
            S.LetStmt(x, tir.Cast("int32", 0), S.While(
                tir.LT(Acc[0] * 3, t), S.BufferStore(Acc, Acc[0] + 1, [0]))),
            S.IfThenElse(
                tir.GT(Let(k, t + 1, k * k), 50),
                S.BufferStore(B, Acc[0] + Let(k, A[i], k - 1), [i]),
                S.IfThenElse(tir.EQ(tir.floormod(t, 4), 0),
                             S.BufferStore(B, IntImm("int32", -1), [i])))))))
    func = prim_func([A, B], body)
    check(func, rand(RNG, N, "int32", -10, 30), np.full(N, 99, "int32"))


@pytest.mark.parametrize("count", [64, 70_000])
def test_stack_and_heap_allocations(count):
    """A small Allocate lives on the stack, one over 256 KiB on the heap (freed after)."""
    A, B = buf("A", (2,)), buf("B", (2,))
    T = buf("T", (count,))
    i, j = Var("i", "int32"), Var("j", "int32")
    body = loop(i, 2, S.Allocate(T.data, "float32", [count], body=seq(
        loop(j, count, S.BufferStore(T, A[i] + tir.Cast("float32", tir.floormod(j, 7)), [j])),
        S.BufferStore(B, T[count - 1] + T[0] * 2.0 + T[count // 2], [i]))))
    func = prim_func([A, B], body)
    f = build(func)
    assert ("aligned_alloc" in build_ir(func)) == (count * 4 > 256 * 1024)
    a = RNG.standard_normal(2).astype("float32")
    for _ in range(3):  # repeated calls: the heap buffer is freed each time
        out = np.zeros(2, "float32")
        f(a, out)
    want = np.zeros(2, "float32")
    run(func, a, want)
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_dynamic_allocation_on_heap():
    n = Var("n", "int32")
    A, B = buf("A", (n,)), buf("B", (1,))
    T = buf("T", (n,))
    j = Var("j", "int32")
    body = S.Allocate(T.data, "float32", [n], body=seq(
        S.For(j, IntImm("int32", 0), n, SERIAL, S.BufferStore(T, A[j] * A[j], [j])),
        S.BufferStore(B, FloatImm("float32", 0.0), [0]),
        S.For(j, IntImm("int32", 0), n, SERIAL, S.BufferStore(B, B[0] + T[j], [0]))))
    func = prim_func([A, B], body)
    f = build(func)
    for size in (1, 5, 300):
        a = RNG.standard_normal(size).astype("float32")
        check(func, a, np.zeros(1, "float32"), compiled=f, rtol=1e-4)
    a = RNG.standard_normal(70_000).astype("float32")
    out = np.zeros(1, "float32")
    f(a, out)
    np.testing.assert_allclose(out[0], np.sum(a.astype("float64") ** 2), rtol=1e-3)


def test_assert_failure_raises_with_message():
    A, B = buf("A", (N,)), buf("B", (N,))
    i = Var("i", "int32")
    body = S.AssertStmt(A[0] > FloatImm("float32", 0.0), StringImm("A[0] must be positive"),
                        loop(i, N, S.BufferStore(B, tir.sqrt(A[i]), [i])))
    f = build(prim_func([A, B], body))
    a = np.abs(RNG.standard_normal(N)).astype("float32") + 0.5
    out = np.zeros(N, "float32")
    f(a, out)
    np.testing.assert_allclose(out, np.sqrt(a), rtol=1e-6)
    a[0] = -1
    with pytest.raises(IrlabError, match="A\\[0\\] must be positive"):
        f(a, out)


# -- (2) random programs ------------------------------------------------------------------

def _random_inputs(func, seed=0):
    rng = np.random.default_rng(seed)
    arrays = []
    for param in func.params:
        shape = tuple(int(s.value) for s in func.buffer_map[param].shape)
        arrays.append(rng.standard_normal(shape).astype("float32"))
    arrays[-1][...] = 0
    return arrays


@settings(max_examples=50, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(loop_nests())
def test_random_loop_nests(func):
    func = func.with_attr("global_symbol", "main")
    compiled = build(func)
    # the (block-form) function is the reference; casts to int32 of random values stay small
    check(func, *_random_inputs(func), rtol=1e-5, atol=1e-5, compiled=compiled)


# -- (4) parallel loops -------------------------------------------------------------------

def _record_threads():
    seen = []
    lock = threading.Lock()

    def record(i, x):
        with lock:
            seen.append((int(i), threading.get_ident()))
    return seen, record


def test_parallel_loop_runs_on_several_threads():
    seen, record = _record_threads()
    irlab.register_func("testing.codegen_llvm.record", record, override=True)
    A, B = buf("A", (64,)), buf("B", (64,))
    i, j = Var("i", "int32"), Var("j", "int32")
    body = loop(i, 64, seq(
        # enough work per iteration that both chunks are running at once
        loop(j, 20000, S.BufferStore(B, B[i] * 0.5 + A[i] + tir.Cast("float32", j) * 1e-6,
                                     [i])),
        S.Evaluate(tir.call_packed(StringImm("testing.codegen_llvm.record"), i, A[i]))),
        PARALLEL)
    func = prim_func([A, B], body)
    f = build(func, target="llvm -num-cores=2")
    a = RNG.standard_normal(64).astype("float32")
    threads = set()
    # A chunk its worker has not started when the caller is done with its own is run by the
    # caller (the worker may be descheduled for milliseconds on a busy host): try a few calls.
    for _ in range(20):
        seen.clear()
        out = np.zeros(64, "float32")
        f(a, out)
        assert sorted(k for k, _ in seen) == list(range(64))
        np.testing.assert_allclose(out, _serial_reference(a), rtol=1e-4)
        threads = {t for _, t in seen}
        if len(threads) >= 2:
            break
    assert len(threads) >= 2, seen


def _serial_reference(a):
    out = np.zeros_like(a)
    for j in range(20000):
        out = (out * np.float32(0.5) + a + np.float32(j) * np.float32(1e-6)).astype("float32")
    return out


def test_nested_parallel_loops_and_free_variables():
    A, B = buf("A", (8, 12)), buf("B", (8, 12))
    s = Var("s", "float32")
    i, j, k = Var("i", "int32"), Var("j", "int32"), Var("k", "int32")
    T = buf("T", (12,))
    body = loop(i, 8, S.Allocate(T.data, "float32", [12], body=seq(
        loop(j, 12, S.BufferStore(T, A[i, j] * s, [j]), PARALLEL),
        loop(k, 12, S.LetStmt(
            j, tir.floormod(k + i, 12),
            S.BufferStore(B, T[j] + tir.Cast("float32", i) - A[i, k], [i, k])), PARALLEL))),
        PARALLEL)
    func = prim_func([A, B, s], body)
    f = build(func, target="llvm -num-cores=2")
    for _ in range(3):
        check(func, RNG.standard_normal((8, 12)).astype("float32"),
              np.zeros((8, 12), "float32"), 1.5, compiled=f)


def test_parallel_vectorized_reduction():
    A, B = buf("A", (32, 16)), buf("B", (32, 4))
    i, k = Var("i", "int32"), Var("k", "int32")
    idx = Ramp(IntImm("int32", 0), 1, LANES)
    body = loop(i, 32, seq(
        S.BufferStore(B, Broadcast(FloatImm("float32", 0.0), LANES), [i, idx]),
        loop(k, 4, S.BufferStore(B, B[i, idx] + A[i, Ramp(k * 4, 1, LANES)], [i, idx]))),
        PARALLEL)
    func = prim_func([A, B], body)
    a = RNG.standard_normal((32, 16)).astype("float32")
    out = check(func, a, np.zeros((32, 4), "float32"), target="llvm -num-cores=2")
    np.testing.assert_allclose(out[1], a.reshape(32, 4, 4).sum(1), rtol=1e-5)


def test_error_in_parallel_body_propagates():
    def boom(i):
        if int(i) == 37:
            raise ValueError("iteration 37 failed")
    irlab.register_func("testing.codegen_llvm.boom", boom, override=True)
    A = buf("A", (64,))
    i = Var("i", "int32")
    body = loop(i, 64, seq(
        S.Evaluate(tir.call_packed(StringImm("testing.codegen_llvm.boom"), i)),
        S.BufferStore(A, tir.Cast("float32", i), [i])), PARALLEL)
    f = build(prim_func([A], body), target="llvm -num-cores=2")
    with pytest.raises(IrlabError, match="iteration 37 failed"):
        f(np.zeros(64, "float32"))
    out = np.zeros(64, "float32")
    irlab.register_func("testing.codegen_llvm.boom", lambda i: None, override=True)
    f(out)
    np.testing.assert_array_equal(out, np.arange(64, dtype="float32"))


def test_assert_in_parallel_body_propagates():
    A, B = buf("A", (64,)), buf("B", (64,))
    i = Var("i", "int32")
    body = loop(i, 64, S.AssertStmt(A[i] >= FloatImm("float32", 0.0),
                                    StringImm("negative input"),
                                    S.BufferStore(B, tir.sqrt(A[i]), [i])), PARALLEL)
    f = build(prim_func([A, B], body), target="llvm -num-cores=2")
    a = np.abs(RNG.standard_normal(64)).astype("float32")
    out = np.zeros(64, "float32")
    f(a, out)
    np.testing.assert_allclose(out, np.sqrt(a), rtol=1e-6)
    a[50] = -1.0
    with pytest.raises(IrlabError, match="negative input"):
        f(a, out)
