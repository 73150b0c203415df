"""C codegen (target "c"): build programs, compare with the TIR interpreter / numpy."""

import os
import sys

import numpy as np
import pytest

import irlab
from irlab.errors import CompileError, IrlabError
from irlab.ir.module import IRModule
from irlab.runtime.module import find_c_compiler, load_module
from irlab.script import tir as T
from irlab.tir.interpreter import run

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "script"))
from seed_modules import MyModule, mlc_schedule  # noqa: E402

pytestmark = pytest.mark.skipif(find_c_compiler() is None, reason="no C compiler")

RNG = np.random.default_rng(7)


def build_both(func_or_mod, targets=("c", "llvm")):
    return {t: irlab.build(func_or_mod, target=t) for t in targets}


def check_against_interpreter(func, make_args, targets=("c", "llvm"), rtol=1e-5, atol=1e-6):
    """Run ``func`` through the interpreter and each target on the same inputs."""
    inputs = make_args()
    expected = [np.array(a) if isinstance(a, np.ndarray) else a for a in inputs]
    run(func, *expected)
    for target, mod in build_both(func, targets).items():
        got = [np.array(a) if isinstance(a, np.ndarray) else a for a in inputs]
        mod(*got)
        for e, g in zip(expected, got):
            if isinstance(e, np.ndarray):
                np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=target)


# -- seed 001: mm_relu, before and after the MLC schedule ---------------------------------
def mm_relu_inputs():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((128, 128)).astype("float32")
    b = rng.standard_normal((128, 128)).astype("float32")
    return a, b


@pytest.mark.parametrize("scheduled", [False, True])
def test_mm_relu(scheduled):
    mod = mlc_schedule().mod if scheduled else MyModule
    a, b = mm_relu_inputs()
    for target in ("c", "llvm"):
        lib = irlab.build(mod, target=target)
        c = np.zeros((128, 128), "float32")
        lib["mm_relu"](a, b, c)
        np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_mm_relu_source_is_readable():
    src = irlab.build(mlc_schedule().mod, target="c").get_source()
    assert "/* PrimFunc mm_relu(A: Buffer((128, 128), float32), " in src
    assert "static int32_t mm_relu_compute(float *restrict A, float *restrict B, " \
           "float *restrict C) {" in src
    assert "int32_t mm_relu(int64_t *args) {" in src
    assert "      float Y[4] __attribute__((aligned(64)));" in src
    assert "      for (int32_t j_1_init = 0; j_1_init < 4; ++j_1_init) {" in src
    assert "          Y[j_1] = Y[j_1] + A[i * 128 + k] * B[k * 128 + j_0 * 4 + j_1];" in src
    assert "        C[i * 128 + j_0 * 4 + ax0] = irlab_max_f32(Y[ax0], 0.0f);" in src
    assert "int32_t (*__irlab_parallel_for)(" in src and "= NULL;" in src
    assert "const char __irlab_metadata[] =" in src
    assert "#pragma" not in src
    # deterministic
    assert irlab.build(mlc_schedule().mod, target="c").get_source() == src


# -- loops: vectorized, parallel, unrolled --------------------------------------------------
def test_vectorized_and_parallel_loops():
    sch = mlc_schedule()
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j0, k, j1 = sch.get_loops(block_Y)
    sch.parallel(i)
    sch.vectorize(j1)
    block_init = sch.get_block("Y_init", func_name="mm_relu")
    sch.vectorize(sch.get_loops(block_init)[-1])
    a, b = mm_relu_inputs()
    libs = build_both(sch.mod)
    for target, lib in libs.items():
        c = np.zeros((128, 128), "float32")
        lib["mm_relu"](a, b, c)
        np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4,
                                   err_msg=target)
    src = libs["c"].get_source()
    assert "static int32_t mm_relu_parallel_1(int64_t begin, int64_t end, void *closure) {" \
        in src
    assert "? __irlab_parallel_for(mm_relu_parallel_1, closure, 128)" in src


