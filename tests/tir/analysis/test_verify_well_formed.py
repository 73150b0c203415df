"""tir.analysis.verify_well_formed, run by tvm.build and by every schedule primitive (issue 20,
findings 1 and 2). No test here runs a program the verifier refuses: before the verifier, the
out-of-bounds kernels corrupted the heap of the process that ran them."""

import numpy as np
import pytest

import irlab as tvm
from irlab import tir
from irlab.ir.module import IRModule
from irlab.script import from_source
from irlab.tir import Schedule, ScheduleError
from irlab.tir.analysis import WellFormedError, verify_well_formed
from irlab.tir.interpreter import run

INT_INTO_FLOAT = '''@T.prim_func
def f(B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = T.int32(3)
'''

BINDING_OUTSIDE = '''@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(32):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)
'''


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_int32_stored_into_float32_buffer_is_cast(target):
    func = from_source(INT_INTO_FLOAT)
    assert "B[i] = T.float32(3)" in func.script()
    b = np.zeros(4, "float32")
    tvm.build(func, target=target, name="f")["f"](b)
    np.testing.assert_array_equal(b, [3.0, 3.0, 3.0, 3.0])  # LLVM stored 4e-45 (raw bits)


def test_int_expression_stored_into_float_buffer_is_cast():
    func = from_source('''@T.prim_func
def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = A[i] * 3
''')
    a = np.arange(-4, 4, dtype="int32")
    b = np.zeros(8, "float32")
    tvm.build(func, target="llvm", name="f")["f"](a, b)
    np.testing.assert_array_equal(b, (a * 3).astype("float32"))


def _hand_built_int_store():
    i = tir.Var("i", "int32")
    b = tir.decl_buffer((4,), "float32", "B")
    handle = tir.Var("B", "handle")
    store = tir.BufferStore(b, tir.IntImm("int32", 3), [i])
    body = tir.For(i, 0, 4, tir.ForKind.SERIAL, store)
    return tir.PrimFunc([handle], body, buffer_map={handle: b})


def test_hand_built_mismatched_store_is_rejected():
    func = _hand_built_int_store()
    with pytest.raises(WellFormedError, match=r"PrimFunc main: B\[i\] = 3 stores a int32 "
                                              r"value into a float32 buffer"):
        verify_well_formed(func)
    assert verify_well_formed(func, assert_mode=False) is False
    with pytest.raises(WellFormedError, match="cast it explicitly"):
        tvm.build(func, target="llvm", name="f")


def test_binding_outside_its_domain_is_refused_by_build():
    func = from_source(BINDING_OUTSIDE)
    with pytest.raises(WellFormedError) as info:
        tvm.build(func, target="llvm", name="f")
    message = str(info.value)
    assert "PrimFunc f, block B (<script>:4:9)" in message  # the `with T.block` line
    assert "iter var vi is bound to i, which may leave its domain [0, 16)" in message
    assert "[0, 31]" in message
    with pytest.raises(WellFormedError):
        tvm.build(func, target="c", name="f")


def test_binding_outside_its_domain_is_refused_by_schedule_primitives():
    sch = Schedule(from_source(BINDING_OUTSIDE))
    before = sch.mod["main"]
    loop, = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match=r"split: the result would not be well formed "
                                            r"\(the function was not well formed before "
                                            r"either\).*block B.*iter var vi"):
        sch.split(loop, [None, 4])
    assert sch.mod["main"] is before
    assert [i.kind for i in sch.trace.insts if not i.kind.startswith("get_")] == []


def test_guarded_binding_builds_and_runs():
    func = from_source('''@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(32):
        with T.block("B"):
            T.where(i < 16)
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)
''')
    a = np.random.default_rng(0).standard_normal(16).astype("float32")
    b = np.zeros(16, "float32")
    tvm.build(func, target="llvm", name="f")["f"](a, b)
    np.testing.assert_allclose(b, a + 1)


def test_split_with_a_tail_verifies_and_matches_the_interpreter():
    func = from_source('''@T.prim_func
def f(A: T.Buffer((30,), "float32"), B: T.Buffer((30,), "float32")):
    for i in range(30):
        with T.block("B"):
            vi = T.axis.spatial(30, i)
            B[vi] = A[vi] * T.float32(2)
''')
    sch = Schedule(func)
    outer, inner = sch.split(sch.get_loops(sch.get_block("B"))[0], [None, 4])
    sch.split(outer, [None, 3])
    sch.vectorize(inner)
    a = np.random.default_rng(1).standard_normal(30).astype("float32")
    expected, b = np.zeros(30, "float32"), np.zeros(30, "float32")
    run(func, a, expected)
    tvm.build(sch.mod, target="llvm")["main"](a, b)
    np.testing.assert_allclose(b, expected)


def test_out_of_bounds_store_is_refused_with_its_line():
    func = from_source('''@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(17):
        B[i] = A[0]
''')
    with pytest.raises(WellFormedError, match=r"PrimFunc f \(<script>:4:9\): store to B\[i\]: "
                                              r"index i of dimension 0 leaves \[0, 16\) "
                                              r"\(it ranges over \[0, 16\]\)"):
        tvm.build(func, target="llvm", name="f")


