"""The thread pool behind ``parallel`` loops.

Generated code outlines a parallel loop into ``body(begin, end, closure)`` and asks the
runtime (through the ``__irlab_parallel_for`` hook) to run it over ``[0, extent)``. The native
pool cuts the range into one contiguous range per thread (TVM's static schedule; the calling
thread has the first) and each range into ``CHUNKS_PER_THREAD`` chunks: a thread runs its own
range's chunks, then takes the chunks the others have not started. On a host whose cores are
shared (a worker descheduled, or on a core another process also runs on) the static split made
every fan-out wait for the slowest thread -- two threads were then little faster than one;
sharing the chunks out keeps both busy to the end, while a thread keeps the rows it had under
the static split when the host is idle (so consecutive kernels find their data in its cache).
The ``ThreadPoolExecutor`` pool keeps the static split. A parallel loop met inside a chunk
(nested parallelism) runs serially.

Two pools implement the fan-out:

* the native pool (x86-64 Linux): worker threads sit in a small JIT-compiled loop (LLVM IR
  below, compiled once with llvmlite) and never touch Python: the caller publishes each
  worker's chunk into a shared slot, runs its own chunk, and waits for the others, all in one
  native call. A chunk its worker has not taken yet when the caller is done with its own (the
  worker asleep or descheduled on a busy host) the caller takes back and runs itself, so a
  fan-out never waits for a thread that is not running. Idle workers spin (``pause``) for
  about ``SPIN_CYCLES`` time-stamp ticks
  (~0.1 ms), then sleep on a futex; a fan-out costs ~1-2 us when the workers spin, against
  ~40-100 us for a Python ``ThreadPoolExecutor`` (which GEMM-sized kernels feel: a 512^3
  float32 GEMM takes ~0.6 ms on two cores).
  Compiled code's hook is then a native dispatcher (``irlab_parallel_dispatch``): a compiled
  call claims it (``claim_dispatch``: its thread, its thread count) for its duration, and the
  call's loops fan out (or run serially at one thread, or nested) without entering Python at
  all -- the Python hook cost ~4 us per loop, as much as a small kernel. Loops of unclaimed
  calls (another thread holds the dispatcher) and nested loops on workers take the Python
  hook (``parallel_for``), which decides as described here.
* the ``ThreadPoolExecutor`` pool: everywhere else, when the native pool cannot be built, and
  when the native pool is busy (two Python threads running parallel code at once).

ctypes releases the GIL while native code runs, so the chunks really run at the same time.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import platform
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from irlab.errors import IrlabError

_state = threading.local()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def _submit_all(workers: int, calls) -> list:
    """Futures of ``calls`` (``(fn, *args)`` tuples) on the shared pool of at least
    ``workers`` threads. Under the lock: a thread wanting a bigger pool shuts the old one
    down, and a pool that is shut down refuses new work."""
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < workers:
            if _pool is not None:
                _pool.shutdown(wait=False)  # the chunks already queued still run
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="irlab-worker")
            _pool_size = workers
        return [_pool.submit(*call) for call in calls]


def default_num_threads() -> int:
    """Threads for parallel loops when the target does not say: ``IRLAB_NUM_THREADS`` or
    ``TVM_NUM_THREADS``, else the cores this process may run on."""
    for var in ("IRLAB_NUM_THREADS", "TVM_NUM_THREADS"):
        value = os.environ.get(var)
        if value:
            try:
                return max(1, int(value))
            except ValueError:
                raise IrlabError(f"{var}={value!r} is not a number of threads") from None
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


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


# -- the native pool -----------------------------------------------------------------------
# One 256-byte slot per worker; the caller writes the first cache lines, the worker the third.
#   +0 i32 seq (task number)  +8 body  +16 closure  +24 i64 the worker's thread index
#   +40 i32 caller_waiting  +48 the fan-out's shared block (irlab_pool_run)
#   +64 i32 worker_sleeping   +128 i32 done (task number)  +132 status
#   +192 i32 taken (the last task number claimed, by the worker or by the caller taking it back)
#   +196 i32 ready (the worker has entered its native loop)
SLOT_BYTES = 256
# rdtsc ticks an idle thread spins before it sleeps on a futex (``spin_cycles`` changes it).
# On a host whose cores other processes share, a thread spinning for a worker that has been
# descheduled holds a core that worker could run on: ResNet-18 at 2 threads under a load
# average of ~5 on 2 cores took 48-49 ms (median of 40 runs) with 200k or 100k, 55 ms with
# 1M (Xeon Emerald Rapids, TSC 2.1 GHz); an idle host keeps its workers spinning between
# kernels either way, and a worker that sleeps joins its fan-out late (the chunks it has not
# taken are shared out meanwhile).
SPIN_CYCLES = 200_000
CHUNKS_PER_THREAD = 8  # a fan-out's chunks per thread: see irlab_pool_share
_FUTEX_WAIT, _FUTEX_WAKE, _SYS_FUTEX = 128, 129, 202  # *_PRIVATE ops; x86-64 syscall number
_SYS_GETTID = 186

_POOL_IR = r"""
declare i64 @syscall(i64, ...)
declare void @llvm.x86.sse2.pause()
declare i64 @llvm.readcyclecounter()

