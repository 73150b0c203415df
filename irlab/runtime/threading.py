"""The thread pool behind ``parallel`` loops.

Generated code outlines a parallel loop into ``body(begin, end, closure)`` and asks the
runtime (through the ``__irlab_parallel_for`` hook) to run it over ``[0, extent)``. The range
is cut into one contiguous chunk per thread (TVM's static schedule); the calling thread runs
the first chunk itself. ctypes releases the GIL while native code runs, so the chunks really
run at the same time. A parallel loop met inside a chunk (nested parallelism) runs serially.
"""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

from irlab.target.target import default_num_threads

_state = threading.local()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def _executor(workers: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < workers:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="irlab-worker")
            _pool_size = workers
        return _pool


def current_num_threads() -> int:
    return getattr(_state, "num_threads", None) or default_num_threads()


@contextlib.contextmanager
def num_threads_override(n):
    """Run compiled code with ``n`` threads for its parallel loops (None: the default)."""
    previous = getattr(_state, "num_threads", None)
    _state.num_threads = n or previous
    try:
        yield
    finally:
        _state.num_threads = previous


def _run_chunk(body, begin, end, closure):
    _state.inside = True
    try:
        return body(begin, end, closure)
    finally:
        _state.inside = False


def parallel_for(body, closure, extent: int) -> int:
    """Run ``body`` over ``[0, extent)``; the first non-zero status wins."""
    threads = min(current_num_threads(), extent)
    if threads <= 1 or getattr(_state, "inside", False):
        return body(0, extent, closure)
    step, extra = divmod(extent, threads)
    bounds, begin = [], 0
    for t in range(threads):
        end = begin + step + (1 if t < extra else 0)
        bounds.append((begin, end))
        begin = end
    pool = _executor(threads - 1)
    futures = [pool.submit(_run_chunk, body, b, e, closure) for b, e in bounds[1:]]
    first = _run_chunk(body, *bounds[0], closure)
    codes = [first] + [f.result() for f in futures]
    return next((c for c in codes if c), 0)


__all__ = ["parallel_for", "num_threads_override", "current_num_threads"]
