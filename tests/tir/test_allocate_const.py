"""T.allocate_const: parsed, printed, run by the interpreter and both codegens, seen through by
the schedule primitives."""

import numpy as np
import pytest

import irlab
from irlab.errors import ParseError
from irlab.ir import assert_structural_equal
from irlab.script import from_source
from irlab.script import tir as T
from irlab.tir import AllocateConst, Schedule


def _decl(*args, **kwargs):
    """A helper of the user's own: the parser runs it, and the T.decl_buffer it returns."""
    return T.decl_buffer(*args, **kwargs)


@T.prim_func
def offsets(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    B = T.alloc_buffer([4])
    ptr = T.allocate_const([0.5, 1.0, 1.5, 2.0], "float32", [4])
    off = _decl([4], data=ptr)
    for i in range(4):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi, 0] + off[vi]
    for i, j in T.grid(4, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * B[vi]


def _expected(a):
    return a * (a[:, :1] + np.array([0.5, 1.0, 1.5, 2.0], "float32")[:, None])


def test_parse_print_roundtrip():
    text = offsets.script()
    assert 'ptr = T.allocate_const([0.5, 1, 1.5, 2], "float32", [4])' in text
    assert "off = T.decl_buffer((4,), \"float32\", data=ptr)" in text
    assert_structural_equal(from_source(text), offsets)
    node = offsets.body.block.body
    assert isinstance(node, AllocateConst) and node.data == (0.5, 1.0, 1.5, 2.0)


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_runs_in_the_interpreter_and_the_codegens(target):
    a = np.random.default_rng(0).random((4, 8), dtype="float32")
    c = np.zeros((4, 8), "float32")
    irlab.tir.run(offsets, a, c)
    np.testing.assert_allclose(c, _expected(a), rtol=1e-6)
    built = irlab.build(offsets, target=target)
    out = irlab.nd.array(np.zeros((4, 8), "float32"))
    built(irlab.nd.array(a), out)
    np.testing.assert_allclose(out.numpy(), _expected(a), rtol=1e-6)


def test_schedules_see_through_it():
    sch = Schedule(offsets)
    sch.compute_at(sch.get_block("B"), sch.get_loops("C")[0])
    sch.cache_read(sch.get_block("C"), 0, "global")
    text = sch.mod["main"].script()
    # the cache stage goes under the constant's scope, not around it
    assert text.index("T.allocate_const") < text.index('T.block("A_global")')
    a = np.random.default_rng(1).random((4, 8), dtype="float32")
    c = np.zeros((4, 8), "float32")
    irlab.tir.run(sch.mod["main"], a, c)
    np.testing.assert_allclose(c, _expected(a), rtol=1e-6)


def test_wrong_number_of_constants_is_refused():
    with pytest.raises(ParseError, match="holds 4 elements, but 3 constants"):
        from_source('''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    ptr = T.allocate_const([1.0, 2.0, 3.0], "float32", [4])
    for i in range(4):
        A[i] = 1.0
''')