@irlab_pool_spin = global i64 SPIN

; The one wait loop: spin (pause) until *word equals %value (%until_equal) or differs from it,
; for about the spin budget; then raise *sleeping and sleep on a futex on word, so the other
; side knows to wake us. Returns the value of *word that ended the wait.
define i32 @irlab_pool_wait(ptr %word, ptr %sleeping, i32 %value, i1 %until_equal) {
entry:
  br label %round

round:
  %t0 = call i64 @llvm.readcyclecounter()
  br label %spin

spin:
  %cur = load atomic i32, ptr %word acquire, align 4
  %eq = icmp eq i32 %cur, %value
  %ready = icmp eq i1 %eq, %until_equal
  br i1 %ready, label %out, label %spin_more

spin_more:
  call void @llvm.x86.sse2.pause()
  %t = call i64 @llvm.readcyclecounter()
  %dt = sub i64 %t, %t0
  %budget = load i64, ptr @irlab_pool_spin, align 8
  %short = icmp ult i64 %dt, %budget
  br i1 %short, label %spin, label %sleep

sleep:
  store atomic i32 1, ptr %sleeping seq_cst, align 4
  %cur2 = load atomic i32, ptr %word seq_cst, align 4
  %eq2 = icmp eq i32 %cur2, %value
  %ready2 = icmp eq i1 %eq2, %until_equal
  br i1 %ready2, label %woke, label %dosleep

dosleep:
  %curz = zext i32 %cur2 to i64
  %r = call i64 (i64, ...) @syscall(i64 SYS_FUTEX, ptr %word, i64 FUTEX_WAIT, i64 %curz, ptr null)
  store atomic i32 0, ptr %sleeping seq_cst, align 4
  br label %round

woke:
  store atomic i32 0, ptr %sleeping seq_cst, align 4
  br label %out

out:
  %got = phi i32 [%cur, %spin], [%cur2, %woke]
  ret i32 %got
}

define i32 @irlab_pool_worker(ptr %slot, i32 %init) {
entry:
  %seqp = getelementptr i8, ptr %slot, i64 0
  %bodyp = getelementptr i8, ptr %slot, i64 8
  %closp = getelementptr i8, ptr %slot, i64 16
  %begp = getelementptr i8, ptr %slot, i64 24
  %sharedp = getelementptr i8, ptr %slot, i64 48
  %cwp = getelementptr i8, ptr %slot, i64 40
  %slp = getelementptr i8, ptr %slot, i64 64
  %donep = getelementptr i8, ptr %slot, i64 128
  %stp = getelementptr i8, ptr %slot, i64 132
  %takenp = getelementptr i8, ptr %slot, i64 192
  %readyp = getelementptr i8, ptr %slot, i64 196
  store atomic i32 1, ptr %readyp seq_cst, align 4
  br label %wait

wait:
  %last = phi i32 [%init, %entry], [%s, %finished], [%s, %stolen]
  ; the next task: a task number other than the last one
  %s = call i32 @irlab_pool_wait(ptr %seqp, ptr %slp, i32 %last, i1 false)
  ; claim it (the caller may have run it itself: see wait_one)
  %prev = sub i32 %s, 1
  %pair = cmpxchg ptr %takenp, i32 %prev, i32 %s seq_cst seq_cst
  %mine = extractvalue { i32, i1 } %pair, 1
  br i1 %mine, label %claimed, label %stolen

stolen:
  br label %wait

claimed:
  %body = load ptr, ptr %bodyp, align 8
  %isnull = icmp eq ptr %body, null
  br i1 %isnull, label %exit, label %run

run:
  %clos = load ptr, ptr %closp, align 8
  %me = load i64, ptr %begp, align 8
  %shared = load ptr, ptr %sharedp, align 8
  %st = call i32 @irlab_pool_share(ptr %shared, i64 %me, ptr %body, ptr %clos)
  store i32 %st, ptr %stp, align 4
  %failed = icmp ne i32 %st, 0
  br i1 %failed, label %fail, label %signal

fail:
  ret i32 1

signal:
  store atomic i32 %s, ptr %donep seq_cst, align 4
  %cw = load atomic i32, ptr %cwp seq_cst, align 4
  %needwake = icmp ne i32 %cw, 0
  br i1 %needwake, label %wake, label %finished

wake:
  %r2 = call i64 (i64, ...) @syscall(i64 SYS_FUTEX, ptr %donep, i64 FUTEX_WAKE, i64 1)
  br label %finished

finished:
  br label %wait

exit:
  ret i32 0
}

