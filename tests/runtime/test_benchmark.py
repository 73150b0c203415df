"""BenchmarkResult statistics and printing; time_evaluator call counts on a fake clock."""

import numpy as np
import pytest

from irlab.errors import IrlabError
from irlab.runtime import BenchmarkResult, time_evaluator, register_func, remove_global_func
from irlab.runtime import benchmark


def test_statistics_match_numpy():
    times = [0.003, 0.001, 0.002, 0.010]
    r = BenchmarkResult(times)
    assert r.results == times
    assert r.mean == pytest.approx(np.mean(times)) and r.median == pytest.approx(0.0025)
    assert r.max == 0.010 and r.min == 0.001 and r.std == pytest.approx(np.std(times))


def test_printed_table_is_tvm_form():
    r = BenchmarkResult([0.001, 0.002, 0.003])
    assert str(r) == (
        "Execution time summary:\n"
        " mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)  \n"
        "   2.0000       2.0000       3.0000       1.0000       0.8165                  ")
    assert repr(r).startswith("BenchmarkResult(min=0.001, mean=0.002, median=0.002, max=0.003, ")
    assert repr(r).endswith("results=[0.001, 0.002, 0.003])")


class FakeClock:
    """A clock the timed function advances: each call costs ``cost`` seconds."""

    def __init__(self, cost=1e-3):
        self.now, self.cost, self.calls, self.sleeps = 0.0, cost, 0, []

    def __call__(self):
        return self.now

    def work(self, *args):
        self.calls += 1
        self.now += self.cost

    def sleep(self, seconds):
        self.sleeps.append(seconds)


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(benchmark, "_clock", fake)
    monkeypatch.setattr(benchmark, "_sleep", fake.sleep)
    return fake


def test_number_and_repeat_with_warmup(clock):
    seen = []
    res = time_evaluator(lambda *a: (seen.append(a), clock.work()), number=4, repeat=3)(1, "x")
    assert clock.calls == 1 + 4 * 3
    assert set(seen) == {(1, "x")}
    assert len(res.results) == 3 and res.mean == pytest.approx(1e-3)


def test_min_repeat_ms_grows_number_like_tvm(clock):
    ev = time_evaluator(clock.work, number=1, repeat=2, min_repeat_ms=5)
    res = ev()
    # warm-up 1; repeat 0: 1 call (1 ms < 5 ms) -> number = max(5/1 + 1, 1.618) = 6 -> 6 calls;
    # repeat 1 keeps number = 6.
    assert clock.calls == 1 + 1 + 6 + 6
    assert res.results == pytest.approx((1e-3, 1e-3))
    clock.calls = 0
    ev()  # the grown number persists in the evaluator, as in TVM's mutable closure
    assert clock.calls == 1 + 6 + 6


def test_golden_ratio_growth_when_close(clock):
    clock.cost = 4e-3
    time_evaluator(clock.work, number=10, min_repeat_ms=41)()
    # 10 calls = 40 ms < 41 -> number = max(41/4 + 1, 16.18) = 16 -> 64 ms.
    assert clock.calls == 1 + 10 + 16


def test_zero_time_iterations_are_bounded(clock):
    clock.cost = 0.0
    res = time_evaluator(clock.work, number=2, min_repeat_ms=10, limit_zero_time_iterations=3)()
    assert clock.calls == 1 + 2 * 3 and res.results == (0.0,)


def test_cooldown_and_preproc(clock):
    pre = []
    time_evaluator(clock.work, number=1, repeat=5, cooldown_interval_ms=20,
                   repeats_to_cooldown=2, f_preproc=lambda *a: pre.append(a))(7)
    assert clock.sleeps == [0.02] * 3  # after repeats 0, 2 and 4
    assert pre == [(7,)] * 5


def test_preproc_by_global_name(clock):
    pre = []
    register_func("test.bench.preproc", lambda *a: pre.append(a))
    try:
        time_evaluator(clock.work, number=1, repeat=2, f_preproc="test.bench.preproc")()
    finally:
        remove_global_func("test.bench.preproc")
    assert pre == [(), ()]


def test_real_clock_and_validation():
    res = time_evaluator(lambda: sum(range(100)), number=3, repeat=2)()
    assert len(res.results) == 2 and all(t >= 0 for t in res.results)
    with pytest.raises(IrlabError, match="repeat must be >= 1"):
        time_evaluator(print, repeat=0)
    with pytest.raises(IrlabError, match="callable"):
        time_evaluator(3)


def test_time_evaluator_checks_compiled_arguments_once(monkeypatch):
    """A compiled function is timed bound to its arguments: checked by the warm-up call only,
    not on each of the timed calls (a kernel of a few us would be timed with its checks)."""
    import irlab
    from irlab import te
    from irlab.runtime.compiled import CompiledFunction

    A = te.placeholder((64,), "float32", name="A")
    B = te.compute((64,), lambda i: A[i] * 2, name="B")
    mod = irlab.build(te.create_prim_func([A, B]).with_attr("global_symbol", "double"),
                      target="llvm")
    a, b = irlab.nd.array(np.arange(64, dtype="float32")), irlab.nd.empty((64,), "float32")
    calls = []
    checked = CompiledFunction.__call__
    monkeypatch.setattr(CompiledFunction, "__call__",
                        lambda self, *args: calls.append(1) or checked(self, *args))
    result = mod.time_evaluator("double", irlab.cpu(), number=20, repeat=3)(a, b)
    assert len(result.results) == 3 and len(calls) == 1
    np.testing.assert_array_equal(b.numpy(), a.numpy() * 2)
