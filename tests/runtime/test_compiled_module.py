"""runtime.Module from ``irlab.build``: lookup, sources, timing, saving/loading, the object
cache, targets, and NDArray / DLPack arguments."""

import os
import re
import sys

import numpy as np
import pytest

import irlab
from irlab.errors import CompileError, IrlabError
from irlab.runtime import module as runtime_module
from irlab.runtime.benchmark import BenchmarkResult
from irlab.runtime.module import find_c_compiler, load_module
from irlab.target import Target, host_cpu
from irlab.target import llvm_jit
import irlab.build_module as build_module

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "script"))
from seed_modules import MyModule, VecAddModule  # noqa: E402


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((128, 128)).astype("float32")
    b = rng.standard_normal((128, 128)).astype("float32")
    return a, b, np.maximum(a @ b, 0)


def _vectorized():
    sch = irlab.tir.Schedule(MyModule)
    block = sch.get_block("C", func_name="mm_relu")
    _, j = sch.get_loops(block)
    _, j1 = sch.split(j, factors=[None, 16])
    sch.vectorize(j1)
    return sch.mod


@pytest.fixture(scope="module")
def mod():
    return irlab.build(MyModule, target="llvm")


# -- lookup ---------------------------------------------------------------------------------
def test_function_lookup(mod):
    a, b, want = _inputs()
    f = mod["mm_relu"]
    assert mod.get_function("mm_relu") is f
    assert f.name == "mm_relu" and "mm_relu(A: Buffer((128, 128), float32)" in repr(f)
    for call in (f, mod.get_function("mm_relu"), mod):  # mod(...) calls the entry function
        c = np.zeros((128, 128), "float32")
        call(a, b, c)
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)
    assert mod.get_func_names() == ["mm_relu"]
    assert mod.entry_name == "mm_relu"
    assert mod.implements_function("mm_relu") and not mod.implements_function("main")
    with pytest.raises(IrlabError, match="no function 'nope'.*mm_relu"):
        mod["nope"]
    with pytest.raises(IrlabError, match="looked up by name"):
        mod[0]
    assert "Module(llvm" in repr(mod) and "mm_relu" in repr(mod)


def test_imported_modules():
    main = irlab.build(MyModule)
    vec = irlab.build(VecAddModule)
    assert main.imported_modules == []
    main.import_module(vec)
    assert main.imported_modules == [vec]
    assert not main.implements_function("main")
    assert main.implements_function("main", query_imports=True)
    with pytest.raises(IrlabError, match="no function 'main'"):
        main.get_function("main")
    f = main.get_function("main", query_imports=True)
    a, out = np.arange(8, dtype="float32"), np.zeros(8, "float32")
    f(a, out)
    np.testing.assert_array_equal(out, a + 1)
    # time_evaluator finds imported functions too
    res = main.time_evaluator("main", irlab.cpu(0), number=2, repeat=1)(a, out)
    assert len(res.results) == 1


# -- sources --------------------------------------------------------------------------------
def test_get_source_formats(mod):
    raw = mod.get_source("ll-raw")
    assert re.search(r'define i32 @"?mm_relu"?\(ptr', raw)  # llvmlite may quote names
    assert "__irlab_metadata" in raw
    ll = mod.get_source("ll")
    assert ll == mod.get_source() and mod.format == "ll"
    assert re.search(r'define .*i32 @"?mm_relu"?\(ptr', ll)
    asm = mod.get_source("s")
    assert asm == mod.get_source("asm")
    assert "mm_relu:" in asm
    tir = mod.get_source("tir")
    assert "def mm_relu(" in tir and "T.prim_func" in tir
    with pytest.raises(IrlabError, match="unknown format 'xyz'"):
        mod.get_source("xyz")


def test_vectorized_code_runs_on_the_host():
    m = irlab.build(_vectorized(), target="llvm")
    a, b, want = _inputs(1)
    c = np.zeros((128, 128), "float32")
    m["mm_relu"](a, b, c)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target,widest,narrower", [
    ("llvm -mcpu=skylake-avx512", "zmm", None),
    ("llvm -mcpu=haswell", "ymm", "zmm"),
    ("llvm -mcpu=znver3", "ymm", "zmm"),
    ("llvm -mcpu=x86-64", "xmm", "ymm"),
    ("llvm -mcpu=haswell -mattr=+avx512f", "zmm", None),
])
def test_vectorized_assembly_uses_the_target_widest_registers(target, widest, narrower):
    """Compiled for a named CPU (the host may lack it: inspected, not run)."""
    asm = irlab.build(_vectorized(), target=target).get_source("s")
    assert widest in asm
    assert narrower is None or narrower not in asm


