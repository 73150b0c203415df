"""Every model builder through relay.build matches the Relay interpreter (issue 8: within 1e-4
relative error). The quick tier: every level for the small models, opt levels 0 and 3 for the
ResNets and MobileNet (their builds take seconds each); ``benchmarks/e2e_conformance.py`` runs
the whole matrix."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relay
from irlab.contrib import graph_executor
from irlab.relay.testing import MODELS


def _inputs(mod, params, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for p in mod["main"].params:
        if p.name_hint in params:
            continue
        ty = p.checked_type if p._checked_type is not None else p.type_annotation
        shape = tuple(int(d) for d in ty.shape)
        if ty.dtype.startswith("int"):
            out[p.name_hint] = rng.integers(0, 8, shape).astype(ty.dtype)
        else:
            out[p.name_hint] = rng.uniform(-1, 1, shape).astype(ty.dtype)
    return out


def _reference(mod, params, inputs):
    run = relay.create_executor("debug", mod=mod, params=params).evaluate()
    result = run(**inputs)
    return [r.numpy() for r in result] if isinstance(result, (list, tuple)) else [
        result.numpy()]


def check_model(name, opt_level):
    mod, params = MODELS[name]()
    mod = relay.transform.InferType()(mod)
    inputs = _inputs(mod, params)
    expect = _reference(mod, params, inputs)
    with tvm.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, "llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    m.run(**inputs)
    assert m.get_num_outputs() == len(expect)
    for i, e in enumerate(expect):
        got = m.get_output(i).numpy()
        scale = max(1.0, float(np.abs(e).max()))
        np.testing.assert_allclose(got, e, rtol=1e-4, atol=1e-4 * scale,
                                   err_msg=f"{name} at opt_level {opt_level}, output {i}")


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
@pytest.mark.parametrize("name", ["simplenet", "mlp", "bert"])
def test_small_model_matches_interpreter(name, opt_level):
    check_model(name, opt_level)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_cnn_matches_interpreter(name, opt_level):
    check_model(name, opt_level)


def test_resnet50_matches_interpreter():
    check_model("resnet50", 3)
