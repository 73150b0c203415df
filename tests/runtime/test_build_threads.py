"""Building and running from several threads at once (issue 20, finding 5): the shared build
caches, the ``with Target`` scope, the C compiler's files and the LLVM compile pool stay
consistent, and every thread gets correct results."""

import locale
import os
import sys
import threading

import numpy as np
import pytest

import irlab
from irlab import relay, te
from irlab.contrib import graph_executor
from irlab.runtime.lru import LRUCache
from irlab.runtime.module import find_c_compiler
from irlab.target import Target

TARGETS = ["llvm", pytest.param("c", marks=pytest.mark.skipif(
    find_c_compiler() is None, reason="no C compiler"))]


@pytest.fixture
def switch_often():
    """Switch threads every microsecond: races that need an unlucky switch show up."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def run_threads(work, count):
    """Run ``work(k)`` in ``count`` threads started together; the exceptions they raised."""
    errors, barrier = [], threading.Barrier(count)

    def main(k):
        barrier.wait()
        try:
            work(k)
        except Exception as err:  # noqa: BLE001 - reported by the test
            errors.append(err)

    threads = [threading.Thread(target=main, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_lru_cache_shared_by_threads(switch_often):
    """A lookup moves its entry while another thread evicts it: no KeyError, no lost bound."""
    cache = LRUCache(2)

    def work(k):
        for i in range(20000):
            key = (k + i) % 3
            if cache.get(key) is None:
                cache[key] = key
            assert len(cache) <= 2

    assert run_threads(work, 6) == []


def test_target_scope_is_per_thread():
    inside, seen = threading.Event(), []
    done = threading.Event()

    def other():
        inside.wait()
        seen.append(Target.current())
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with Target("c"):
        inside.set()
        done.wait()
    thread.join()
    assert seen == [None]  # the main thread's ``with Target("c")`` is not the other's


def test_pass_context_is_per_thread():
    """A ``with PassContext(opt_level=0)`` in one thread leaves another thread's builds at
    their own level (relay.build reads PassContext.current())."""
    seen, inside, done = [], threading.Event(), threading.Event()

    def other():
        inside.wait()
        with irlab.transform.PassContext(opt_level=3, disabled_pass=["FuseOps"]):
            seen.append((irlab.transform.PassContext.current().opt_level,
                         irlab.transform.PassContext.current().disabled_pass))
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with irlab.transform.PassContext(opt_level=0):
        inside.set()
        done.wait()
        assert irlab.transform.PassContext.current().opt_level == 0
        assert irlab.transform.PassContext.current().disabled_pass == []
    thread.join()
    assert seen == [(3, ["FuseOps"])]


def small_model(seed):
    rng = np.random.default_rng(seed)
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.const(rng.standard_normal((4, 3, 3, 3)).astype("float32"))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1), channels=4, kernel_size=(3, 3)))
    y = relay.nn.batch_flatten(relay.nn.max_pool2d(y, (2, 2), strides=(2, 2)))
    d = relay.const(rng.standard_normal((10, 64)).astype("float32"))
    y = relay.nn.softmax(relay.nn.dense(y, d) + relay.const(0.5))
    return irlab.IRModule.from_expr(relay.Function([x], y))


@pytest.mark.parametrize("target", TARGETS)
def test_relay_build_from_threads(target, tmp_path, monkeypatch, switch_often):
    """Six threads build (two models, opt levels 0 and 3, a fresh disk cache, so the same
    kernels compile at once) and run: each output equals the interpreter's."""
    monkeypatch.setenv("IRLAB_CACHE_DIR", str(tmp_path))
    x = np.random.default_rng(9).standard_normal((1, 3, 8, 8)).astype("float32")
    expected = {seed: relay.create_executor("debug", mod=small_model(seed)).evaluate()(x)
                for seed in (0, 1)}

    def work(k):
        seed, opt_level = k % 2, (0, 3)[k // 2 % 2]
        with irlab.transform.PassContext(opt_level=opt_level):
            lib = relay.build(small_model(seed), target=target)
        gm = graph_executor.GraphModule(lib["default"](irlab.cpu()))
        gm.run(x=x)
        np.testing.assert_allclose(gm.get_output(0).numpy(), expected[seed].numpy(),
                                   rtol=1e-4, atol=1e-6)

    assert run_threads(work, 6) == []


@pytest.mark.parametrize("target", TARGETS)
def test_tir_build_from_threads(target, tmp_path, monkeypatch, switch_often):
    """``irlab.build`` of the same PrimFunc under each thread's own ``with Target``."""
    monkeypatch.setenv("IRLAB_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("IRLAB_COMPILE_THREADS", "2")
    a = te.placeholder((64,), name="A")
    b = te.compute((64,), lambda i: a[i] * 2.0 + 1.0, name="B")
    func = te.create_prim_func([a, b]).with_attr("global_symbol", "f")
    x = np.arange(64, dtype="float32")

    def work(k):
        with Target(target):
            lib = irlab.build(func.with_attr("thread", k % 3))
        out = np.zeros(64, "float32")
        lib["f"](x, out)
        np.testing.assert_array_equal(out, x * 2 + 1)

    before = locale.setlocale(locale.LC_ALL, None)
    assert run_threads(work, 6) == []
    # modules printed in two threads at once left LC_CTYPE at "C" (open() then read ASCII)
    assert locale.setlocale(locale.LC_ALL, None) == before
    assert not [name for root, _, names in os.walk(tmp_path) for name in names
                if name.endswith(".tmp")]


def test_parallel_for_from_threads_wanting_different_pool_sizes(switch_often):
    """Each thread asks for another pool size: growing the shared pool must not shut it down
    under another thread's feet ("cannot schedule new futures after shutdown")."""
    from irlab.runtime.threading import num_threads_override, parallel_for

    def work(k):
        for size in range(2, 9):
            seen = []
            with num_threads_override(size + k):
                parallel_for(lambda begin, end, closure: seen.extend(range(begin, end)) or 0,
                             None, 64)
            assert sorted(seen) == list(range(64))

    assert run_threads(work, 6) == []
