"""relay.build compiles each kernel as soon as LowerTE has made it
(``build_module.IncrementalBuild``): the library is the one ``irlab.build`` makes of the kernel
module, parts and all; a module that is not the functions handed over is built as usual; and
LowerTE verifies a kernel once, at the end, with the same result as verifying each step."""

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.build_module import IncrementalBuild
from irlab.contrib.graph_executor import GraphModule
from irlab.relay.backend import te_compiler
from irlab.target import llvm_build, llvm_jit


def _model():
    """Three different kernels: conv2d + relu, a dense, a softmax."""
    x = relay.var("x", shape=(1, 4, 8, 8), dtype="float32")
    w = relay.var("w", shape=(8, 4, 3, 3), dtype="float32")
    d = relay.var("d", shape=(10, 512), dtype="float32")
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))
    z = relay.nn.dense(relay.nn.batch_flatten(y), d)
    return irlab.IRModule.from_expr(relay.Function([x, w, d], relay.nn.softmax(z)))


@pytest.fixture
def in_parts(monkeypatch):
    """Every function its own part, two compile threads, no caches."""
    monkeypatch.setattr(llvm_build, "PART_INSTRUCTIONS", 1)
    monkeypatch.setenv("IRLAB_COMPILE_THREADS", "2")
    monkeypatch.setenv("IRLAB_CACHE", "0")
    monkeypatch.setattr(llvm_jit, "_memory_cache", {})
    irlab.build_module._built.clear()
    relay.build_module._built.clear()


def _inputs():
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((1, 4, 8, 8)).astype("float32"),
            "w": rng.standard_normal((8, 4, 3, 3)).astype("float32"),
            "d": rng.standard_normal((10, 512)).astype("float32")}


def test_streamed_library_is_what_build_makes(in_parts, monkeypatch):
    mod = _model()
    built = []
    real = irlab.build_module.build
    monkeypatch.setattr(irlab.build_module, "build", lambda *a, **k: built.append(a) or
                        real(*a, **k))
    factory = relay.build(mod, "llvm")
    assert not built  # the streamed kernels were the library
    lib = factory.get_lib()
    assert lib.num_parts == len(factory.lowered) + 1  # one part per kernel, plus the glue
    kernels = irlab.IRModule({lf.name: lf.prim_func for lf in factory.lowered})
    whole = irlab.build(kernels, target="llvm")
    assert lib.get_source("ll-raw") == whole.get_source("ll-raw")
    assert lib.get_source("tir") == whole.get_source("tir")
    runner = GraphModule(factory["default"](irlab.cpu()))
    runner.run(**_inputs())
    want = relay.create_executor("debug", mod=mod).evaluate()(*_inputs().values())
    np.testing.assert_allclose(runner.get_output(0).numpy(), want.numpy(), rtol=1e-5,
                               atol=1e-6)


def test_another_module_is_built_as_usual(in_parts):
    factory = relay.build(_model(), "llvm")
    first, *rest = factory.lowered
    stream = IncrementalBuild("llvm")
    stream.add(first.name, first.prim_func)
    other = irlab.IRModule({lf.name: lf.prim_func for lf in rest})
    lib = stream.build_module(other)  # not what was added: built from the module
    assert set(lib.infos) == {lf.name for lf in rest}


def test_no_stream_under_instruments(in_parts):
    names = []

    @irlab.instrument.pass_instrument
    class Names:
        def run_before_pass(self, mod, info):
            names.append(info.name)

    with irlab.transform.PassContext(opt_level=3, instruments=[Names()]):
        assert IncrementalBuild("llvm")._builder is None
        relay.build(_model(), "llvm")
    assert names.count("tir.build") == 1


def test_kernels_verified_once_unless_ill_formed(monkeypatch):
    calls = []
    real = te_compiler.verify_well_formed

    def counting(mod, assert_mode=True):
        calls.append(assert_mode)
        return real(mod, assert_mode)

    monkeypatch.setattr(te_compiler, "verify_well_formed", counting)
    mod = relay.transform.InferType()(
        relay.transform.FuseOps(2)(relay.transform.InferType()(_model())))
    conv = _calls(mod["main"].body)[0].op  # the fused conv2d + relu
    target = irlab.target.Target("llvm")
    before = te_compiler.lower_function(conv, target, "k")
    assert calls == [False]  # one verification of the scheduled kernel
    assert before.schedule.enable_check  # what a user applies later is verified
    # an ill-formed end result: scheduled again, each step verified, the same kernel
    monkeypatch.setattr(te_compiler, "verify_well_formed", lambda mod, assert_mode=True: False)
    again = te_compiler.lower_function(conv, target, "k")
    assert irlab.ir.structural_equal(again.prim_func, before.prim_func)


def _calls(expr):
    """The calls of fused functions along ``expr``'s first arguments, innermost first."""
    out = []
    while isinstance(expr, relay.Call):
        if isinstance(expr.op, relay.Function):
            out.append(expr)
        expr = expr.args[0]
    return out[::-1]


def test_collector_paused_during_a_build_and_restored(monkeypatch):
    import gc

    import irlab.relay.pipeline as pipeline

    seen = []
    real = pipeline.optimize
    monkeypatch.setattr(pipeline, "optimize", lambda *a, **k: seen.append(gc.isenabled()) or
                        real(*a, **k))
    relay.build_module._built.clear()
    assert gc.isenabled()
    relay.build(_model(), "llvm")
    assert seen == [False] and gc.isenabled()
    gc.disable()  # a user's choice stays
    try:
        relay.build_module._built.clear()
        relay.build(_model(), "llvm")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_collector_pause_nests_and_survives_errors():
    import gc

    from irlab.build_module import garbage_collection_paused

    with garbage_collection_paused():
        with garbage_collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer one still runs
    assert gc.isenabled()
    with pytest.raises(irlab.errors.IrlabError):
        irlab.build(object())
    assert gc.isenabled()
