"""TIR intrinsics defined once (irlab.tir.intrinsics): the records, and intrinsics added from
Python run by the interpreter, LLVM and C, equal to numpy."""

import inspect

import numpy as np
import pytest

import irlab
from irlab import te, tir
from irlab.errors import CodegenError, TIRError
from irlab.runtime.module import find_c_compiler
# each code generator registers its intrinsic lowerings when it is loaded
from irlab.target import codegen_c_calls, llvm_calls  # noqa: F401
from irlab.target.c_syntax import P_ADD, P_ATOM
from irlab.tir.intrinsics import (INTRINSICS, Intrinsic, get_intrinsic, register_intrinsic,
                                  register_lowering)

HOST_LLVM = "llvm"  # code that runs is built for the host; named CPUs are only inspected
needs_cc = pytest.mark.skipif(find_c_compiler() is None, reason="no C compiler")


def _elementwise_func(op, n=16, lanes=1, dtype="float32"):
    """``B[i] = op(A[i])`` as a PrimFunc, its loop vectorized by ``lanes`` when > 1."""
    A = te.placeholder((n,), dtype, "A")
    B = te.compute((n,), lambda i: op(A[i]), name="B")
    func = te.create_prim_func([A, B]).with_attr("global_symbol", "kernel")
    if lanes > 1:
        sch = tir.Schedule(func)
        (loop,) = sch.get_loops(sch.get_block("B"))
        _, inner = sch.split(loop, [None, lanes])
        sch.vectorize(inner)
        func = sch.mod["main"]
    return func


def _run_everywhere(func, a, targets):
    """B from the interpreter and from each target built and run on the host."""
    out = {}
    b = np.zeros_like(a)
    tir.run(func, a, b)
    out["interpreter"] = b
    for target in targets:
        b = np.zeros_like(a)
        irlab.build(func, target=target)(a, b)
        out[target] = b
    return out


# -- the records -------------------------------------------------------------------------
def test_every_intrinsic_says_how_each_consumer_reads_it():
    for name, record in INTRINSICS.items():
        assert record.name == name and name.startswith("tir.")
        if record.elementwise:  # VectorizeLoop widens it: every lane is the scalar call
            assert record.pure and record.num_args is not None, name
        if record.numpy is not None:  # the interpreter's semantics
            assert record.pure, name
        assert "tir." + record.short_name == name


def test_math_intrinsics_have_a_reference_and_both_spellings():
    for name in ("exp", "log", "sqrt", "tanh", "erf", "pow", "fabs", "floor", "ceil", "round",
                 "sin", "cos", "fma", "sigmoid", "rsqrt", "exp10", "popcount", "bitwise_and",
                 "shift_right", "isnan"):
        record = get_intrinsic(name)
        assert record.numpy is not None, name
        assert record.llvm or record.libm or record.lowerings.get("llvm"), name
        assert record.libm or record.c_operator or record.c_function or \
            record.lowerings.get("c"), name
    assert "llvm" in get_intrinsic("tir.sigmoid").lowerings  # the LLVM layer registered it
    assert "Intrinsic(tir.exp, args=1, pure" in repr(get_intrinsic("exp"))


def test_registering_twice_or_badly_is_refused():
    with pytest.raises(TIRError, match="already registered"):
        register_intrinsic("tir.exp", 1)
    with pytest.raises(TIRError, match="starts with 'tir.'"):
        Intrinsic("cbrt", 1)
    with pytest.raises(TIRError, match="takes 1 argument"):
        get_intrinsic("exp")(tir.FloatImm("float32", 1.0), tir.FloatImm("float32", 2.0))


def test_a_record_builds_its_call():
    x = tir.Var("x", "float32")
    call = get_intrinsic("tir.exp")(x)
    assert isinstance(call, tir.Call) and call.op == "tir.exp" and call.dtype == "float32"
    assert get_intrinsic("isnan")(tir.Var("v", "float32x4")).dtype == "boolx4"


