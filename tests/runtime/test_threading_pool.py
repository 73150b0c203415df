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
    if native:  # up to CHUNKS_PER_THREAD chunks per thread, shared out as threads come free
        assert min(threads, extent) <= len(chunks) <= threads * pool.CHUNKS_PER_THREAD
    else:
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


needs_native = pytest.mark.skipif(pool._native_failed, reason="no native pool on this host")


@needs_native
def test_claimed_call_fans_out_without_entering_python(monkeypatch):
    """A compiled call owns the native dispatcher: its parallel loop fans out to the pool's
    workers without the Python hook (``parallel_for``), which a loop of a few us would feel."""
    from irlab.runtime import compiled

    A = te.placeholder((64,), "float32", name="A")
    B = te.compute((64,), lambda i: A[i] + 1, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]).with_attr("global_symbol", "f"))
    i = sch.get_loops(sch.get_block("B"))[0]
    sch.parallel(i)
    f = irlab.build(sch.mod, target="llvm -num-cores=2")["f"]
    calls = []
    monkeypatch.setattr(compiled, "parallel_for", lambda *a: calls.append(a) or 0)
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    for _ in range(20):
        f(a, b)
    np.testing.assert_array_equal(b, a + 1)
    assert calls == [] and f._parallel is True


@needs_native
def test_dispatcher_threads_and_fallbacks():
    """Calls at 1, 2 and 3 threads compute the same; a call made while another thread holds
    the dispatcher takes the Python hook and computes the same too."""
    A = te.placeholder((8, 4000), "float32", name="A")
    B = te.compute((8, 4000), lambda i, j: A[i, j] * 2, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]).with_attr("global_symbol", "g"))
    sch.parallel(sch.get_loops(sch.get_block("B"))[0])
    a = np.random.default_rng(0).random((8, 4000)).astype("float32")
    for threads in (1, 2, 3):
        g = irlab.build(sch.mod, target=f"llvm -num-cores={threads}")["g"]
        b = np.zeros_like(a)
        g(a, b)
        np.testing.assert_array_equal(b, a * 2)
    # the dispatcher held by this thread: a call from another thread still computes
    claim = pool.claim_dispatch(2)
    try:
        out, errors = np.zeros_like(a), []
        worker = threading.Thread(target=lambda: _call_catching(g, a, out, errors))
        worker.start()
        worker.join()
        assert errors == []
        np.testing.assert_array_equal(out, a * 2)
    finally:
        pool.release_dispatch(claim)
    again = pool.claim_dispatch(2)  # handed back: claimable again
    assert again is not None
    pool.release_dispatch(again)


def _call_catching(f, *args_and_errors):
    *args, errors = args_and_errors
    try:
        f(*args)
    except BaseException as err:  # noqa: BLE001
        errors.append(err)


def test_function_without_parallel_loop_stops_claiming():
    A = te.placeholder((16,), "float32", name="A")
    B = te.compute((16,), lambda i: A[i] + 1, name="B")
    f = irlab.build(te.create_prim_func([A, B]).with_attr("global_symbol", "h"),
                    target="llvm -num-cores=2")["h"]
    a, b = np.ones(16, "float32"), np.zeros(16, "float32")
    f(a, b)
    f(a, b)
    np.testing.assert_array_equal(b, a + 1)
    assert f._parallel is (False if not pool._native_failed else None)


@needs_native
def test_every_chunk_runs_once_whether_the_worker_or_the_caller_takes_it():
    """The caller takes back a chunk its worker has not started (asleep, descheduled): over
    many fan-outs with the workers sometimes asleep, each chunk still runs exactly once."""
    import time

    seen, fn = _recording_body()
    body = BODY(fn)
    with pool.num_threads_override(3), pool.chunks_per_thread(1):
        for k in range(200):
            seen.clear()
            if k % 10 == 0:
                time.sleep(0.002)  # the workers' spin ends: they sleep on their futex
            assert pool.parallel_for(body, None, 9) == 0
            assert sorted((b, e) for b, e, _ in seen) == [(0, 3), (3, 6), (6, 9)]


@needs_native
@pytest.mark.parametrize("threads, extent, per_thread", [(2, 56, 8), (3, 10, 4), (2, 3, 8),
                                                         (3, 1000, 16), (2, 5, 1)])
def test_chunks_are_shared_out_each_exactly_once(threads, extent, per_thread):
    """A fan-out cuts the range into about ``per_thread`` chunks per thread; whichever thread
    is free takes the next one (its own range first, then the others'), and every index of
    the range runs exactly once -- also with the worker slowed down (a chunk that sleeps)."""
    import time

    seen, fn = _recording_body()

    def slow(begin, end, closure):
        if threading.current_thread() is not threading.main_thread():
            time.sleep(0.0005)  # a worker on a busy core: the caller takes over its chunks
        return fn(begin, end, closure)

    for body in (BODY(fn), BODY(slow)):
        seen.clear()
        with pool.num_threads_override(threads), pool.chunks_per_thread(per_thread):
            assert pool.parallel_for(body, None, extent) == 0
        covered = sorted(i for b, e, _ in seen for i in range(b, e))
        assert covered == list(range(extent))
        chunk = max(1, -(-extent // (threads * per_thread)))
        assert all(e - b <= chunk for b, e, _ in seen)


@needs_native
def test_compiled_loop_with_chunks_computes_the_same():
    """A compiled parallel loop (the native dispatcher's path) gives the same result for
    every chunking, its extent not a multiple of the chunk."""
    A = te.placeholder((37, 100), "float32", name="A")
    B = te.compute((37, 100), lambda i, j: A[i, j] * 2, name="B")  # exact: no FMA
    sch = tir.Schedule(te.create_prim_func([A, B]).with_attr("global_symbol", "k"))
    sch.parallel(sch.get_loops(sch.get_block("B"))[0])
    f = irlab.build(sch.mod, target="llvm -num-cores=2")["k"]
    a = np.random.default_rng(1).random((37, 100)).astype("float32")
    for per_thread in (1, 3, 8, 64):
        b = np.zeros_like(a)
        with pool.chunks_per_thread(per_thread):
            f(a, b)
        np.testing.assert_array_equal(b, a * 2)
    with pytest.raises(IrlabError):
        with pool.chunks_per_thread(0):
            pass


@needs_native
@pytest.mark.parametrize("ticks", [0, 1000, 200_000])
def test_spin_budget_changes_nothing_computed(ticks):
    """However long idle threads spin before sleeping (0: at once), fan-outs, some of them
    after a pause that outlasts the spin, run every chunk once."""
    import time

    seen, fn = _recording_body()
    body = BODY(fn)
    with pool.num_threads_override(2), pool.spin_cycles(ticks):
        for k in range(30):
            seen.clear()
            if k % 5 == 0:
                time.sleep(0.001)
            assert pool.parallel_for(body, None, 20) == 0
            assert sorted(i for b, e, _ in seen for i in range(b, e)) == list(range(20))
    with pytest.raises(IrlabError):
        with pool.spin_cycles(-1):
            pass