def test_out_of_bounds_load_is_refused():
    func = from_source('''@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = A[i + 1]
''')
    with pytest.raises(WellFormedError, match=r"load from A\[\(i \+ 1\)\]: index"):
        verify_well_formed(func)


def test_guarded_accesses_build_and_run():
    func = from_source('''@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((18,), "float32")):
    for i in range(20):
        if i < 18:
            B[i] = T.if_then_else(1 <= i and i < 17, A[i - 1], T.float32(0))
''')
    a = np.random.default_rng(2).standard_normal(16).astype("float32")
    b = np.ones(18, "float32")
    tvm.build(func, target="llvm", name="f")["f"](a, b)
    np.testing.assert_allclose(b, np.pad(a, 1))


def test_symbolic_shape_builds_and_runs():
    func = from_source('''@T.prim_func
def f(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        B[i] = A[i] + T.float32(1)
''')
    a = np.arange(7, dtype="float32")
    b = np.zeros(7, "float32")
    tvm.build(func, target="llvm", name="f")["f"](a, b)
    np.testing.assert_allclose(b, a + 1)


def test_undefined_variable_is_refused():
    i, n = tir.Var("i", "int32"), tir.Var("n", "int32")
    b = tir.decl_buffer((4,), "float32", "B")
    handle = tir.Var("B", "handle")
    body = tir.For(i, 0, 4, tir.ForKind.SERIAL,
                   tir.BufferStore(b, tir.Cast("float32", n), [i]))
    func = tir.PrimFunc([handle], body, buffer_map={handle: b})
    with pytest.raises(WellFormedError, match="variable n is used where it is not defined"):
        verify_well_formed(IRModule({"g": func}))


def test_well_formed_module_passes():
    mod = IRModule({"f": from_source(INT_INTO_FLOAT)})
    assert verify_well_formed(mod) is True
    assert tvm.tir.analysis.verify_well_formed(mod, assert_mode=False) is True


GATHER = '''@T.prim_func
def f(A: T.Buffer((16,), "float32"), idx: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
    for i in T.parallel(4):
        B[i] = A[idx[i]]
'''


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_data_dependent_index_is_checked_at_run_time(target):
    lib = tvm.build(from_source(GATHER), target=target, name="f")
    a = np.arange(16, dtype="float32")
    b = np.zeros(4, "float32")
    lib["f"](a, np.array([1, 5, 15, 0], "int32"), b)
    np.testing.assert_array_equal(b, [1, 5, 15, 0])
    for bad in (16, -1):
        with pytest.raises(tvm.TVMError, match=r"PrimFunc f \(<script>:4:9\): load from "
                                               r"A\[idx\[i\]\]: index out of bounds"):
            lib["f"](a, np.array([1, 5, bad, 0], "int32"), b)


def test_run_time_loop_bound_is_checked_at_run_time():
    """Only a load can go out here: should the check regress, this test reads past A instead
    of writing past it (which would corrupt the heap of the test process)."""
    func = from_source('''@T.prim_func
def f(A: T.Buffer((8,), "float32"), b: T.handle, n: T.int32):
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        B[i] = A[i] * T.float32(2)
''')
    lib = tvm.build(func, target="llvm", name="f")
    a = np.arange(8, dtype="float32")
    b = np.zeros(5, "float32")
    lib["f"](a, b, 5)
    np.testing.assert_array_equal(b, a[:5] * 2)
    with pytest.raises(tvm.TVMError, match=r"load from A\[i\]: index out of bounds"):
        lib["f"](a, np.zeros(9, "float32"), 9)


def test_proven_programs_get_no_run_time_check():
    from irlab import te
    from irlab.tir.transform.insert_bounds_checks import insert_bounds_checks

    a = te.placeholder((30, 30), name="A")
    k = te.reduce_axis((0, 30), name="k")
    c = te.compute((30, 30), lambda i, j: te.sum(a[i, k] * a[k, j], axis=k), name="C")
    sch = Schedule(te.create_prim_func([a, c]))
    i, j, kk = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i, j0, kk, j1)
    sch.vectorize(j1)
    func = sch.mod["main"]
    assert insert_bounds_checks(func) is func
    guarded = from_source(GATHER)
    assert "assert" in insert_bounds_checks(guarded).script()


def test_remembered_blocks_are_checked_in_their_new_place():
    """Verified blocks are remembered (a schedule primitive keeps most of them); one moved
    out of the scope of its buffer is still refused."""
    func = from_source('''@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]
''')
    assert verify_well_formed(func)
    root = func.body.block
    moved = func.with_fields(body=func.body.with_fields(
        block=root.with_fields(alloc_buffers=())))
    with pytest.raises(WellFormedError, match=r"block B \(<script>:7:13\): buffer B is used "
                                              "where it is not defined"):
        verify_well_formed(moved)
