"""The parallel-loop pools of ``irlab.runtime.threading``: the native pool (workers parked in
JIT-compiled code) and the ThreadPoolExecutor fallback give the same chunks, statuses and
errors; a failing chunk on a worker does not lose the next fan-out."""

import ctypes
import threading

import numpy as np
import pytest

import irlab
import irlab.runtime.threading as pool
from irlab import te, tir
from irlab.errors import IrlabError

BODY = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)


def _recording_body(status_of=lambda begin: 0):
    seen, lock = [], threading.Lock()

    def body(begin, end, closure):
        with lock:
            seen.append((begin, end, threading.get_ident()))
        return status_of(begin)

    return seen, body


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
@pytest.mark.parametrize("threads, extent", [(2, 7), (3, 10), (2, 1)])
def test_chunks_cover_the_range(native, threads, extent):
    seen, fn = _recording_body()
    body = BODY(fn) if native else fn
    with pool.num_threads_override(threads):
        assert pool.parallel_for(body, None, extent) == 0
    chunks = sorted((b, e) for b, e, _ in seen)
    assert chunks[0][0] == 0 and chunks[-1][1] == extent
    assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:]))
    assert len(chunks) == min(threads, extent)


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
def test_first_nonzero_status_wins_and_next_fanout_runs(native):
    seen, fn = _recording_body(lambda begin: 5 if begin else 0)
    body = BODY(fn) if native else fn
    with pool.num_threads_override(2):
        for _ in range(50):  # a failed worker chunk must not make the next fan-out hang
            assert pool.parallel_for(body, None, 8) == 5
    seen.clear()
    ok = BODY(lambda b, e, c: 0) if native else (lambda b, e, c: 0)
    with pool.num_threads_override(2):
        assert pool.parallel_for(ok, None, 8) == 0


def test_compiled_parallel_loop_many_calls_and_errors():
    A = te.placeholder((4, 16), "float32", name="A")
    B = te.compute((4, 16), lambda i, j: A[i, j] + 1, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]).with_attr("global_symbol", "f"))
    sch.parallel(sch.get_loops(sch.get_block("B"))[0])
    f = irlab.build(sch.mod, target="llvm -num-cores=2")["f"]
    a = irlab.nd.array(np.arange(64, dtype="float32").reshape(4, 16))
    b = irlab.nd.empty((4, 16), "float32")
    for _ in range(2000):
        f(a, b)
    np.testing.assert_array_equal(b.numpy(), a.numpy() + 1)
    with pytest.raises(IrlabError):
        f(irlab.nd.array(np.zeros((3, 16), "float32")), b)  # argument check, not a hang
