"""BYOC with a real kernel library: ``partition_for_dnnl`` and ``relay.ext.dnnl`` (C calling
oneDNN, linked against libdnnl). Each pattern offloaded alone equals the native build on
random NCHW float32 inputs; ResNet-18 offloaded equals native at 1e-4; bad cases are named."""

import re

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.contrib import graph_executor
from irlab.errors import CompileError, IrlabError
from irlab.ir.module import IRModule
from irlab.relay.backend.contrib import dnnl as dnnl_codegen
from irlab.relay.op.contrib import partition_for_dnnl
from irlab.runtime.module import find_c_compiler, load_module
from irlab.runtime.registry import get_global_func, register_func

pytestmark = [
    pytest.mark.skipif(find_c_compiler() is None, reason="needs a C compiler"),
    pytest.mark.skipif(dnnl_codegen.find_dnnl() is None,
                       reason=dnnl_codegen.missing_reason() or "oneDNN missing"),
]
RNG = np.random.default_rng(0)


def _const(*shape, scale=1.0):
    return relay.const((RNG.normal(size=shape) * scale).astype("float32"))


def _run(mod, inputs, params=None):
    with irlab.transform.PassContext(opt_level=3):
        factory = relay.build(mod, "llvm", params=params)
    module = graph_executor.GraphModule(factory["default"](irlab.cpu()))
    module.run(**inputs)
    return module.get_output(0).numpy(), factory


def _offloaded(func_body, shapes, expect, params=None):
    """Partition ``func_body`` (inputs ``shapes``) for dnnl, check that one dnnl function with
    ``expect`` in its text was made, and that it computes what the native build does."""
    inputs = {name: RNG.normal(size=shape).astype("float32") for name, shape in shapes.items()}
    params_vars = [relay.var(n, shape=s) for n, s in shapes.items()]
    mod = IRModule.from_expr(relay.Function(params_vars, func_body(*params_vars)))
    partitioned = partition_for_dnnl(mod, params)
    externals = [gv for gv in partitioned.get_global_vars() if gv.name_hint != "main"]
    assert len(externals) == 1, partitioned.astext()
    text = partitioned[externals[0]].astext()
    assert 'Compiler="dnnl"' in text and expect in text, text
    expected, _ = _run(mod, inputs, params)
    got, factory = _run(partitioned, inputs)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    return factory


DATA = {"x": (1, 8, 12, 12)}
CONV_CASES = {
    "conv2d": (lambda x: relay.nn.conv2d(x, _const(16, 8, 3, 3), padding=(1, 1)),
               "nn.conv2d"),
    "conv2d_bias_add": (lambda x: relay.add(relay.nn.conv2d(x, _const(16, 8, 3, 3)),
                                            _const(16, 1, 1)), 'Composite="dnnl.conv2d_bias"'),
    "conv2d_nn_bias_add": (lambda x: relay.nn.bias_add(
        relay.nn.conv2d(x, _const(16, 8, 1, 1), strides=(2, 2)), _const(16)),
        'Composite="dnnl.conv2d_bias"'),
    "conv2d_relu": (lambda x: relay.nn.relu(relay.nn.conv2d(
        x, _const(16, 8, 3, 3), padding=(2, 1, 0, 1), dilation=(2, 2))),
        'Composite="dnnl.conv2d_relu"'),
    "conv2d_bias_relu": (lambda x: relay.nn.relu(relay.add(relay.nn.conv2d(
        x, _const(16, 8, 5, 5), strides=(2, 2), padding=(2, 2)), _const(1, 16, 1, 1))),
        'Composite="dnnl.conv2d_bias_relu"'),
    "depthwise_conv2d": (lambda x: relay.nn.conv2d(x, _const(8, 1, 3, 3), padding=(1, 1),
                                                   groups=8), "groups=8"),
    "grouped_conv2d_bias_relu": (lambda x: relay.nn.relu(relay.add(relay.nn.conv2d(
        x, _const(12, 4, 3, 3), groups=2), _const(12, 1, 1))), "groups=2"),
}


@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_convolution_patterns_equal_the_native_build(case):
    body, expect = CONV_CASES[case]
    _offloaded(body, DATA, expect)


DENSE_CASES = {
    "dense": (lambda x: relay.nn.dense(x, _const(10, 24)), "nn.dense"),
    "dense_bias": (lambda x: relay.nn.bias_add(relay.nn.dense(x, _const(10, 24)), _const(10)),
                   'Composite="dnnl.dense_bias"'),
    "dense_add_bias_relu": (lambda x: relay.nn.relu(relay.add(
        relay.nn.dense(x, _const(10, 24)), _const(10))), 'Composite="dnnl.dense_bias_relu"'),
    "dense_relu": (lambda x: relay.nn.relu(relay.nn.dense(x, _const(10, 24))),
                   'Composite="dnnl.dense_relu"'),
}