define void @irlab_pool_signal(ptr %slot) {
entry:
  %seqp = getelementptr i8, ptr %slot, i64 0
  %cwp = getelementptr i8, ptr %slot, i64 40
  %donep = getelementptr i8, ptr %slot, i64 128
  %s = load atomic i32, ptr %seqp acquire, align 4
  store atomic i32 %s, ptr %donep seq_cst, align 4
  %cw = load atomic i32, ptr %cwp seq_cst, align 4
  %needwake = icmp ne i32 %cw, 0
  br i1 %needwake, label %wake, label %out

wake:
  %r = call i64 (i64, ...) @syscall(i64 SYS_FUTEX, ptr %donep, i64 FUTEX_WAKE, i64 1)
  br label %out

out:
  ret void
}

; The parallel-loop hook of compiled code when the native pool is there. Python's
; CompiledFunction claims it for one call (``claim_dispatch``): it writes the calling thread's
; id, the call's thread count and the pool's slots here. A loop met on that thread then fans
; out without entering Python (or runs serially: one thread, or a loop inside a chunk); a
; loop met on any other thread (a worker's nested loop, an unclaimed call) takes the Python
; hook (``fallback``), which decides as before.
@irlab_dispatch_owner = global i64 0
@irlab_dispatch_threads = global i64 0
@irlab_dispatch_slots = global ptr null
@irlab_dispatch_fallback = global ptr null
@irlab_dispatch_busy = global i32 0
@irlab_dispatch_loops = global i64 0 ; loops the owner met since its claim


define i32 @irlab_parallel_dispatch(ptr %body, ptr %clos, i64 %extent) {
entry:
  %tid = call i64 (i64, ...) @syscall(i64 SYS_GETTID)
  %owner = load i64, ptr @irlab_dispatch_owner, align 8
  %mine = icmp eq i64 %tid, %owner
  br i1 %mine, label %owned, label %python

python:
  %fallback = load ptr, ptr @irlab_dispatch_fallback, align 8
  %r0 = call i32 %fallback(ptr %body, ptr %clos, i64 %extent)
  ret i32 %r0

owned:
  %seen = load i64, ptr @irlab_dispatch_loops, align 8
  %seen1 = add i64 %seen, 1
  store i64 %seen1, ptr @irlab_dispatch_loops, align 8
  %busy = load i32, ptr @irlab_dispatch_busy, align 4
  %want = load i64, ptr @irlab_dispatch_threads, align 8
  %few = icmp slt i64 %extent, %want
  %n = select i1 %few, i64 %extent, i64 %want
  %one = icmp sle i64 %n, 1
  %nested = icmp ne i32 %busy, 0
  %serial = or i1 %one, %nested
  br i1 %serial, label %alone, label %fan

alone:
  %r1 = call i32 %body(i64 0, i64 %extent, ptr %clos)
  ret i32 %r1

fan:
  store i32 1, ptr @irlab_dispatch_busy, align 4
  %slots = load ptr, ptr @irlab_dispatch_slots, align 8
  %r2 = call i32 @irlab_pool_run(ptr %slots, i64 %n, ptr %body, ptr %clos, i64 %extent)
  store i32 0, ptr @irlab_dispatch_busy, align 4
  ret i32 %r2
}

; One thread's part of a fan-out: the chunks of its own range first (the rows it would have had
; under a static split, so consecutive kernels keep their data in the same core's cache), then
; whatever chunks are left in the other threads' ranges, from the next thread on. Each range's
; next chunk is an atomic counter in the shared block (see irlab_pool_run); a chunk goes to
; whoever increments its counter first, so a thread that runs slowly (descheduled on a busy
; host, or sharing its core) is helped instead of waited for. Returns the first non-zero
; status of the chunks this thread ran.
define i32 @irlab_pool_share(ptr %shared, i64 %me, ptr %body, ptr %clos) {
entry:
  %np = getelementptr i8, ptr %shared, i64 0
  %chp = getelementptr i8, ptr %shared, i64 8
  %exp = getelementptr i8, ptr %shared, i64 16
  %ncp = getelementptr i8, ptr %shared, i64 24
  %n = load i64, ptr %np, align 8
  %chunk = load i64, ptr %chp, align 8
  %extent = load i64, ptr %exp, align 8
  %nchunks = load i64, ptr %ncp, align 8
  br label %range_head

range_head:
  %k = phi i64 [0, %entry], [%k1, %range_next]
  %res = phi i32 [0, %entry], [%r, %range_next]
  %more = icmp slt i64 %k, %n
  br i1 %more, label %range, label %out

range:
  %v0 = add i64 %me, %k
  %wrap = icmp sge i64 %v0, %n
  %v1 = sub i64 %v0, %n
  %v = select i1 %wrap, i64 %v1, i64 %v0
  %vp1 = add i64 %v, 1
  %hic = mul i64 %vp1, %nchunks
  %hi = sdiv i64 %hic, %n
  %coff = mul i64 %vp1, 64
  %cp = getelementptr i8, ptr %shared, i64 %coff
  br label %grab

grab:
  %r = phi i32 [%res, %range], [%st, %run]
  %i = atomicrmw add ptr %cp, i64 1 monotonic
  %have = icmp slt i64 %i, %hi
  br i1 %have, label %run, label %range_next

run:
  %b = mul i64 %i, %chunk
  %e0 = add i64 %b, %chunk
  %over = icmp sgt i64 %e0, %extent
  %e = select i1 %over, i64 %extent, i64 %e0
  %st0 = call i32 %body(i64 %b, i64 %e, ptr %clos)
  %keep = icmp ne i32 %r, 0
  %st = select i1 %keep, i32 %r, i32 %st0
  br label %grab

range_next:
  %k1 = add i64 %k, 1
  br label %range_head

out:
  ret i32 %res
}

@irlab_pool_chunks_per_thread = global i64 PER_THREAD

define i32 @irlab_pool_run(ptr %slots, i64 %nthreads, ptr %body, ptr %clos, i64 %extent) {
entry:
  ; chunks of ~extent / (nthreads * chunks_per_thread) iterations; thread t's range is chunks
  ; [t * nchunks / nthreads, (t + 1) * nchunks / nthreads)
  %per = load i64, ptr @irlab_pool_chunks_per_thread, align 8
  %nk = mul i64 %nthreads, %per
  %nkm1 = sub i64 %nk, 1
  %exnk = add i64 %extent, %nkm1
  %ch0 = sdiv i64 %exnk, %nk
  %chsmall = icmp slt i64 %ch0, 1
  %chunk = select i1 %chsmall, i64 1, i64 %ch0
  %chm1 = sub i64 %chunk, 1
  %exch = add i64 %extent, %chm1
  %nchunks = sdiv i64 %exch, %chunk
  ; the shared block: a line of header (n, chunk, extent, nchunks), a line per counter
  %lines = add i64 %nthreads, 1
  %bytes = mul i64 %lines, 64
  %shared = alloca i8, i64 %bytes, align 64
  %hnp = getelementptr i8, ptr %shared, i64 0
  %hchp = getelementptr i8, ptr %shared, i64 8
  %hexp = getelementptr i8, ptr %shared, i64 16
  %hncp = getelementptr i8, ptr %shared, i64 24
  store i64 %nthreads, ptr %hnp, align 8
  store i64 %chunk, ptr %hchp, align 8
  store i64 %extent, ptr %hexp, align 8
  store i64 %nchunks, ptr %hncp, align 8
  br label %init_head

init_head:
  %c = phi i64 [0, %entry], [%cn, %init]
  %cmore = icmp slt i64 %c, %nthreads
  br i1 %cmore, label %init, label %pub_head

init:
  %clo = mul i64 %c, %nchunks
  %lo = sdiv i64 %clo, %nthreads
  %cn = add i64 %c, 1
  %ioff = mul i64 %cn, 64
  %ip = getelementptr i8, ptr %shared, i64 %ioff
  store i64 %lo, ptr %ip, align 8
  br label %init_head

pub_head:
  %t = phi i64 [1, %init_head], [%tn, %pub_next]
  %more = icmp slt i64 %t, %nthreads
  br i1 %more, label %pub, label %own

pub:
  %w = sub i64 %t, 1
  %off = mul i64 %w, SLOT
  %slot = getelementptr i8, ptr %slots, i64 %off
  %seqp = getelementptr i8, ptr %slot, i64 0
  %bodyp = getelementptr i8, ptr %slot, i64 8
  %closp = getelementptr i8, ptr %slot, i64 16
  %mep = getelementptr i8, ptr %slot, i64 24
  %sharedp = getelementptr i8, ptr %slot, i64 48
  %slp = getelementptr i8, ptr %slot, i64 64
  store ptr %body, ptr %bodyp, align 8
  store ptr %clos, ptr %closp, align 8
  store i64 %t, ptr %mep, align 8
  store ptr %shared, ptr %sharedp, align 8
  %seq = load atomic i32, ptr %seqp monotonic, align 4
  %ns = add i32 %seq, 1
  store atomic i32 %ns, ptr %seqp seq_cst, align 4
  %sl = load atomic i32, ptr %slp seq_cst, align 4
  %asleep = icmp ne i32 %sl, 0
  br i1 %asleep, label %pubwake, label %pub_next

pubwake:
  %r = call i64 (i64, ...) @syscall(i64 SYS_FUTEX, ptr %seqp, i64 FUTEX_WAKE, i64 1)
  br label %pub_next

pub_next:
  %tn = add i64 %t, 1
  br label %pub_head

own:
  %st0 = call i32 @irlab_pool_share(ptr %shared, i64 0, ptr %body, ptr %clos)
  br label %wait_head

wait_head:
  %t2 = phi i64 [1, %own], [%t2n, %got]
  %res = phi i32 [%st0, %own], [%res2, %got]
  %more2 = icmp slt i64 %t2, %nthreads
  br i1 %more2, label %wait_one, label %done

wait_one:
  %w2 = sub i64 %t2, 1
  %off2 = mul i64 %w2, SLOT
  %slot2 = getelementptr i8, ptr %slots, i64 %off2
  %seqp2 = getelementptr i8, ptr %slot2, i64 0
  %cwp2 = getelementptr i8, ptr %slot2, i64 40
  %donep2 = getelementptr i8, ptr %slot2, i64 128
  %stp2 = getelementptr i8, ptr %slot2, i64 132
  %takenp2 = getelementptr i8, ptr %slot2, i64 192
  %want = load atomic i32, ptr %seqp2 monotonic, align 4
  ; a worker that has not taken its chunk yet (descheduled on a busy host, or still waking
  ; from its futex) would keep us waiting: take the chunk back and run it here
  %prev2 = sub i32 %want, 1
  %pair2 = cmpxchg ptr %takenp2, i32 %prev2, i32 %want seq_cst seq_cst
  %stole = extractvalue { i32, i1 } %pair2, 1
  br i1 %stole, label %steal, label %await

steal:
  ; (its chunks are normally all taken by now: this only makes sure)
  %sts = call i32 @irlab_pool_share(ptr %shared, i64 %t2, ptr %body, ptr %clos)
  br label %got

await:
  ; the worker is done when it reports this task's number
  %d = call i32 @irlab_pool_wait(ptr %donep2, ptr %cwp2, i32 %want, i1 true)
  %stw = load i32, ptr %stp2, align 4
  br label %got

got:
  %stc = phi i32 [%sts, %steal], [%stw, %await]
  %keep = icmp ne i32 %res, 0
  %res2 = select i1 %keep, i32 %res, i32 %stc
  %t2n = add i64 %t2, 1
  br label %wait_head

done:
  ret i32 %res
}
"""

_RUN_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.c_int64)
_WORKER_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32)
_SIGNAL_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _NativePool:
    """Worker threads parked in JIT-compiled code; ``run`` fans one parallel loop out."""

    _code = None  # (engine, run, worker, signal), compiled once per process
    dispatch = None  # the dispatcher's address and globals (``_Dispatch``), with ``_code``

    _compile_lock = threading.Lock()

    @classmethod
    def _compile(cls):
        """The pool's code, compiled by the first caller (two threads loading libraries at
        once must not both compile: the loser's engine would be freed under its users)."""
        if cls._code is not None:
            return cls._code
        with cls._compile_lock:
            return cls._compile_once()

    @classmethod
    def _compile_once(cls):
        if cls._code is None:
            import llvmlite.binding as llvm

            llvm.initialize_native_target()  # idempotent, as llvm_jit's own set-up
            llvm.initialize_native_asmprinter()
            text = (_POOL_IR.replace("SYS_FUTEX", str(_SYS_FUTEX))
                    .replace("SYS_GETTID", str(_SYS_GETTID))
                    .replace("FUTEX_WAIT", str(_FUTEX_WAIT))
                    .replace("FUTEX_WAKE", str(_FUTEX_WAKE))
                    .replace("SPIN", str(SPIN_CYCLES))
                    .replace("PER_THREAD", str(CHUNKS_PER_THREAD)).replace("SLOT", str(SLOT_BYTES)))
            mod = llvm.parse_assembly(text)
            mod.verify()
            tm = llvm.Target.from_default_triple().create_target_machine(opt=2)
            engine = llvm.create_mcjit_compiler(mod, tm)
            engine.finalize_object()
            code = (engine, _RUN_TYPE(engine.get_function_address("irlab_pool_run")),
                    _WORKER_TYPE(engine.get_function_address("irlab_pool_worker")),
                    _SIGNAL_TYPE(engine.get_function_address("irlab_pool_signal")))
            cls.dispatch = _Dispatch(engine)
            cls._code = code  # last: a thread seeing _code sees the dispatcher too
        return cls._code

    def __init__(self, workers: int):
        _, self._run, self._worker, self._signal = self._compile()
        self.current = None  # the Python ``body`` of the loop being run (for ``failed``)
        self.errors = []  # what failing chunks on the workers left behind
        self.workers = workers
        self._raw = ctypes.create_string_buffer(workers * SLOT_BYTES + 64)
        self.base = (ctypes.addressof(self._raw) + 63) // 64 * 64
        self.lock = threading.Lock()
        self.threads = []
        for w in range(workers):
            thread = threading.Thread(target=self._serve, args=(self.base + w * SLOT_BYTES,),
                                      name=f"irlab-native-worker-{w}", daemon=True)
            thread.start()
            self.threads.append(thread)
        self._wait_ready()

    def _wait_ready(self, timeout=5.0):
        """Return once every worker runs its native loop. A worker still in Python needs the
        GIL, which a caller whose chunks call back into Python may hold most of the time; the
        caller would then take back every chunk of the first fan-outs (correct, but serial)."""
        import time

        deadline = time.monotonic() + timeout
        ready = [ctypes.c_int32.from_address(self.base + w * SLOT_BYTES + 196)
                 for w in range(self.workers)]
        while not all(r.value for r in ready) and time.monotonic() < deadline:
            time.sleep(0.0001)

    def _serve(self, slot):
        _state.inside = True  # a parallel loop inside a chunk runs serially
        # The native loop returns 0 when told to stop, 1 when a chunk failed: the failure is
        # then reported on this thread (where the chunk's callbacks left their errors) before
        # the caller is told the chunk is done.
        # The native loop waits for a task number different from the last one it saw; a worker
        # re-entering it after a failure passes the failed task's number, which the caller
        # cannot change before ``_signal`` (it is waiting for this chunk), so a task published
        # right after ``_signal`` is never missed.
        seq, last = ctypes.c_int32.from_address(slot), 0  # slots start zeroed: task 0
        while self._worker(slot, last):
            last = seq.value  # the failed task's number: read before ``_signal``
            try:
                self.errors.append(_chunk_failed(self.current,
                                                 ctypes.c_int32.from_address(slot + 132).value))
            except BaseException:  # noqa: BLE001 -- the worker must survive
                pass
            self._signal(slot)

    def run(self, body, native, closure, extent, threads) -> int:
        self.current = body
        self.errors = []
        _state.inside = True
        try:
            address = ctypes.cast(native, ctypes.c_void_p).value
            code = self._run(self.base, threads, address, closure, extent)
        finally:
            _state.inside = False
            self.current = None
        if code:
            _pass_on(body, code, self.errors)
        return code

    def stop(self):
        for w in range(self.workers):
            slot = self.base + w * SLOT_BYTES
            ctypes.c_void_p.from_address(slot + 8).value = None
            seq = ctypes.c_int32.from_address(slot)
            seq.value = seq.value + 1 if seq.value < 0x7FFFFFFF else -0x80000000  # as i32 add
            ctypes.CDLL(None).syscall(_SYS_FUTEX, ctypes.c_void_p(slot), _FUTEX_WAKE, 1)
        for thread in self.threads:
            thread.join(timeout=1.0)


class _Dispatch:
    """The native parallel-loop hook (``irlab_parallel_dispatch``) and its globals."""

    def __init__(self, engine):
        self.engine = engine  # the code and the globals live as long as this
        self.address = engine.get_function_address("irlab_parallel_dispatch")

        def word(name, ctype):
            return ctype.from_address(engine.get_global_value_address(name))

        self.owner = word("irlab_dispatch_owner", ctypes.c_int64)
        self.threads = word("irlab_dispatch_threads", ctypes.c_int64)
        self.slots = word("irlab_dispatch_slots", ctypes.c_void_p)
        self.fallback = word("irlab_dispatch_fallback", ctypes.c_void_p)
        self.loops = word("irlab_dispatch_loops", ctypes.c_int64)
        self.chunks_per_thread = word("irlab_pool_chunks_per_thread", ctypes.c_int64)
        self.spin_cycles = word("irlab_pool_spin", ctypes.c_int64)
        self.lock = threading.Lock()  # held by the thread whose call owns the dispatcher


def parallel_hook(fallback: int):
    """The address compiled code should call for a parallel loop: the native dispatcher
    (which calls ``fallback``, the Python hook, when the loop's thread has not claimed it),
    or ``fallback`` itself when there is no native pool here."""
    if _native_failed:
        return fallback
    try:
        _NativePool._compile()
    except Exception:  # noqa: BLE001 -- no JIT here: the Python hook does it all
        return fallback
    dispatch = _NativePool.dispatch
    dispatch.fallback.value = fallback
    return dispatch.address


@contextlib.contextmanager
def chunks_per_thread(k: int):
    """Fan loops out in ``k`` chunks per thread in this block (1: one contiguous chunk each, a
    static split; the default is ``CHUNKS_PER_THREAD``), to compare splits. A no-op without
    the native pool. Not thread-safe: for benchmarks and tests."""
    if k < 1:
        raise IrlabError(f"chunks_per_thread must be >= 1, got {k}")
    word = _pool_word("chunks_per_thread")
    previous = word.value if word is not None else None
    if word is not None:
        word.value = k
    try:
        yield
    finally:
        if word is not None:
            word.value = previous


@contextlib.contextmanager
def spin_cycles(ticks: int):
    """Let idle pool threads spin ``ticks`` time-stamp ticks before they sleep, in this block
    (the default is ``SPIN_CYCLES``), to compare. A no-op without the native pool. Not
    thread-safe: for benchmarks and tests."""
    if ticks < 0:
        raise IrlabError(f"spin_cycles must be >= 0, got {ticks}")
    word = _pool_word("spin_cycles")
    previous = word.value if word is not None else None
    if word is not None:
        word.value = ticks
    try:
        yield
    finally:
        if word is not None:
            word.value = previous


def _pool_word(name):
    """The native pool's global ``name`` (a ``_Dispatch`` attribute), or None without it."""
    if _native_failed:
        return None
    try:
        _NativePool._compile()
    except Exception:  # noqa: BLE001 -- no JIT here
        return None
    return getattr(_NativePool.dispatch, name)


_NO_POOL = object()  # the claim of a one-thread call (no pool taken)


def claim_dispatch(threads):
    """Let the calling thread's next compiled call run its parallel loops on ``threads``
    threads (None: the default) without going through Python: a claim to hand back to
    ``release_dispatch`` after the call, or None when the dispatcher is taken (another
    thread's call, or this thread inside a chunk or a callback), absent, or the native pool
    cannot be had (the Python hook then runs the loops, as before)."""
    dispatch = _NativePool.dispatch
    if dispatch is None:
        return None
    state = _state
    if getattr(state, "inside", False) or not dispatch.lock.acquire(blocking=False):
        return None
    threads = threads or default_num_threads()
    claim = _NO_POOL
    if threads > 1:
        claim = _native_pool(threads - 1)
        if claim is None or not claim.lock.acquire(blocking=False):
            dispatch.lock.release()
            return None
        claim.current, claim.errors = None, []
        dispatch.slots.value = claim.base
    tid = getattr(state, "tid", None)
    if tid is None:
        tid = state.tid = threading.get_native_id()
    dispatch.threads.value = threads
    dispatch.loops.value = 0
    dispatch.owner.value = tid
    return claim


def release_dispatch(claim, code=0) -> int:
    """Give back what ``claim_dispatch`` returned, after the call (which returned ``code``:
    when it failed in a chunk a worker ran, that worker's exception becomes this thread's);
    the parallel loops the call met."""
    dispatch = _NativePool.dispatch
    dispatch.owner.value = 0
    loops = dispatch.loops.value
    if claim is not _NO_POOL:
        if code:
            _pass_on(None, code, claim.errors)
        claim.lock.release()
    dispatch.lock.release()
    return loops


_native: _NativePool | None = None
# IRLAB_NATIVE_POOL=0 forces the ThreadPoolExecutor pool (for comparison and debugging).
_native_failed = (not sys.platform.startswith("linux")
                  or platform.machine() not in ("x86_64", "AMD64")
                  or os.environ.get("IRLAB_NATIVE_POOL", "1") in ("0", "false", "no"))
_native_lock = threading.Lock()


def _native_pool(workers: int) -> _NativePool | None:
    global _native, _native_failed
    if _native_failed:
        return None
    pool = _native
    if pool is not None and pool.workers >= workers:
        return pool
    with _native_lock:
        if _native is None or _native.workers < workers:
            try:
                new = _NativePool(workers)
            except Exception:  # noqa: BLE001 -- no JIT here: use the Python pool
                _native_failed = True
                return None
            old, _native = _native, new
            if old is not None:
                with old.lock:
                    old.stop()
        return _native


def _stop_native():
    global _native
    pool, _native = _native, None
    if pool is not None:
        with pool.lock:
            pool.stop()


def _forget_native_in_child():
    global _native, _native_lock
    _native = None  # the workers did not survive the fork
    _native_lock = threading.Lock()
    dispatch = _NativePool.dispatch
    if dispatch is not None:  # a call another thread was making did not survive either
        dispatch.owner.value = 0
        dispatch.lock = threading.Lock()


atexit.register(_stop_native)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_native_in_child)


