"""irlab.runtime.cache_flush: TVM's ``cache_flush_cpu_non_first_arg`` -- inputs evicted from
the CPU caches (``clflush`` on x86-64), their values untouched."""

import numpy as np

import irlab as tvm
from irlab.runtime import cache_flush
from irlab.runtime.benchmark import time_evaluator
from irlab.runtime.registry import get_global_func


def test_a_flush_leaves_the_values_of_any_array():
    rng = np.random.default_rng(0)
    data = rng.standard_normal(100_003).astype("float32")  # not a whole number of lines
    kept = data.copy()
    for array in (data, data[1:], data[::3], tvm.nd.array(data), np.empty(0, "float32")):
        cache_flush.flush_array(array)
    np.testing.assert_array_equal(data, kept)


def test_registered_under_tvms_name_and_skips_the_first_argument(monkeypatch):
    flushed = []
    monkeypatch.setattr(cache_flush, "flush_array", lambda a: flushed.append(id(a)))
    a, b, c = (np.zeros(4, "float32") for _ in range(3))
    get_global_func("cache_flush_cpu_non_first_arg")(a, b, c)
    assert flushed == [id(b), id(c)]


def test_time_evaluator_flushes_before_each_repeat(monkeypatch):
    calls = []
    monkeypatch.setattr(cache_flush, "flush_array", lambda a: calls.append("flush"))
    x = np.ones(1024, "float32")

    def kernel(out, inp):
        calls.append("call")
        out[:] = inp

    evaluator = time_evaluator(kernel, number=1, repeat=3,
                               f_preproc="cache_flush_cpu_non_first_arg")
    result = evaluator(np.empty_like(x), x)
    assert len(result.results) == 3
    # one untimed warm-up call, then a flush of the one input before each timed repeat
    assert calls[-6:] == ["flush", "call"] * 3