@pytest.mark.parametrize("case", sorted(DENSE_CASES))
def test_dense_patterns_equal_the_native_build(case):
    body, expect = DENSE_CASES[case]
    _offloaded(body, {"x": (3, 24)}, expect)


SINGLE_OP_CASES = {
    "relu": (lambda x: relay.nn.relu(x), "nn.relu"),
    "add": (lambda x: relay.add(x, relay.multiply(x, x)), "add("),  # multiply stays native
    "add_broadcast_left": (lambda x: relay.add(_const(8, 1, 12), x), "add("),
    "max_pool2d": (lambda x: relay.nn.max_pool2d(x, (3, 3), (2, 2), padding=(1, 1)),
                   "nn.max_pool2d"),
    "max_pool2d_ceil": (lambda x: relay.nn.max_pool2d(x, (3, 3), (2, 2), ceil_mode=True),
                        "nn.max_pool2d"),
    "avg_pool2d": (lambda x: relay.nn.avg_pool2d(x, (3, 3), (2, 2), padding=(1, 1)),
                   "nn.avg_pool2d"),
    "avg_pool2d_include_pad": (lambda x: relay.nn.avg_pool2d(
        x, (3, 3), (1, 1), padding=(1, 1), count_include_pad=True), "count_include_pad"),
    "global_avg_pool2d": (lambda x: relay.nn.global_avg_pool2d(x), "nn.global_avg_pool2d"),
    "global_max_pool2d": (lambda x: relay.nn.global_max_pool2d(x), "nn.global_max_pool2d"),
}


@pytest.mark.parametrize("case", sorted(SINGLE_OP_CASES))
def test_single_operators_equal_the_native_build(case):
    body, expect = SINGLE_OP_CASES[case]
    _offloaded(body, DATA, expect)


def test_batch_norm_is_folded_into_the_convolution():
    c = 16
    params = {"gamma": RNG.uniform(0.5, 1.5, c), "beta": RNG.normal(size=c),
              "mean": RNG.normal(size=c), "var": RNG.uniform(0.5, 2.0, c),
              "w": RNG.normal(size=(c, 8, 3, 3))}
    params = {k: irlab.nd.array(v.astype("float32")) for k, v in params.items()}

    def body(x):
        w = relay.var("w", shape=(c, 8, 3, 3))
        bn = [relay.var(n, shape=(c,)) for n in ("gamma", "beta", "mean", "var")]
        out = relay.nn.batch_norm(relay.nn.conv2d(x, w, padding=(1, 1)), *bn)[0]
        return relay.nn.relu(out)

    x = relay.var("x", shape=DATA["x"])
    out = body(x)
    mod = IRModule.from_expr(relay.Function(relay.analysis.free_vars(out), out))
    partitioned = partition_for_dnnl(mod, params)
    assert 'Composite="dnnl.conv2d_bias_relu"' in partitioned.astext()
    assert "batch_norm" not in partitioned.astext()
    inputs = {"x": RNG.normal(size=DATA["x"]).astype("float32")}
    np.testing.assert_allclose(_run(partitioned, inputs)[0], _run(mod, inputs, params)[0],
                               rtol=1e-5, atol=1e-5)


def test_weights_given_as_inputs_are_reordered_on_every_call():
    x, w = relay.var("x", shape=(1, 8, 12, 12)), relay.var("w", shape=(16, 8, 3, 3))
    mod = IRModule.from_expr(relay.Function([x, w], relay.nn.conv2d(x, w, padding=(1, 1))))
    partitioned = partition_for_dnnl(mod)
    with irlab.transform.PassContext(opt_level=3):
        native, external = (relay.build(m, "llvm") for m in (mod, partitioned))
    modules = [graph_executor.GraphModule(f["default"](irlab.cpu())) for f in (native, external)]
    for seed in (1, 2):  # new weights on the second call: not the first call's reorder
        rng = np.random.default_rng(seed)
        inputs = {"x": rng.normal(size=(1, 8, 12, 12)).astype("float32"),
                  "w": rng.normal(size=(16, 8, 3, 3)).astype("float32")}
        for m in modules:
            m.run(**inputs)
        np.testing.assert_allclose(modules[1].get_output(0).numpy(),
                                   modules[0].get_output(0).numpy(), rtol=1e-5, atol=1e-5)