# -- an intrinsic added from Python, in one block ------------------------------------------
CBRT = register_intrinsic("tir.test_cbrt", 1, numpy=np.cbrt, libm="cbrt", elementwise=True,
                          tvmscript=True, override=True, doc="the cube root: C's cbrt")


@needs_cc
@pytest.mark.parametrize("lanes", [1, 8])
def test_intrinsic_spelled_by_a_c_function_runs_everywhere(lanes):
    func = _elementwise_func(CBRT, lanes=lanes)
    a = np.random.default_rng(0).uniform(-8, 8, 16).astype("float32")
    for where, b in _run_everywhere(func, a, (HOST_LLVM, "c")).items():
        np.testing.assert_allclose(b, np.cbrt(a), rtol=1e-6, err_msg=where)
    if lanes > 1:  # VectorizeLoop widened the call: one vector call per 8 lanes
        assert "T.test_cbrt(A[T.Ramp(" in irlab.lower(func).script()
    for cpu in ("haswell", "skylake-avx512"):  # named CPUs: compiled and inspected, not run
        assert "@cbrtf(" in irlab.build(func, target=f"llvm -mcpu={cpu}").get_source("ll")


def test_intrinsic_reads_and_prints_in_tvmscript():
    func = _elementwise_func(CBRT)
    text = func.script()
    assert "T.test_cbrt(A[v_i])" in text
    irlab.ir.assert_structural_equal(irlab.script.from_source(text), func)


def test_one_record_gives_every_builder_and_the_numpy_codegen():
    """tir.<name>, te.<name>, T.<name> and NumpyCodeGen all come from the record alone."""
    from irlab.codegen.numpy_codegen import NumpyCodeGen
    from irlab.script import tir as T

    x = tir.Var("x", "float32")
    for namespace in (tir, te, tir.op):
        assert namespace.test_cbrt(x).op == "tir.test_cbrt", namespace
    assert T.test_cbrt(x, dtype="float64").dtype == "float64"
    assert "cube root" in tir.test_cbrt.__doc__
    assert str(inspect.signature(tir.test_cbrt)) == "(x, span=None)"
    assert str(inspect.signature(tir.atan2)) == "(x1, x2, span=None)"
    with pytest.raises(TypeError):
        tir.test_cbrt()
    with pytest.raises(AttributeError):
        tir.not_an_intrinsic  # noqa: B018
    func = _elementwise_func(te.test_cbrt)
    a = np.random.default_rng(1).uniform(-8, 8, 16).astype("float32")
    lib = irlab.build(irlab.lower(func), target=HOST_LLVM, codegen=NumpyCodeGen())
    assert "_intrin['test_cbrt']" not in lib.get_source()  # np.cbrt: a numpy ufunc
    b = np.zeros_like(a)
    lib["kernel"](a, b)
    np.testing.assert_allclose(b, np.cbrt(a), rtol=1e-6)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # pow of a negative
@pytest.mark.parametrize("name", ["exp", "fabs", "atan2", "isnan", "popcount", "clz",
                                  "round", "sigmoid", "bitwise_xor", "pow"])
def test_numpy_codegen_runs_each_intrinsic_as_the_interpreter(name):
    from irlab.codegen.numpy_codegen import NumpyCodeGen

    record = get_intrinsic(name)
    integer = name in ("popcount", "clz", "bitwise_xor")
    dtype = "int32" if integer else "float32"
    n = 16
    A = te.placeholder((n,), dtype, "A")
    out_dtype = {"isnan": "bool", "clz": "int32"}.get(name, dtype)
    B = te.compute((n,), lambda i: record(*([A[i]] * record.num_args)), name="B")
    func = te.create_prim_func([A, B]).with_attr("global_symbol", "kernel")
    rng = np.random.default_rng(2)
    a = (rng.integers(-1000, 1000, n) if integer else rng.uniform(-3, 3, n)).astype(dtype)
    a[:4] = [0, 1, 2, 3] if integer else [0.5, -2.5, np.nan, 1.5]
    expected, got = np.zeros(n, out_dtype), np.zeros(n, out_dtype)
    tir.run(func, a, expected)
    lib = irlab.build(irlab.lower(func), target=HOST_LLVM, codegen=NumpyCodeGen())
    lib["kernel"](a, got)
    np.testing.assert_allclose(got, expected, rtol=1e-6, err_msg=lib.get_source())


