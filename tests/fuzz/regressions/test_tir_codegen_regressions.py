"""Mismatches the TIR differential fuzzer found (``tests/fuzz/test_tir_fuzz.py``, issue 20),
minimized: each program runs in the TIR interpreter and compiled for LLVM and C, which must
agree exactly."""

import numpy as np
import pytest

from irlab.runtime.module import find_c_compiler
from irlab.script import tir as T
from irlab.testing.differential import assert_tir_targets_agree

TARGETS = ("llvm", "c") if find_c_compiler() else ("llvm",)


def agree(func, *args):
    assert_tir_targets_agree(func, list(args), TARGETS)


def test_int8_constants_fold_with_wrapping():
    """``x - (-128)`` on int8: the canonical simplifier made it ``x + 128`` and raised
    TIRError "literal value 128 does not fit in int8"; int8 arithmetic wraps."""
    @T.prim_func
    def f(A: T.Buffer((4,), "int8"), B: T.Buffer((4,), "int8")):
        for i in range(4):
            B[i] = A[i] - T.int8(-128) + (A[i] + T.int8(100) + T.int8(100))

    agree(f, np.array([-128, -1, 0, 127], "int8"), np.zeros(4, "int8"))


def test_int8_comparison_after_wrapping_add():
    """``x + 100 > x`` is not always true on int8 (it wraps at 28): the simplifier decided it
    by mathematical bounds, and LLVM's ``add nsw`` on i8 let LLVM do the same."""
    @T.prim_func
    def f(A: T.Buffer((4,), "int8"), B: T.Buffer((4,), "int8")):
        for i in range(4):
            B[i] = T.Select(A[i] + T.int8(100) > A[i], T.int8(1), T.int8(0))

    agree(f, np.array([-128, 27, 28, 127], "int8"), np.zeros(4, "int8"))


def test_int8_rewrite_keeps_dtype():
    """``(x * -1) * -1`` on int8 was rewritten to ``int32(x)``: a bitwise_and of i32 and i8
    then crashed LLVM codegen ("Operands must be the same type")."""
    @T.prim_func
    def f(A: T.Buffer((4,), "int16"), B: T.Buffer((4,), "int8")):
        for j in range(4):
            B[j] = T.int8(1) // (T.call_intrin("int8", "tir.bitwise_and",
                                               T.Cast("int8", A[j]) * T.int8(-1) * T.int8(-1),
                                               T.int8(7)) + T.int8(2))

    agree(f, np.array([0, 1, -300, 255], "int16"), np.zeros(4, "int8"))


def test_int64_constant_overflow_still_builds():
    """``0 - INT64_MIN`` made the canonical simplifier raise "literal value 2**63 does not fit
    in int64" during build; the constant now wraps (int64 overflow is undefined, but the
    compiler must not crash)."""
    @T.prim_func
    def f(A: T.Buffer((2,), "int8"), B: T.Buffer((2,), "float64")):
        for i in range(2):
            B[i] = T.Cast("float64", T.int64(0) - T.Select(
                A[i] < T.int8(0), T.int64(-9223372036854775808), T.int64(-9223372036854775808)))

    import irlab
    for target in TARGETS:
        irlab.build(f, target=target)


def test_c_sigmoid_of_negative_literal():
    """C printed ``exp(--1.0)`` (a decrement of a literal: compile error) for sigmoid(-1.0)."""
    @T.prim_func
    def f(A: T.Buffer((2,), "float64"), B: T.Buffer((2,), "float64")):
        for i in range(2):
            B[i] = A[i] * T.sigmoid(T.float64(-1.0))

    assert_tir_targets_agree(f, [np.array([1.0, -2.0]), np.zeros(2)], TARGETS,
                             {"B": "transcendental64"})


def test_c_round_is_half_away_from_zero():
    """``tir.round`` is C's ``round`` (TVM: ``roundf``/``llvm.round``, halves away from zero,
    as the interpreter): the C target printed ``nearbyint`` (halves to even)."""
    @T.prim_func
    def f(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "float32")):
        for i in range(6):
            B[i] = T.round(A[i])

    agree(f, np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.25], "float32"), np.zeros(6, "float32"))


def test_vectorized_if_then_else_keeps_scalar_condition():
    """VectorizeLoop broadcast the loop-invariant condition of ``if_then_else``; LLVM codegen
    then refused the vector condition ("if_then_else needs a scalar condition")."""
    @T.prim_func
    def f(A: T.Buffer((1, 4), "float32"), B: T.Buffer((1, 4), "float32")):
        for i in range(1):
            for j in T.vectorized(4):
                B[i, j] = T.if_then_else(T.int8(0) < T.int8(0), A[i, j], A[i, j] + T.float32(1))

    agree(f, np.arange(4, dtype="float32").reshape(1, 4), np.zeros((1, 4), "float32"))


def test_interpreter_vector_truncdiv_of_int16_min():
    """The interpreter's vector truncdiv took ``abs(-32768)`` in int16 (-32768 again) and
    answered 16384 for -32768 / 2; the targets' -16384 is right."""
    @T.prim_func
    def f(A: T.Buffer((2,), "int16"), B: T.Buffer((2,), "int16")):
        B[T.Ramp(0, 1, 2)] = T.Div(A[T.Ramp(0, 1, 2)], T.Broadcast(T.int16(2), 2))

    agree(f, np.array([-32768, 7], "int16"), np.zeros(2, "int16"))
    expected = np.zeros(2, "int16")
    from irlab.tir.interpreter import run
    run(f, np.array([-32768, 7], "int16"), expected)
    np.testing.assert_array_equal(expected, [-16384, 3])


@pytest.mark.parametrize("lanes", [2])
def test_interpreter_rejects_vector_if_then_else_condition(lanes):
    """A vector condition in ``if_then_else`` raised numpy's "truth value of an array is
    ambiguous" in the interpreter; now the same clear error as the codegens (use Select)."""
    from irlab.errors import TIRError
    from irlab.tir.interpreter import run

    @T.prim_func
    def f(A: T.Buffer((2,), "float32")):
        A[T.Ramp(0, 1, 2)] = T.if_then_else(T.Ramp(0, 1, 2) < T.Broadcast(1, 2),
                                            T.Broadcast(T.float32(1), 2),
                                            T.Broadcast(T.float32(2), 2))

    with pytest.raises(TIRError, match="scalar condition"):
        run(f, np.zeros(lanes, "float32"))
