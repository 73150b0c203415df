"""The verifier's bounds proofs are sound, checked on random loop nests against the TIR
interpreter (which refuses every out-of-bounds access):

* an access the verifier proves in bounds never goes out when the program runs;
* an access it refuses as leaving the buffer does go out;
* with the run-time checks of ``InsertBoundsChecks``, no access goes out: a check fails first.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from irlab import tir
from irlab.errors import IrlabError
from irlab.tir.analysis.well_formed import WellFormedError, memory_safety_checks
from irlab.tir.interpreter import run
from irlab.tir.transform.insert_bounds_checks import insert_bounds_checks

I, J = tir.Var("i", "int32"), tir.Var("j", "int32")


@st.composite
def affine(draw):
    """``a * i + b * j + c`` with small coefficients."""
    a = draw(st.integers(-3, 3))
    b = draw(st.integers(-3, 3))
    c = draw(st.integers(-6, 12))
    return I * a + J * b + c


@st.composite
def index(draw):
    """An index expression of the forms schedules and TOPI produce."""
    base = draw(affine())
    kind = draw(st.sampled_from(["affine", "div", "mod", "min", "max", "select"]))
    if kind == "div":
        return tir.floordiv(base, draw(st.integers(1, 5)))
    if kind == "mod":
        return tir.floormod(base, draw(st.integers(1, 5)))
    if kind in ("min", "max"):
        other = draw(affine())
        return tir.min(base, other) if kind == "min" else tir.max(base, other)
    if kind == "select":
        return tir.Select(draw(affine()) < draw(st.integers(0, 8)), base, draw(affine()))
    return base


@st.composite
def program(draw):
    """``for i, j: [if guard:] B[index] = A[index']`` over random extents and sizes."""
    n_a, n_b = draw(st.integers(1, 24)), draw(st.integers(1, 24))
    a = tir.decl_buffer((n_a,), "float32", "A")
    b = tir.decl_buffer((n_b,), "float32", "B")
    store = tir.BufferStore(b, tir.BufferLoad(a, [draw(index())]), [draw(index())])
    if draw(st.booleans()):
        guard = draw(affine())
        limit = draw(st.integers(-2, 24))
        cond = guard < limit if draw(st.booleans()) else guard >= limit
        if draw(st.booleans()):
            cond = tir.all(cond, draw(affine()) >= draw(st.integers(-4, 4)))
        store = tir.IfThenElse(cond, store)
    body = tir.For(J, 0, draw(st.integers(1, 6)), tir.ForKind.SERIAL, store)
    body = tir.For(I, 0, draw(st.integers(1, 6)), tir.ForKind.SERIAL, body)
    pa, pb = tir.Var("A", "handle"), tir.Var("B", "handle")
    return tir.PrimFunc([pa, pb], body, buffer_map={pa: a, pb: b}), n_a, n_b


def _goes_out(func, n_a, n_b):
    """Whether running ``func`` makes an out-of-bounds access; a failed run-time check (an
    AssertStmt) is not one."""
    try:
        run(func, np.zeros(n_a, "float32"), np.zeros(n_b, "float32"))
    except IrlabError as err:
        if "out-of-bounds" in str(err):
            return True
        assert "index out of bounds" in str(err), err  # a run-time check of the verifier
    return False


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(program())
def test_bounds_proofs_are_sound(case):
    func, n_a, n_b = case
    try:
        checks = memory_safety_checks(func, "f")
    except WellFormedError as err:
        assert "leaves [0," in str(err), err
        assert _goes_out(func, n_a, n_b), f"refused but in bounds: {err}"
        return
    if not checks:
        assert not _goes_out(func, n_a, n_b), "proven in bounds but goes out"
    assert not _goes_out(insert_bounds_checks(func), n_a, n_b)