# -- the fan-out ---------------------------------------------------------------------------
# A callback failing inside a chunk (``__irlab_call_packed``) leaves its exception in the
# thread-local ``irlab.runtime.compiled._pending`` of the thread that ran the chunk; a chunk
# run by a worker hands it over to the calling thread, which re-raises it.
def _chunk_failed(body, code):
    """On the thread that ran a failing chunk: ``body.failed(code)`` if ``body`` has it, else
    take (and return) the exception a callback left on this thread."""
    failed = getattr(body, "failed", None)
    if failed is not None:
        failed(code)
        return None
    from irlab.runtime import compiled

    error = getattr(compiled._pending, "error", None)
    compiled._pending.error = None
    return error


def _pass_on(body, code, errors):
    """On the calling thread, after a fan-out returned ``code``: a worker's exception becomes
    this thread's unless its own chunk left one."""
    if getattr(body, "failed", None) is not None:
        body.failed(code)  # this thread's own chunk may have failed too
        return
    errors = [e for e in errors if e is not None]
    if errors:
        from irlab.runtime import compiled

        if getattr(compiled._pending, "error", None) is None:
            compiled._pending.error = errors[0]


def _run_chunk(body, begin, end, closure, errors=None):
    _state.inside = True
    try:
        code = body(begin, end, closure)
        if code and errors is not None:
            errors.append(_chunk_failed(body, code))
        return code
    finally:
        _state.inside = False


