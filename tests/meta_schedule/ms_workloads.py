"""Small workloads shared by the MetaSchedule tests."""

import irlab as tvm
from irlab import te
from irlab.script import tir as T


def gemm_mod(n=64, m=None, k=None):
    """A TE GEMM ``C = A @ B`` as a one-function IRModule (no schedule)."""
    m, k = m or n, k or n
    a = te.placeholder((n, k), name="A")
    b = te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((n, m), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    return tvm.IRModule({"main": te.create_prim_func([a, b, c])})


@T.prim_func
def aborts(A: T.Buffer((4,), "float32")):
    """Kills its process when run (a stand-in for a candidate that segfaults)."""
    T.func_attr({"global_symbol": "main"})
    T.evaluate(T.call_extern("int32", "abort"))


@T.prim_func
def copies_a(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
             C: T.Buffer((64, 64), "float32")):
    """Writes C = A: a 'GEMM' candidate that computes the wrong values."""
    T.func_attr({"global_symbol": "main"})
    for i, j in T.grid(64, 64):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj]


@T.prim_func
def spins(A: T.Buffer((4,), "int32")):
    """Never returns (a candidate that hangs)."""
    T.func_attr({"global_symbol": "main"})
    while A[0] >= 0:
        A[1] = A[1] + 1