def test_resnet18_offloaded_equals_native():
    from irlab.relay.testing import resnet

    mod, params = resnet.get_workload(num_layers=18)
    partitioned = partition_for_dnnl(mod, params)
    main = partitioned["main"].astext()
    assert "nn.conv2d" not in main and "nn.dense" not in main  # all offloaded
    inputs = {"data": RNG.uniform(-1, 1, (1, 3, 224, 224)).astype("float32")}
    got, factory = _run(partitioned, inputs)
    expected, _ = _run(mod, inputs, params)
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * scale)
    source = factory.get_lib().imported_modules[0].get_source()
    assert ".incbin" in source and "irlab_dnnl_conv(" in source  # weights embedded as bytes


def test_source_shows_oneDNN_calls_and_large_constants_are_embedded():
    factory = _offloaded(CONV_CASES["conv2d_bias_relu"][0], DATA, "conv2d")
    source = factory.get_lib().imported_modules[0].get_source()
    assert "#include <oneapi/dnnl/dnnl.h>" in source
    assert re.search(r"irlab_dnnl_conv\(&\w+, \(const int64_t\[\]\)\{1, 8, 12, 12\}", source)
    assert ".incbin" in source                      # the 16x8x5x5 weights
    assert "static const float" in source          # the 16 bias values, printed


@pytest.mark.parametrize("suffix", [".irlab", ".so"])
def test_export_library_and_load_module_carry_the_dnnl_module(tmp_path, suffix):
    factory = _offloaded(CONV_CASES["conv2d_relu"][0], DATA, "conv2d")
    path = factory.get_lib().export_library(tmp_path / f"lib{suffix}")
    loaded = load_module(path)
    x = RNG.normal(size=DATA["x"]).astype("float32")
    outs = []
    for lib in (factory.get_lib(), loaded):
        m = graph_executor.create(factory.get_graph_json(), lib, irlab.cpu())
        m.set_input(**factory.get_params())
        m.run(x=x)
        outs.append(m.get_output(0).numpy())
    np.testing.assert_array_equal(outs[1], outs[0])


class _BrokenDnnlCodegen(dnnl_codegen.DnnlCodegen):
    def emit_relu(self, call, data):
        self.body.append("status = relu_is_not_declared;")
        return super().emit_relu(call, data)


class _BrokenModuleCodegen(dnnl_codegen.DnnlModuleCodegen):
    codegen_class = _BrokenDnnlCodegen


def test_c_that_does_not_compile_shows_the_compiler_error_and_source_line():
    x = relay.var("x", shape=(2, 3))
    partitioned = partition_for_dnnl(IRModule.from_expr(relay.Function([x], relay.nn.relu(x))))
    original = get_global_func("relay.ext.dnnl")
    register_func("relay.ext.dnnl", _BrokenModuleCodegen(), override=True)
    try:
        with pytest.raises(CompileError) as info:
            relay.build(partitioned, "llvm")
    finally:
        register_func("relay.ext.dnnl", original, override=True)
    message = str(info.value)
    assert "relay.ext.dnnl" in message and "tvmgen_default_dnnl_main_0" in message
    assert re.search(r"at line \d+: .*relu_is_not_declared", message)


def test_missing_oneDNN_is_a_clear_error(monkeypatch):
    monkeypatch.setattr("irlab.relay.backend.contrib.dnnl.library.find_dnnl", lambda: None)
    x = relay.var("x", shape=(2, 3))
    partitioned = partition_for_dnnl(IRModule.from_expr(relay.Function([x], relay.nn.relu(x))))
    with pytest.raises(IrlabError, match=r"relay.ext.dnnl needs oneDNN.*pip install"):
        relay.build(partitioned, "llvm")


def test_unsupported_calls_stay_native():
    x = relay.var("x", shape=(1, 8, 12, 12))
    w = _const(16, 8, 3, 3)
    # NHWC data, a float64 relu and an add of two broadcast operands are not offloaded
    nhwc = relay.nn.conv2d(relay.var("y", shape=(1, 12, 12, 8)), relay.const(
        np.zeros((3, 3, 8, 16), "float32")), data_layout="NHWC", kernel_layout="HWIO")
    both = relay.add(relay.var("a", shape=(4, 1)), relay.var("b", shape=(1, 5)))
    d64 = relay.nn.relu(relay.var("d", shape=(3,), dtype="float64"))
    # a pooling window wholly in the padding: Relay gives -inf there, oneDNN the lowest float
    past_end = relay.nn.max_pool2d(x, (2, 2), (3, 3), ceil_mode=True)
    out = relay.Tuple([relay.nn.conv2d(x, w), nhwc, both, d64, past_end])
    mod = IRModule.from_expr(relay.Function(relay.analysis.free_vars(out), out))
    main = partition_for_dnnl(mod)["main"].astext()
    assert "NHWC" in main and "add(%a, %b)" in main and "nn.relu(%d)" in main
    assert "nn.max_pool2d(%x" in main