@T.prim_func
def vector_ops(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
               C: T.Buffer((16,), "int32")):
    T.func_attr({"global_symbol": "vector_ops", "tir.noalias": True})
    for i in range(4):
        B[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i * 4, 1, 4)] * T.Broadcast(T.float32(2), 4) + \
            T.Broadcast(A[i], 4)
    for i in range(2):
        C[T.Ramp(i * 8, 2, 4)] = T.Cast("int32x4", A[T.Ramp(i * 8, 2, 4)])
        C[T.Ramp(i * 8 + 1, 2, 4)] = T.Shuffle([T.Ramp(i, 1, 4)], [3, 2, 1, 0])
    A[T.Ramp(1, 1, 4)] = A[T.Ramp(0, 1, 4)]


def test_vector_expressions():
    check_against_interpreter(vector_ops, lambda: (
        np.arange(16, dtype="float32") * 1.5 - 4, np.zeros(16, "float32"),
        np.zeros(16, "int32")))
    src = irlab.build(vector_ops, target="c").get_source()
    assert "for (int32_t lane = 0; lane < 4; ++lane) {" in src
    assert "B[i * 4 + lane] = A[i * 4 + lane] * 2.0f + A[i];" in src


@T.prim_func
def par_unroll(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"global_symbol": "par_unroll", "tir.noalias": True})
    for i in T.parallel(1, 7):
        for j in T.unroll(8):
            B[i * 8 + j] = A[i * 8 + j] + T.Cast("float32", i)


def test_parallel_with_min_and_unrolled():
    check_against_interpreter(par_unroll, lambda: (RNG.standard_normal(64).astype("float32"),
                                                   np.zeros(64, "float32")))


