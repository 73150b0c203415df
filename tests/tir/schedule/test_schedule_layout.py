"""transform_layout."""

import numpy as np

from irlab.tir import Schedule
from irlab.tir.interpreter import run

from test_schedule_compute import padded_conv
from test_schedule_loops import N, check_fails, check_replay, check_same, matmul, mm_relu


def test_transform_intermediate_mm_relu():
    func = mm_relu()
    sch = Schedule(func)
    sch.transform_layout(sch.get_block("Y"), ("write", 0), lambda i, j: (j // 4, i, j % 4))
    text = sch.mod.script()
    assert "Y = T.alloc_buffer((4, 16, 4))" in text
    assert "C[v_i, v_j] = T.max(Y[v_j // 4, v_i, v_j % 4], T.float32(0))" in text
    check_same(func, sch)
    check_replay(func, sch)
    assert 'buffer=("write", 0), index_map=lambda i, j: (' in str(sch.trace)


def test_transform_padded_conv_by_name():
    func = padded_conv()
    sch = Schedule(func)
    sch.transform_layout(sch.get_block("conv"), "pad", lambda n, c, y, x: (n, y, x, c))
    assert "pad = T.alloc_buffer((1, 8, 8, 2))" in sch.mod.script()
    check_same(func, sch)
    check_replay(func, sch)


def test_transform_param_buffer():
    func = matmul()
    sch = Schedule(func)
    sch.transform_layout(sch.get_block("C"), ("read", 1), lambda k, j: (j, k))
    new = sch.mod["main"]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N)).astype("float32")
    b = rng.standard_normal((N, N)).astype("float32")
    c = np.zeros((N, N), "float32")
    run(new, a, np.ascontiguousarray(b.T), c)  # B is now stored transposed
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    check_replay(func, sch)


def test_transform_errors():
    sch = Schedule(mm_relu())
    y = sch.get_block("Y")
    check_fails(sch, lambda: sch.transform_layout(y, ("write", 3), lambda i, j: (j, i)),
                "bad buffer")
    check_fails(sch, lambda: sch.transform_layout(y, "Q", lambda i, j: (j, i)), "'Q'")
    check_fails(sch, lambda: sch.transform_layout(y, ("write", 0), lambda i: (i,)),
                "takes 1 indices")
    check_fails(sch, lambda: sch.transform_layout(y, ("write", 0), lambda i, j: (i - 1, j)),
                "non-negative")


def test_transform_non_bijective_map_is_refused():
    """Issue 20, finding 3: ``i // 2`` folds two rows into one; it was accepted and row 0
    came out [17 19 21] instead of [1 3 5]."""
    func = mm_relu()
    sch = Schedule(func)
    y = sch.get_block("Y")
    check_fails(sch, lambda: sch.transform_layout(y, ("write", 0), lambda i, j: (i // 2, j)),
                r"not bijective over the \(16, 16\) buffer Y: it maps 256 elements to 128")
    check_fails(sch, lambda: sch.transform_layout(y, ("write", 0), lambda i, j: (i + j, j),
                                                  pad_value=0.0),
                "must be made of splits")
    check_fails(sch, lambda: sch.transform_layout(y, ("write", 0), lambda i, j: (i + j, j)),
                r"\(31, 16\) has 240 elements no old one maps to \(padding: give a pad_value\)")
    check_fails(sch, lambda: sch.transform_layout(y, ("write", 0),
                                                  lambda i, j: (i, j // 3, j % 3)),
                "not bijective")
    sch.transform_layout(y, ("write", 0), lambda i, j: ((i * 16 + j) // 32, (i * 16 + j) % 32))
    assert "Y = T.alloc_buffer((8, 32))" in sch.mod.script()
    check_same(func, sch)


def test_transform_split_permutation_is_accepted_without_enumeration(monkeypatch):
    from irlab.tir.schedule import primitives_layout

    monkeypatch.setattr(primitives_layout, "ENUMERATE_LIMIT", 0)
    func = mm_relu()
    sch = Schedule(func)
    sch.transform_layout(sch.get_block("Y"), ("write", 0), lambda i, j: (j // 4, i, j % 4))
    check_same(func, sch)
    check_fails(sch, lambda: sch.transform_layout(sch.get_block("Y"), ("write", 0),
                                                  lambda a, b, c: (a * 4 + c, b)),
                "cannot check that index_map")


PADDED = """@T.prim_func
def f(A: T.Buffer((14,), "float32"), C: T.Buffer((14,), "float32")):
    B = T.alloc_buffer((14,), "float32")
    for i in range(14):
        with T.block("B"):
            vi = T.axis.spatial(14, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(14):
        with T.block("C"):
            vi = T.axis.spatial(14, i)
            C[vi] = B[vi] + T.float32(1)
"""


def test_transform_with_pad_value():
    """A split by 4 of 14 elements leaves 2 holes in the (4, 4) layout: ``pad_value`` fills
    them after the producer (TVM's semantics), the values are unchanged."""
    import irlab
    from irlab.script import from_source
    from irlab.tir.schedule.testing import verify_trace_roundtrip

    func = from_source(PADDED)
    a = np.arange(14, dtype="float32")
    sch = Schedule(func)
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i: (i // 4, i % 4),
                         pad_value=0.0)
    text = sch.mod.script()
    assert 'with T.block("B_pad")' in text and "T.where(ax0 * 4 + ax1 >= 14)" in text
    check_same(func, sch)
    verify_trace_roundtrip(sch, mod=func)
    out = Schedule(func)
    out.transform_layout(out.get_block("C"), ("write", 0), lambda i: (i // 4, i % 4),
                         pad_value=-1.0)
    c = np.zeros((4, 4), "float32")
    irlab.build(out.mod)["main"](a, c)
    expected = np.full(16, -1.0, "float32")
    expected[:14] = a * 2 + 1
    np.testing.assert_array_equal(c, expected.reshape(4, 4))
    check_fails(out, lambda: out.transform_layout(out.get_block("B"), ("read", 0),
                                                  lambda i: (i // 4, i % 4), pad_value=0.0),
                "no block writes A .*padding an input is not supported")
