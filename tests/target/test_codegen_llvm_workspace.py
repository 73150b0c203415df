"""Heap temporaries of compiled functions (allocations over the stack limit) are cached
between calls, one block per allocation site, taken atomically: results stay right across
calls, growing symbolic sizes, and threads calling at once; the library frees the blocks
when it goes."""

import gc
import threading

import numpy as np

import irlab
from irlab import te, tir
from irlab.runtime import abi

N = 100_000  # 400 KB of float32: over the 256 KB stack limit, so the temporary is a heap block


def _two_stage(n):
    a = te.placeholder((n,), name="a")
    b = te.compute((n,), lambda i: a[i] * 2.0, name="b")
    c = te.compute((n,), lambda i: b[i] + 1.0, name="c")
    return irlab.build(tir.Schedule(te.create_prim_func([a, c])).mod, target="llvm")


def test_the_temporary_is_a_cached_block_released_with_the_library():
    lib = _two_stage(N)
    ll = lib.get_source("ll-raw")
    assert "aligned_alloc" in ll and "cmpxchg" in ll and "atomicrmw xchg" in ll
    assert abi.WORKSPACE_RELEASE_PREFIX in ll
    x = np.random.default_rng(0).standard_normal(N).astype("float32")
    out = irlab.nd.empty((N,))
    for _ in range(3):
        lib(irlab.nd.array(x), out)
        np.testing.assert_allclose(out.numpy(), x * 2 + 1, rtol=1e-6)
    del lib, out
    gc.collect()  # LLVMModule.__del__ frees the cached block, then the code goes


def test_a_symbolic_temporary_grows_and_is_reused():
    n = te.var("n")
    lib = _two_stage(n)
    rng = np.random.default_rng(1)
    for size in (N, 3 * N, N // 2, 3 * N):  # larger: a new block; smaller: the cached one
        x = rng.standard_normal(size).astype("float32")
        out = irlab.nd.empty((size,))
        lib(irlab.nd.array(x), out)
        np.testing.assert_allclose(out.numpy(), x * 2 + 1, rtol=1e-6)


def test_threads_calling_at_once_never_share_a_block():
    lib = _two_stage(N)
    failures = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(20):
            x = rng.standard_normal(N).astype("float32")
            out = irlab.nd.empty((N,))
            lib(irlab.nd.array(x), out)
            if not np.allclose(out.numpy(), x * 2 + 1, rtol=1e-6):
                failures.append(seed)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
