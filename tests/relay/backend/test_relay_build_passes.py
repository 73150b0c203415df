"""Instruments attached to relay.build see TVM's pass sequence (reference §2.3): the
optimization pipeline, the direct calls after it, LowerTE's sequence and the TIR passes."""

import numpy as np

import irlab as tvm
from irlab import relay
from irlab.instrument import pass_instrument
from irlab.relay.pipeline import optimization_passes


def _names_seen(mod, opt_level=3):
    names = []

    @pass_instrument
    class Record:
        def run_before_pass(self, mod, info):
            names.append(info.name)

    with tvm.transform.PassContext(opt_level=opt_level, instruments=[Record()]):
        lib = relay.build(mod, "llvm")
    return names, lib


def test_relay_build_runs_tvms_sequence_under_instruments():
    x = relay.var("x", shape=(4, 4), dtype="float32")
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.exp(relay.add(x, x))))
    names, lib = _names_seen(mod)
    assert names[0] == "sequential"
    first_level = [p.info.name for p in optimization_passes()]
    assert [n for n in names if n in first_level][:3] == first_level[:3]
    i = names.index("FuseOps")
    tail = [n for n in names[i + 1:] if n != "InferType"]
    assert tail[:8] == ["InlineGlobals", "LabelOps", "AnnotateMemoryScope", "sequential",
                        "RelayToTIRTargetHook", "LowerTE", "tir.ExtractPrimFuncConstants",
                        "tir.build"]
    assert tail[8:11] == ["tir.LowerInitBlock", "tir.PlanAndUpdateBufferAllocationLocation",
                          "tir.ConvertBlocksToOpaque"]
    assert tail[-1] == "tir.LowerIntrin"
    # LowerTE is preceded by its required InferType, and followed by one
    j = names.index("LowerTE")
    assert names[j - 1] == "InferType" and names[j + 1] == "InferType"
    # the module after LowerTE holds the PrimFunc next to the fused Relay function
    m = tvm.contrib.graph_executor.GraphModule(lib["default"](tvm.cpu()))
    a = np.random.default_rng(0).random((4, 4)).astype("float32")
    m.run(x=a)
    np.testing.assert_allclose(m.get_output(0).numpy(), np.exp(a + a), rtol=1e-6)
    names_in_module = [gv.name_hint for gv in lib.ir_mod.functions]
    assert "main" in names_in_module
    assert any(n.startswith("tvmgen_default_fused_") for n in names_in_module)
