"""Seed 001's simplenet through relay.build and the graph executor, as the seed writes it
(only the imports changed)."""

import numpy as np

import irlab as tvm
from irlab import relay
from irlab.contrib import graph_executor

from test_seed_examples import _seed_001_simplenet


def _numpy_simplenet(np_data, p):
    x = np.pad(np_data.astype("float32"), ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    conv = np.einsum("nchwij,ocij->nohw", windows, p["graph_conv_weight"])
    with np.errstate(invalid="ignore"):  # the seed's moving_var has negative entries
        scale = p["graph_bn_gamma"] / np.sqrt(p["graph_bn_moving_var"] + 1e-5)
    bn = (conv - p["graph_bn_moving_mean"][:, None, None]) * scale[:, None, None] \
        + p["graph_bn_beta"][:, None, None]
    # relu keeps NaN (the seed's negative variances) as numpy's maximum and onnxruntime do;
    # TVM's codegen, select(x > 0, x, 0), turns it into 0 (docs/semantics.md)
    return np.maximum(bn, 0)


def test_seed_001_simplenet_relay_build_graph_executor():
    func, params, np_data = _seed_001_simplenet()

    # -- the seed's code from here on --
    with tvm.transform.PassContext(opt_level=10):
        lib = relay.build(func, "llvm", params=params)

    dev = tvm.cpu(0)
    dtype = "float32"
    m = graph_executor.GraphModule(lib["default"](dev))
    # set inputs
    m.set_input("data", tvm.nd.array(np_data.astype(dtype)))
    # execute
    m.run()
    # get outputs
    tvm_output = m.get_output(0)
    # -- end of the seed's code --

    expect = _numpy_simplenet(np_data, {k: v.numpy() for k, v in params.items()})
    np.testing.assert_allclose(tvm_output.numpy(), expect, rtol=1e-4, atol=1e-4)