# -- timing ---------------------------------------------------------------------------------
def test_time_evaluator(mod):
    a, b, want = _inputs()
    c = np.zeros((128, 128), "float32")
    res = mod.time_evaluator("mm_relu", irlab.cpu(0), number=3, repeat=2)(a, b, c)
    assert isinstance(res, BenchmarkResult)
    assert len(res.results) == 2 and all(r > 0 for r in res.results)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)
    text = str(res)
    assert text.startswith("Execution time summary:\n")
    assert "mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)" in text
    with pytest.raises(IrlabError, match="no function"):
        mod.time_evaluator("nope", irlab.cpu(0))


# -- saving and loading ---------------------------------------------------------------------
def _check_loaded(loaded):
    a, b, want = _inputs(2)
    assert loaded.get_func_names() == ["mm_relu"]
    c = np.zeros((128, 128), "float32")
    loaded["mm_relu"](a, b, c)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)
    out = irlab.nd.empty((128, 128))
    loaded(irlab.nd.array(a), b, out)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-4)
    # the checks before native code still apply
    with pytest.raises(IrlabError, match=r"argument 2 \(C\)"):
        loaded["mm_relu"](a, b, np.zeros((128, 127), "float32"))
    return c


def test_export_archive_and_load(mod, tmp_path):
    path = mod.export_library(tmp_path / "m.irlab")
    assert path == str(tmp_path / "m.irlab") and os.path.exists(path)
    loaded = load_module(path)
    _check_loaded(loaded)
    assert loaded.get_source("ll") == mod.get_source("ll")
    assert loaded.get_source("tir") == mod.get_source("tir")
    assert "mm_relu:" in loaded.get_source("s")


def test_export_shared_library_and_load(mod, tmp_path):
    path = tmp_path / "m.so"
    if find_c_compiler() is None:
        with pytest.raises(CompileError, match="no C compiler"):
            mod.export_library(path)
        return
    mod.export_library(path)
    loaded = load_module(path)
    assert isinstance(loaded, runtime_module.LibraryModule)
    from_so = _check_loaded(loaded)
    from_archive = _check_loaded(load_module(mod.export_library(tmp_path / "m.irlab")))
    np.testing.assert_array_equal(from_so, from_archive)
    # a .so re-exported as an archive loads again
    again = load_module(loaded.export_library(tmp_path / "again.irlab"))
    _check_loaded(again)


def test_export_shared_without_compiler(mod, tmp_path, monkeypatch):
    monkeypatch.setattr(runtime_module, "find_c_compiler", lambda: None)
    with pytest.raises(CompileError, match="no C compiler.*irlab"):
        mod.export_library(tmp_path / "m.so")


def test_load_module_errors(tmp_path):
    with pytest.raises(IrlabError, match="does not exist"):
        load_module(tmp_path / "missing.so")
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"not a library")
    with pytest.raises(IrlabError, match="cannot load"):
        load_module(junk)


def test_save(mod, tmp_path):
    mod.save(tmp_path / "x.ll")
    assert (tmp_path / "x.ll").read_text() == mod.get_source("ll")
    mod.save(str(tmp_path / "x.o"))
    data = (tmp_path / "x.o").read_bytes()
    assert data == mod.get_object() and data[:4] == b"\x7fELF"
    mod.save(tmp_path / "x.s")
    assert "mm_relu:" in (tmp_path / "x.s").read_text()


# -- the object cache -----------------------------------------------------------------------
def _fresh_caches(monkeypatch):
    """Empty in-process caches: the object cache and (when there is one) the program cache."""
    monkeypatch.setattr(llvm_jit, "_memory_cache", {})
    if hasattr(build_module, "_built"):
        monkeypatch.setattr(build_module, "_built", {})


def _clear_memory_caches():
    llvm_jit._memory_cache.clear()
    getattr(build_module, "_built", {}).clear()


def test_object_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("IRLAB_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("IRLAB_CACHE", raising=False)
    _fresh_caches(monkeypatch)
    assert llvm_jit.cache_dir() == str(tmp_path)
    a, b, want = _inputs(3)

    def run(m):
        c = np.zeros((128, 128), "float32")
        m["mm_relu"](a, b, c)
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)

    first = irlab.build(MyModule, target="llvm")
    assert first.cached is False
    run(first)
    objects = list((tmp_path / "llvm").glob("*/*.o"))
    assert len(objects) == 1 and objects[0].with_suffix(".ll").exists()
    again = irlab.build(MyModule, target="llvm")  # memory cache
    assert again.cached is True
    run(again)
    assert again.get_source("ll") == first.get_source("ll")
    _clear_memory_caches()
    from_disk = irlab.build(MyModule, target="llvm")  # disk cache
    assert from_disk.cached is True
    run(from_disk)
    other = irlab.build(MyModule, target="llvm -num-cores=1")  # another target: a miss
    assert other.cached is False
    run(other)
    assert len(list((tmp_path / "llvm").glob("*/*.o"))) == 2