def _square_plus(x):
    return x * x + x


SQUARE_PLUS = register_intrinsic("tir.test_square_plus", 1, numpy=_square_plus,
                                 override=True, doc="x * x + x, lowered per target")


@register_lowering("tir.test_square_plus", "llvm", override=True)
def _square_plus_llvm(builder, call):
    x = builder.expr(call.args[0])
    return builder.b.fadd(builder.b.fmul(x, x), x)


@register_lowering("tir.test_square_plus", "c", override=True)
def _square_plus_c(writer, call):
    x = writer.sub(call.args[0], P_ATOM)  # parenthesized unless it is an atom
    return f"{x} * {x} + {x}", P_ADD  # the text and its C precedence


@needs_cc
def test_intrinsic_with_lowerings_runs_everywhere():
    func = _elementwise_func(SQUARE_PLUS)
    a = np.random.default_rng(1).standard_normal(16).astype("float32")
    for where, b in _run_everywhere(func, a, (HOST_LLVM, "c")).items():
        np.testing.assert_allclose(b, a * a + a, rtol=1e-6, err_msg=where)
    assert "fmul" in irlab.build(func, target=HOST_LLVM).get_source("ll-raw")
    assert " * " in irlab.build(func, target="c").get_source()


def test_an_intrinsic_without_a_spelling_is_a_clear_error():
    opaque = register_intrinsic("tir.test_numpy_only", 1, numpy=np.negative, override=True)
    func = _elementwise_func(opaque)
    a = np.arange(16, dtype="float32")
    b = np.zeros_like(a)
    tir.run(func, a, b)
    np.testing.assert_array_equal(b, -a)
    with pytest.raises(CodegenError, match="does not know the intrinsic tir.test_numpy_only"):
        irlab.build(func, target=HOST_LLVM)
    with pytest.raises(CodegenError, match="does not know the intrinsic tir.test_numpy_only"):
        irlab.build(func, target="c").get_source()


def test_popcount_and_bits_run_in_the_interpreter_as_compiled():
    n = 16
    A = te.placeholder((n,), "int32", "A")
    B = te.compute((n,), lambda i: tir.popcount(A[i])
                   + tir.op.bitwise_xor(tir.op.left_shift(A[i], 3), A[i]), name="B")
    func = te.create_prim_func([A, B]).with_attr("global_symbol", "kernel")
    a = np.random.default_rng(2).integers(-2 ** 31, 2 ** 31, n).astype("int32")
    expected = np.bitwise_count(a.view("uint32")).astype("int32") + ((a << 3) ^ a)
    for where, b in _run_everywhere(func, a, (HOST_LLVM,)).items():
        np.testing.assert_array_equal(b, expected, err_msg=where)


def _numpy_clz(a):
    bits = 8 * a.dtype.itemsize
    return np.array([bits - int(v).bit_length() for v in a.view(f"u{a.dtype.itemsize}")],
                    "int32")


@needs_cc
@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64"])
def test_clz_counts_leading_zeros_everywhere(dtype):
    n = 16
    A = te.placeholder((n,), dtype, "A")
    B = te.compute((n,), lambda i: tir.clz(A[i]), name="B")
    func = te.create_prim_func([A, B]).with_attr("global_symbol", "kernel")
    info = np.iinfo(dtype)
    a = np.random.default_rng(3).integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    a[:3] = [0, 1, info.max]
    expected = _numpy_clz(a)
    b = np.zeros(n, "int32")
    tir.run(func, a, b)
    np.testing.assert_array_equal(b, expected, err_msg="interpreter")
    for target in (HOST_LLVM, "c"):
        b = np.zeros(n, "int32")
        irlab.build(func, target=target)(a, b)
        np.testing.assert_array_equal(b, expected, err_msg=target)