# -- symbolic shapes ------------------------------------------------------------------------
@T.prim_func
def matvec(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"global_symbol": "matvec", "tir.noalias": True})
    n = T.int32()
    m = T.int32()
    A = T.match_buffer(a, (n, m), "float32")
    B = T.match_buffer(b, (m,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for i in T.parallel(n):
        C[i] = T.float32(0)
        for k in range(m):
            C[i] = C[i] + A[i, k] * B[k]


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_symbolic_shapes(target):
    lib = irlab.build(matvec, target=target)
    for n, m in [(3, 5), (17, 1), (64, 33)]:
        a = RNG.standard_normal((n, m)).astype("float32")
        b = RNG.standard_normal(m).astype("float32")
        c = np.zeros(n, "float32")
        lib(a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-5)
    if target == "c":
        src = lib.get_source()
        assert " * symbolic dimensions: n, m" in src
        assert "int32_t n,\n" in src and "int32_t m) {" in src
        assert "for (int32_t i = (int32_t)begin; i < (int32_t)end; ++i) {" in src


# -- intrinsics ------------------------------------------------------------------------------
@T.prim_func
def math_ops(A: T.Buffer((32,), "float32"), B: T.Buffer((32, 9), "float32"),
             D: T.Buffer((32,), "float64")):
    T.func_attr({"global_symbol": "math_ops", "tir.noalias": True})
    for i in range(32):
        B[i, 0] = T.exp(A[i])
        B[i, 1] = T.tanh(A[i])
        B[i, 2] = T.sigmoid(A[i])
        B[i, 3] = T.floor(A[i])
        B[i, 4] = T.fabs(A[i])
        B[i, 5] = T.pow(T.fabs(A[i]), T.float32(1.5))
        B[i, 6] = T.if_then_else(A[i] > T.float32(0), T.sqrt(A[i]), T.float32(-1))
        B[i, 7] = T.Select(A[i] < T.float32(0), T.min(A[i], T.float32(-0.5)), T.ceil(A[i]))
        B[i, 8] = T.Cast("float32", T.Cast("int8", A[i] * T.float32(10)))
        D[i] = T.exp(T.Cast("float64", A[i])) + T.float64(0.25)


def test_float_intrinsics():
    check_against_interpreter(math_ops, lambda: (
        np.linspace(-3, 3, 32).astype("float32"), np.zeros((32, 9), "float32"),
        np.zeros(32, "float64")), rtol=1e-5, atol=1e-6)


@T.prim_func
def int_ops(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"),
            Q: T.Buffer((64, 6), "int32"), M: T.Buffer((64,), "bool"),
            N: T.Buffer((64,), "bool"), S: T.Buffer((64,), "int8")):
    T.func_attr({"global_symbol": "int_ops", "tir.noalias": True})
    for i in range(64):
        Q[i, 0] = T.floordiv(A[i], B[i])
        Q[i, 1] = T.floormod(A[i], B[i])
        Q[i, 2] = T.truncdiv(A[i], B[i])
        Q[i, 3] = T.truncmod(A[i], B[i])
        Q[i, 4] = T.floordiv(A[i], 4) + T.floormod(A[i], 4)
        Q[i, 5] = T.floordiv(A[i], -3) * 100 + T.floormod(A[i], -3)
        N[i] = M[i] and A[i] > B[i] or not M[i] and A[i] < 0
        S[i] = T.Cast("int8", A[i]) * T.int8(3) + T.int8(1)


def test_int_division_and_bools():
    def args():
        rng = np.random.default_rng(3)
        a = rng.integers(-50, 50, 64).astype("int32")
        b = rng.integers(1, 9, 64).astype("int32") * rng.choice([-1, 1], 64).astype("int32")
        return a, b, np.zeros((64, 6), "int32"), rng.random(64) > 0.5, \
            np.zeros(64, "bool"), np.zeros(64, "int8")
    expected = list(args())
    run(int_ops, *expected)
    a, b = expected[0], expected[1]
    np.testing.assert_array_equal(expected[2][:, 0], a // b)
    np.testing.assert_array_equal(expected[2][:, 1], a % b)
    check_against_interpreter(int_ops, args)


def test_int_division_by_zero_fails_cleanly():
    @T.prim_func
    def divide(A: T.Buffer((8,), "int32"), d: T.int32):
        T.func_attr({"global_symbol": "divide", "tir.noalias": True})
        for i in range(8):
            A[i] = A[i] // d

    lib = irlab.build(divide, target="c")
    a = np.arange(8, dtype="int32") - 4
    lib(a, 3)
    np.testing.assert_array_equal(a, (np.arange(8) - 4) // 3)
    with pytest.raises(IrlabError, match="division by zero"):
        lib(a, 0)
    b = np.arange(8, dtype="int32")
    lib(b, -1)
    np.testing.assert_array_equal(b, -np.arange(8))


# -- memory: stack, heap ----------------------------------------------------------------------
@T.prim_func
def alloc_both(a: T.handle, b: T.handle):
    T.func_attr({"global_symbol": "alloc_both", "tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    small = T.allocate([16], "float32", "global")
    S = T.decl_buffer((16,), "float32", data=small)
    big = T.allocate([n], "float32", "global")
    H = T.decl_buffer((n,), "float32", data=big)
    huge = T.allocate([70000], "float32", "global")
    G = T.decl_buffer((70000,), "float32", data=huge)
    for i in range(16):
        S[i] = T.Cast("float32", i)
    for i in range(n):
        H[i] = A[i] * T.float32(2)
        G[i] = H[i] + S[i % 16]
    for i in range(n):
        B[i] = G[i]


def test_stack_and_heap_allocation():
    lib = irlab.build(alloc_both, target="c")
    src = lib.get_source()
    assert "float small[16] __attribute__((aligned(64)));" in src
    assert "float *big = (float *)irlab_alloc(4 * (int64_t)n);" in src
    assert "float *huge = (float *)irlab_alloc(4 * 70000);" in src
    assert "if (huge == NULL) { free(big); return -2; }  /* out of memory */" in src
    assert "free(big);" in src
    for target, mod in build_both(alloc_both).items():
        a = RNG.standard_normal(100).astype("float32")
        b = np.zeros(100, "float32")
        mod(a, b)
        np.testing.assert_allclose(b, a * 2 + np.arange(100) % 16, rtol=1e-6, err_msg=target)


# -- asserts, call_packed ----------------------------------------------------------------------
@T.prim_func
def par_assert(A: T.Buffer((64,), "int32"), lim: T.int32):
    T.func_attr({"global_symbol": "par_assert", "tir.noalias": True})
    for i in T.parallel(64):
        assert A[i] < lim, "value too large"
        A[i] = A[i] + 1


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_assert_fails_with_message(target):
    lib = irlab.build(par_assert, target=target)
    a = np.arange(64, dtype="int32")
    lib(a, 100)
    np.testing.assert_array_equal(a, np.arange(64) + 1)
    with pytest.raises(IrlabError, match="value too large"):
        lib(a, 10)


def test_call_packed_sees_arrays():
    seen = []

    def callback(arr, x, y, name):
        seen.append((np.array(arr.numpy() if hasattr(arr, "numpy") else arr), x, y, name))

    irlab.register_func("test.codegen_c.callback", callback, override=True)

    @T.prim_func
    def calls(A: T.Buffer((2, 3), "float32"), x: T.int32):
        T.func_attr({"global_symbol": "calls", "tir.noalias": True})
        for i, j in T.grid(2, 3):
            A[i, j] = A[i, j] * T.float32(2)
        T.evaluate(T.call_packed("test.codegen_c.callback", A.data, x + 1,
                                 T.float32(0.5), "hi"))

    for target in ("c", "llvm"):
        seen.clear()
        lib = irlab.build(calls, target=target)
        a = np.arange(6, dtype="float32").reshape(2, 3)
        lib(a, 41)
        assert len(seen) == 1, target
        arr, x, y, name = seen[0]
        np.testing.assert_array_equal(arr.reshape(2, 3), np.arange(6).reshape(2, 3) * 2)
        assert (x, y, name) == (42, 0.5, "hi")


# -- sources, saving, errors -----------------------------------------------------------------
def test_export_library_and_load_back(tmp_path):
    lib = irlab.build(MyModule, target="c")
    path = lib.export_library(str(tmp_path / "mm_relu.so"))
    loaded = load_module(path)
    a, b = mm_relu_inputs()
    c = np.zeros((128, 128), "float32")
    loaded["mm_relu"](a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
    archive = lib.export_library(str(tmp_path / "mm_relu.irlab"))
    assert load_module(archive).get_source() == lib.get_source()


def test_compile_errors(monkeypatch):
    from irlab.target import codegen_c

    with pytest.raises(CompileError, match=r"line 2: this is not C;"):
        codegen_c.compile_source("int ok;\nthis is not C;\n")
    monkeypatch.setattr("irlab.runtime.module.find_c_compiler", lambda: None)
    with pytest.raises(CompileError, match="needs a C compiler"):
        codegen_c.compile_source("int x;\n")


# -- control flow, scalars, strides, externs --------------------------------------------------
@T.prim_func
def control(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32"), limit: T.int32):
    T.func_attr({"global_symbol": "control", "tir.noalias": True})
    for i in range(16):
        with T.LetStmt(A[i] * 2) as twice:
            if twice > limit:
                B[i] = twice
            else:
                B[i] = T.int32(0) - twice
    k = T.allocate([1], "int32", "local")
    K = T.decl_buffer((1,), "int32", data=k)
    K[0] = 0
    while K[0] < 5:
        A[K[0]] = A[K[0]] + 100
        K[0] = K[0] + 1


def test_control_flow():
    check_against_interpreter(control, lambda: (np.arange(16, dtype="int32") - 8,
                                                np.zeros(16, "int32"), 3))


@T.prim_func
def scalars(A: T.Buffer((16,), "int64"), x: T.int32, y: T.float32, flag: T.bool, z: T.int64):
    T.func_attr({"global_symbol": "scalars", "tir.noalias": True})
    for i in range(16):
        A[i] = T.Select(flag, T.Cast("int64", x) + z + T.Cast("int64", y), T.int64(-1))


@T.prim_func
def strided_copy(a: T.handle, b: T.handle):
    T.func_attr({"global_symbol": "strided_copy", "tir.noalias": True})
    s0 = T.int32()
    s1 = T.int32()
    A = T.match_buffer(a, (6, 5), "int32", strides=(s0, s1))
    B = T.match_buffer(b, (6, 5), "int32")
    for i, j in T.grid(6, 5):
        B[i, j] = A[i, j] * 2


@T.prim_func
def extern_call(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "extern_call", "tir.noalias": True})
    for i in range(8):
        B[i] = T.call_extern("float32", "fabsf", A[i]) + T.call_extern(
            "float32", "sqrtf", T.float32(4))


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_scalars_strides_externs(target):
    lib = irlab.build(scalars, target=target)
    a = np.zeros(16, "int64")
    lib(a, 3, 2.5, True, 10**12)
    np.testing.assert_array_equal(a, np.full(16, 3 + 10**12 + 2))
    lib(a, 3, 2.5, False, 1)
    np.testing.assert_array_equal(a, np.full(16, -1))
    big = np.arange(60, dtype="int32").reshape(6, 10)
    b = np.zeros((6, 5), "int32")
    irlab.build(strided_copy, target=target)(big[:, ::2], b)
    np.testing.assert_array_equal(b, big[:, ::2] * 2)
    x = np.linspace(-2, 2, 8).astype("float32")
    y = np.zeros(8, "float32")
    irlab.build(extern_call, target=target)(x, y)
    np.testing.assert_allclose(y, np.abs(x) + 2)


def test_module_with_two_functions():
    mod = IRModule({"par_unroll": par_unroll, "vector_ops": vector_ops})
    lib = irlab.build(mod, target="c")
    assert sorted(lib.get_func_names()) == ["par_unroll", "vector_ops"]
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    lib["par_unroll"](a, b)
    assert b[8] == 9 and b[0] == 0


def test_vector_let_and_expression_let():
    """Hand-built TIR: a vector LetStmt (a local array of lanes) and an expression Let."""
    from irlab.tir import expr as E
    from irlab.tir import stmt as S
    from irlab.tir.buffer import decl_buffer
    from irlab.tir.function import PrimFunc

    a, b = E.Var("a", "handle"), E.Var("b", "handle")
    A = decl_buffer((8,), "float32", name="A")
    B = decl_buffer((8,), "float32", name="B")
    i = E.Var("i", "int32")
    v = E.Var("v", "float32x4")
    t = E.Var("t", "float32")
    ramp = E.Ramp(i * 4, E.IntImm("int32", 1), 4)
    body = S.LetStmt(v, E.BufferLoad(A, [ramp]) * E.Broadcast(E.FloatImm("float32", 3.0), 4),
                     S.BufferStore(B, v + E.Broadcast(E.Let(t, E.BufferLoad(A, [i]),
                                                            t * t), 4), [ramp]))
    func = PrimFunc([a, b], S.For(i, E.IntImm("int32", 0), E.IntImm("int32", 2),
                                  S.ForKind.SERIAL, body),
                    buffer_map={a: A, b: B}).with_attr("global_symbol", "vlet")
    x = np.arange(8, dtype="float32")
    expected = np.array(x * 3 + np.repeat(x[[0, 1]] ** 2, 4), "float32")
    for target in ("c", "llvm"):
        y = np.zeros(8, "float32")
        irlab.build(func, target=target)(x, y)
        np.testing.assert_allclose(y, expected, err_msg=target)
    src = irlab.build(func, target="c").get_source()
    assert "float v[4];" in src and "const float t = A[i];" in src


def test_shared_library_is_cached(tmp_path, monkeypatch):
    from irlab.target import codegen_c

    monkeypatch.setenv("IRLAB_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("IRLAB_CACHE", raising=False)
    first = irlab.build(par_unroll, target="c")
    assert first.path.startswith(str(tmp_path / "c"))
    stamp = os.path.getmtime(first.path)
    again = codegen_c.compile_source(first.get_source(), irlab.target.Target("c"))
    assert again == first.path and os.path.getmtime(again) == stamp


@T.prim_func
def heap_assert(a: T.handle, lim: T.int32):
    T.func_attr({"global_symbol": "heap_assert", "tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,), "int32")
    big = T.allocate([n], "int32", "global")
    H = T.decl_buffer((n,), "int32", data=big)
    for i in range(n):
        assert A[i] < lim, "too big"
        H[i] = T.truncdiv(A[i], lim)
        A[i] = H[i]


def test_early_returns_free_heap_memory():
    lib = irlab.build(heap_assert, target="c")
    src = lib.get_source()
    assert "if (!(A[i] < lim)) { free(big); return 1; }  /* assert: too big */" in src
    assert "if (err) { free(big); return 2; }  /* division by zero */" in src
    a = np.arange(10, dtype="int32") * 7
    lib(a, 100)
    np.testing.assert_array_equal(a, np.arange(10) * 7 // 100)
    with pytest.raises(IrlabError, match="too big"):
        lib(np.arange(10, dtype="int32"), 5)
    with pytest.raises(IrlabError, match="division by zero"):
        lib(np.full(10, -3, "int32"), 0)
