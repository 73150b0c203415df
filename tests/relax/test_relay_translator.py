"""relax.testing.relay_translator.from_relay: every model of relay.testing.MODELS reaches the
Relax VM and computes what relay.build's graph executor computes (same kernels: equal bits at
opt_level 3; per-op kernels at opt_level 0 within float tolerance)."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax, relay
from irlab.contrib import graph_executor
from irlab.errors import IrlabError
from irlab.relay.testing import MODELS, SMALL_MODELS


def _inputs(mod, params, seed=0):
    rng = np.random.default_rng(seed)
    return {p.name_hint: rng.standard_normal([int(d) for d in p.checked_type.shape])
            .astype(p.checked_type.dtype)
            for p in relay.transform.InferType()(mod)["main"].params
            if p.name_hint not in params}


def _relay_output(mod, params, inputs):
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, "llvm", params=params)
    g = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    g.set_input(**inputs)
    g.run()
    return g.get_output(0).numpy()


def _relax_output(relax_mod, inputs):
    vm = relax.VirtualMachine(relax.build(relax_mod, "llvm"), tvm.cpu())
    args = [tvm.nd.array(inputs[p.name_hint]) for p in relax_mod["main"].params]
    out = vm["main"](*args)
    return (out if hasattr(out, "numpy") else out[0]).numpy()


@pytest.mark.parametrize("name", sorted(SMALL_MODELS))
def test_model_zoo_reaches_the_vm(name):
    mod, params = MODELS[name]()
    relax_mod = relax.testing.relay_translator.from_relay(mod["main"], "llvm", params)
    assert relax.analysis.well_formed(relax_mod)
    inputs = _inputs(mod, params)
    np.testing.assert_allclose(_relax_output(relax_mod, inputs),
                               _relay_output(mod, params, inputs), rtol=1e-5, atol=1e-5)


def test_opt_level_0_keeps_one_op_per_kernel():
    mod, params = MODELS["mlp"]()
    fused = relax.testing.relay_translator.from_relay(mod["main"], "llvm", params)
    per_op = relax.testing.relay_translator.from_relay(mod["main"], "llvm", params,
                                                       opt_level=0)
    count = lambda m: sum(type(f).__name__ == "PrimFunc" for f in m.functions.values())  # noqa
    assert count(per_op) > count(fused)
    inputs = _inputs(mod, params)
    np.testing.assert_allclose(_relax_output(per_op, inputs),
                               _relay_output(mod, params, inputs), rtol=1e-4, atol=1e-4)


def test_unbound_weights_stay_parameters():
    mod, params = MODELS["simplenet"]()
    relax_mod = relax.testing.relay_translator.from_relay(mod["main"], "llvm")
    names = [p.name_hint for p in relax_mod["main"].params]
    assert set(params) <= set(names)
    data = _inputs(mod, params)
    inputs = {**data, **{k: v.numpy() for k, v in params.items()}}
    np.testing.assert_allclose(_relax_output(relax_mod, inputs),
                               _relay_output(mod, params, data), rtol=1e-5, atol=1e-5)


def test_not_a_function_is_an_error():
    with pytest.raises(IrlabError, match="Relay Function or IRModule"):
        relax.testing.relay_translator.from_relay(42)