def test_disk_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("IRLAB_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("IRLAB_CACHE", "0")
    _fresh_caches(monkeypatch)
    assert llvm_jit.cache_dir() is None
    assert irlab.build(VecAddModule).cached is False
    assert not (tmp_path / "llvm").exists()
    _clear_memory_caches()
    assert irlab.build(VecAddModule).cached is False


# -- targets --------------------------------------------------------------------------------
def test_target_parsing():
    t = Target("llvm")
    assert t.kind == "llvm" and t.options == {} and str(t) == "llvm"
    t = Target("llvm -mcpu=znver5 -num-cores=2")
    assert t.mcpu == "znver5" and t.num_cores == 2
    assert str(t) == "llvm -mcpu=znver5 -num-cores=2"
    assert t.mattr == []  # a pinned cpu does not take the host's features
    assert Target(str(t)) == t and hash(Target(str(t))) == hash(t)
    assert Target(t) == t
    assert Target("c").kind == "c"
    assert str(Target("llvm -mattr=+avx2,+fma -opt-level=2")) == \
        "llvm -mattr=+avx2,+fma -opt-level=2"
    assert Target({"kind": "llvm", "num-cores": 4}).num_cores == 4
    assert repr(Target("c")) == "Target('c')"


@pytest.mark.parametrize("text, match", [
    ("cuda", "unknown target kind 'cuda'"),
    ("", "a target is a string"),
    (3, "a target is a string"),
    ("llvm -foo=1", "unknown option -foo"),
    ("llvm mcpu=x", "must look like -key=value"),
    ("llvm -num-cores=many", "bad value for -num-cores"),
    ("llvm -num-cores=0", "at least 1"),
])
def test_bad_targets(text, match):
    with pytest.raises(IrlabError, match=match):
        Target(text)
    with pytest.raises(IrlabError):
        irlab.build(VecAddModule, target=text)


def test_target_context():
    assert Target.current() is None
    with pytest.raises(IrlabError, match="no target is set"):
        Target.current(allow_none=False)
    with Target("llvm -num-cores=1") as t:
        assert Target.current() is t
        with Target("c") as inner:
            assert Target.current() is inner
        assert Target.current() is t
        m = irlab.build(VecAddModule)  # the current target
        assert m.target == "llvm -num-cores=1"
    assert Target.current() is None


def test_host_features():
    name, features, triple = host_cpu()
    assert name and triple
    assert all(f.startswith("+") for f in features)
    t = Target("llvm")
    assert t.mcpu == name and t.triple == triple and t.mattr == list(features)
    for f in features:
        assert t.has_feature(f) and t.has_feature(f.lstrip("+"))
    assert not t.has_feature("no-such-feature")
    expected = 512 if t.has_feature("avx512f") else 256 if t.has_feature("avx") else 128
    assert t.vector_bits == expected
    if triple.startswith("x86_64"):
        assert t.has_feature("sse2")
    pinned = Target("llvm -mcpu=skylake-avx512 -mattr=+avx512f")
    assert pinned.has_feature("avx512f") and pinned.vector_bits == 512


# -- NDArray and DLPack arguments -----------------------------------------------------------
def test_ndarray_arguments(mod):
    a, b, want = _inputs(4)
    a_nd, b_nd, c_nd = irlab.nd.array(a), irlab.nd.array(b), irlab.nd.empty((128, 128))
    assert a_nd.is_aligned
    mod["mm_relu"](a_nd, b_nd, c_nd)
    np.testing.assert_allclose(c_nd.numpy(), want, rtol=1e-4, atol=1e-4)
    c = np.zeros((128, 128), "float32")
    mod["mm_relu"](a_nd, b, c)  # mixed
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)
    with pytest.raises(IrlabError, match=r"argument 1 \(B\): expected dtype float32"):
        mod["mm_relu"](a_nd, irlab.nd.array(b.astype("float64")), c_nd)


def test_dlpack_arguments(mod):
    a, b, want = _inputs(5)
    c = np.zeros((128, 128), "float32")
    # unaligned memory through DLPack: staged, and the result lands in the producer's memory
    raw = np.zeros(128 * 128 + 1, "float32")
    c_unaligned = raw[1:].reshape(128, 128)
    args = [irlab.nd.from_dlpack(a), irlab.nd.from_dlpack(b), irlab.nd.from_dlpack(c)]
    mod["mm_relu"](*args)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(args[2].numpy(), want, rtol=1e-4, atol=1e-4)
    out = irlab.nd.from_dlpack(c_unaligned)
    assert not out.is_aligned
    mod["mm_relu"](args[0], b, out)
    np.testing.assert_allclose(c_unaligned, want, rtol=1e-4, atol=1e-4)
    # an NDArray exported through DLPack and imported again
    back = irlab.nd.from_dlpack(irlab.nd.array(a))
    c2 = irlab.nd.empty((128, 128))
    mod["mm_relu"](back, b, c2)
    np.testing.assert_allclose(c2.numpy(), want, rtol=1e-4, atol=1e-4)
