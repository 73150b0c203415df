"""Loop hints for LLVM: a loop annotated ``UNROLL_COUNT_KEY`` gets an ``!llvm.loop`` ID asking
LLVM's unroller for that many copies (each loop its own self-referencing ID, as LLVM requires);
the program computes what it did without the hint (AVX2 code, run on any host here; AVX-512
code is compiled and inspected)."""

import re

import numpy as np
import pytest

import irlab
from irlab import te, tir
from irlab.target.llvm_contract import UNROLL_COUNT_KEY


def _two_reductions(hint):
    """B[i] = sum_k A[i, k] and C[i] = max_k A[i, k], the k loops hinted ``hint`` times."""
    A = te.placeholder((8, 24), "float32", name="A")
    k = te.reduce_axis((0, 24), name="k")
    B = te.compute((8,), lambda i: te.sum(A[i, k], axis=[k]), name="B")
    j = te.reduce_axis((0, 24), name="j")
    C = te.compute((8,), lambda i: te.max(A[i, j], axis=[j]), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]).with_attr("global_symbol", "f"))
    if hint:
        for name in ("B", "C"):
            sch.annotate(sch.get_loops(sch.get_block(name))[-1], UNROLL_COUNT_KEY, hint)
    return sch.mod


@pytest.mark.parametrize("target,runs", [("llvm -mcpu=haswell", True),
                                         ("llvm -mcpu=znver3", True),
                                         ("llvm -mcpu=skylake-avx512", False)])
def test_unroll_hint_reaches_llvm_and_keeps_numerics(target, runs):
    lib = irlab.build(_two_reductions(4), target=target)
    ll = lib.get_source("ll-raw")  # as generated (LLVM's unroller consumes the hints)
    hints = re.findall(r'!"llvm\.loop\.unroll\.count", i32 (\d+)', ll)
    assert hints and set(hints) == {"4"}
    loop_ids = set(re.findall(r"!llvm\.loop (!\d+)", ll))
    assert len(loop_ids) == 2  # one ID per hinted loop
    for loop_id in loop_ids:  # each its own first operand
        assert re.search(rf"^{loop_id} = !{{ {loop_id}, ", ll, re.M)
    assert "llvm.loop.unroll.count" not in lib.get_source("ll")  # LLVM unrolled them
    if not runs:
        return
    a = np.random.default_rng(0).standard_normal((8, 24)).astype("float32")
    b, c = np.zeros(8, "float32"), np.zeros(8, "float32")
    lib["f"](a, b, c)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(c, a.max(axis=1))


def test_no_hint_no_loop_id():
    ll = irlab.build(_two_reductions(None), target="llvm -mcpu=haswell").get_source("ll-raw")
    assert "llvm.loop.unroll.count" not in ll