def _native_body(body):
    native = body if isinstance(body, ctypes._CFuncPtr) else getattr(body, "native", None)
    return native if isinstance(native, ctypes._CFuncPtr) else None


def parallel_for(body, closure, extent: int) -> int:
    """Run ``body(begin, end, closure) -> int`` over ``[0, extent)``; the first non-zero
    status wins.

    ``body`` is a Python callable, or a ctypes function ``int32 (int64, int64, void*)``. The
    native pool (worker threads that never enter Python) runs it when it is a ctypes function
    or carries one as ``body.native``; when a chunk run that way returns non-zero, the pool calls
    ``body.failed(status)`` (if defined) on the thread that ran the chunk, so that thread-local
    error state (an exception raised by a callback) can be collected."""
    threads = min(current_num_threads(), extent)
    if threads <= 1 or getattr(_state, "inside", False):
        return body(0, extent, closure)
    native = _native_body(body)
    pool = _native_pool(threads - 1) if native is not None else None
    if pool is not None and pool.lock.acquire(blocking=False):
        try:
            return pool.run(body, native, closure, extent, threads)
        finally:
            pool.lock.release()
    step, extra = divmod(extent, threads)
    bounds, begin = [], 0
    for t in range(threads):
        end = begin + step + (1 if t < extra else 0)
        bounds.append((begin, end))
        begin = end
    errors: list = []
    futures = _submit_all(threads - 1, [(_run_chunk, body, b, e, closure, errors)
                                        for b, e in bounds[1:]])
    first = _run_chunk(body, *bounds[0], closure)
    codes = [first] + [f.result() for f in futures]
    code = next((c for c in codes if c), 0)
    if code:
        _pass_on(body, code, errors)
    return code


__all__ = ["parallel_for", "num_threads_override", "current_num_threads", "parallel_hook",
           "claim_dispatch", "release_dispatch", "chunks_per_thread", "spin_cycles"]
