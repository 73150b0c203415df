"""Libraries compiled in parts on several threads (``irlab.target.llvm_build``): the parts
link into one working module (hooks resolved across objects), show as one LLVM module, save
and load, and compile the same code as the one-part build."""

import re
import threading

import numpy as np
import pytest

import irlab
from irlab.errors import CodegenError, IrlabError
from irlab.runtime.module import find_c_compiler, load_module
from irlab.script import ir as I
from irlab.script import tir as T
from irlab.target import Target, llvm_build, llvm_jit


@I.ir_module
class Three:
    @T.prim_func
    def scale(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
        T.func_attr({"global_symbol": "scale", "tir.noalias": True})
        for i in T.parallel(4096):
            B[i] = A[i] * T.float32(2)

    @T.prim_func
    def add(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"),
            C: T.Buffer((256,), "float32")):
        T.func_attr({"global_symbol": "add", "tir.noalias": True})
        for i in T.vectorized(256):
            C[i] = A[i] + B[i]

    @T.prim_func
    def notify(A: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "notify"})
        T.evaluate(T.call_packed("testing.llvm_parts.seen", A.data))


@pytest.fixture
def in_parts(monkeypatch):
    """Every function its own part, compiled on two threads, no caches."""
    monkeypatch.setattr(llvm_build, "PART_INSTRUCTIONS", 1)
    monkeypatch.setenv("IRLAB_COMPILE_THREADS", "2")
    monkeypatch.setenv("IRLAB_CACHE", "0")
    monkeypatch.setattr(llvm_jit, "_memory_cache", {})
    irlab.build_module._built.clear()


def _check(mod):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(4096).astype("float32")
    b = np.zeros(4096, "float32")
    mod["scale"](a, b)  # a parallel loop: the pool hook lives in the glue object
    np.testing.assert_allclose(b, a * 2)
    x, y = rng.standard_normal((2, 256)).astype("float32")
    z = np.zeros(256, "float32")
    mod["add"](x, y, z)
    np.testing.assert_allclose(z, x + y)
    seen = []
    irlab.register_func("testing.llvm_parts.seen", lambda arr: seen.append(arr.numpy()),
                        override=True)
    mod["notify"](np.arange(4, dtype="float32"))  # the packed-call hook, likewise
    np.testing.assert_array_equal(seen[0], np.arange(4, dtype="float32"))


def test_parts_run_and_show_as_one_module(in_parts):
    mod = irlab.build(Three, target="llvm")
    assert mod.num_parts == 4  # three functions + the glue object
    _check(mod)
    ll = mod.get_source("ll")
    for name in ("scale", "add", "notify", "__irlab_metadata", "__irlab_parallel_for"):
        assert f"@{name}" in ll
    assert len(re.findall(r"define [^@\n]*@scale\(", ll)) == 1
    # the hook is defined once (in the glue object), not only declared
    assert re.search(r"@__irlab_parallel_for = [a-z_ ]*global ptr null", ll)
    assert "scale:" in mod.get_source("asm")
    assert "define i32 @add(" in mod.get_source("ll-raw")
    assert "def notify(" in mod.get_source("tir")


def test_parts_compile_what_one_module_compiles(in_parts, monkeypatch):
    parts = irlab.build(Three, target="llvm")
    monkeypatch.setenv("IRLAB_COMPILE_THREADS", "0")
    irlab.build_module._built.clear()
    whole = irlab.build(Three, target="llvm")
    assert whole.num_parts == 1
    _check(whole)
    assert parts.get_source("tir") == whole.get_source("tir")

    def body(text, name):  # one optimized function, without the module's numbering
        start = re.search(rf"define [^@\n]*@{name}\(", text).start()
        code = re.sub(r"\s*;.*", "", text[start:text.index("\n}\n", start)])  # comments
        return re.sub(r"([!#])\d+", r"\1N", code)

    for name in ("scale", "add", "notify"):
        assert body(parts.get_source("ll"), name) == body(whole.get_source("ll"), name)


def test_small_programs_stay_one_module(monkeypatch):
    monkeypatch.setenv("IRLAB_COMPILE_THREADS", "2")
    irlab.build_module._built.clear()
    mod = irlab.build(Three, target="llvm")
    assert mod.num_parts == 1
    _check(mod)


def test_parts_save_and_load(in_parts, tmp_path):
    mod = irlab.build(Three, target="llvm")
    archive = mod.export_library(tmp_path / "three.irlab")
    loaded = load_module(archive)
    assert loaded.num_parts == mod.num_parts
    _check(loaded)
    assert loaded.get_source("ll") == mod.get_source("ll")
    if find_c_compiler() is None:
        with pytest.raises(IrlabError, match="C compiler"):
            mod.export_library(tmp_path / "three.so")
        return
    _check(load_module(mod.export_library(tmp_path / "three.so")))
    mod.save(str(tmp_path / "three.o"))  # the parts as one relocatable object
    data = (tmp_path / "three.o").read_bytes()
    assert data[:4] == b"\x7fELF" and b"scale" in data and b"notify" in data


def test_program_cache_recreates_parts(in_parts):
    first = irlab.build(Three, target="llvm")
    again = irlab.build(Three, target="llvm")
    assert again is not first and again.cached and again.num_parts == first.num_parts
    _check(again)


def test_instruments_see_one_lowering(in_parts):
    names = []

    @irlab.instrument.pass_instrument
    class Names:
        def run_before_pass(self, mod, info):
            names.append(info.name)

    with irlab.transform.PassContext(instruments=[Names()]):
        mod = irlab.build(Three, target="llvm")
    assert names.count("tir.build") == 1
    assert mod.num_parts == 4
    _check(mod)


def test_a_failing_part_raises(in_parts, monkeypatch):
    real = llvm_jit.compile_ir

    def broken(text, target):
        if re.search(r"define i32 @\"?add\"?\(", text):
            raise CodegenError("LLVM rejected the generated IR: (test)")
        return real(text, target)

    monkeypatch.setattr(llvm_jit, "compile_ir", broken)
    with pytest.raises(CodegenError, match="rejected"):
        irlab.build(Three, target="llvm")


def test_optimize_is_thread_safe():
    """Parallel ``optimize`` calls (outside llvmlite's lock) give the sequential results."""
    raw = str(irlab.build(Three, target="llvm").get_source("ll-raw"))
    target = Target("llvm")
    want = llvm_jit.optimize(raw, target)
    results = [None] * 8

    def work(k):
        results[k] = llvm_jit.optimize(raw, target)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == want for r in results)


def test_compile_threads_setting(monkeypatch):
    monkeypatch.setenv("IRLAB_COMPILE_THREADS", "3")
    assert llvm_build.compile_threads() == 3
    monkeypatch.setenv("IRLAB_COMPILE_THREADS", "0")
    assert llvm_build.compile_threads() == 0
    monkeypatch.setenv("IRLAB_COMPILE_THREADS", "many")
    assert 1 <= llvm_build.compile_threads() <= 4
