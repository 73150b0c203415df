"""``WorkerPool``: persistent worker processes that survive the candidates they run.

A tuner builds and runs thousands of generated programs; one may hang, or crash its process
(a segfault in machine code). Each worker is a spawned process (fork is unsafe once irlab's
thread pool and LLVM are live) that runs one call at a time; a call that outlives its timeout
has its worker killed and replaced, and a worker that dies mid-call is replaced too. Either way
the call returns a ``WorkerError`` naming what happened, never raising in the tuner.
(TVM's ``PopenPoolExecutor`` plays this part.)
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor

from irlab.errors import IrlabError


class WorkerError:
    """Why a call did not return: ``kind`` is "timeout", "crash" or "exception"."""

    def __init__(self, kind, message):
        self.kind = kind
        self.message = message

    def __repr__(self):
        return f"WorkerError({self.kind}: {self.message})"


def _serve(conn):
    """The worker's loop: receive ``(fn, args)``, send ``(True, result)`` or ``(False, text)``."""
    while True:
        try:
            fn, args = conn.recv()
        except EOFError:
            return
        try:
            conn.send((True, fn(*args)))
        except BaseException as err:  # report every failure; the worker stays alive
            conn.send((False, f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=8)}"))


class _Worker:
    def __init__(self, ctx):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child,), daemon=True,
                                name="irlab-ms-worker")
        self.proc.start()
        child.close()

    def call(self, fn, args, timeout):
        try:
            self.conn.send((fn, args))
        except (BrokenPipeError, OSError) as err:
            return WorkerError("crash", f"worker process gone before the call ({err})")
        if not self.conn.poll(timeout):
            self.kill()
            return WorkerError("timeout", f"no result within {timeout:g} s; worker killed")
        try:
            ok, value = self.conn.recv()
        except (EOFError, ConnectionResetError):
            self.proc.join(1)
            return WorkerError("crash", f"worker process died (exit code "
                                        f"{self.proc.exitcode}) while running the call")
        return value if ok else WorkerError("exception", value)

    @property
    def alive(self):
        return self.proc.is_alive()

    def kill(self):
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()


class WorkerPool:
    """``max_workers`` persistent worker processes; ``map`` runs calls on them in parallel."""

    def __init__(self, max_workers=1):
        if int(max_workers) < 1:
            raise IrlabError(f"WorkerPool: max_workers must be >= 1, got {max_workers}")
        self.max_workers = int(max_workers)
        self._ctx = multiprocessing.get_context("spawn")
        self._idle = queue.Queue()
        self._lock = threading.Lock()
        self._started = 0

    def _take(self):
        with self._lock:
            if self._idle.empty() and self._started < self.max_workers:
                self._started += 1
                return _Worker(self._ctx)
        return self._idle.get()

    def _give_back(self, worker):
        if worker.alive:
            self._idle.put(worker)
        else:
            worker.kill()
            self._idle.put(_Worker(self._ctx))

    def call(self, fn, args, timeout):
        """Run ``fn(*args)`` on a worker: its result, or a ``WorkerError``. ``fn`` must be a
        module-level function (it is pickled by name)."""
        worker = self._take()
        try:
            return worker.call(fn, args, timeout)
        finally:
            self._give_back(worker)

    def map(self, fn, args_list, timeout):
        """``[call(fn, args, timeout) for args in args_list]``, up to ``max_workers`` at once."""
        if self.max_workers == 1 or len(args_list) <= 1:
            return [self.call(fn, args, timeout) for args in args_list]
        with ThreadPoolExecutor(self.max_workers) as threads:
            return list(threads.map(lambda args: self.call(fn, args, timeout), args_list))

    def shutdown(self):
        while not self._idle.empty():
            self._idle.get().kill()

    def __del__(self):
        try:
            self.shutdown()
        except Exception:  # interpreter teardown: the daemon processes die with us
            pass

    def __repr__(self):
        return f"WorkerPool(max_workers={self.max_workers}, started={self._started})"
