"""The MLP b32 of ``benchmarks/bench_e2e.py`` (784-256-256-10) layer by layer, for AVX2 and
AVX-512 CPUs: each layer's kernel (register tile, vector width, parallel loop or not) is
lowered for the named CPU and inspected, never run; the host build runs at 1 and 2 threads
against numpy."""

import re

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.contrib import graph_executor
from irlab.target import Target
from irlab.topi.x86.dense import dense_tile, parallel_min_flops

from tests.topi._lower_util import infer, lower_function

AVX2 = "llvm -mcpu=haswell"
AVX512 = "llvm -mcpu=skylake-avx512"
LAYERS = [(784, 256), (256, 256), (256, 10)]  # (in, out) of each dense layer
BATCH = 32


def _layer(fan_in, fan_out, relu, target):
    x = relay.var("x", shape=(BATCH, fan_in))
    w = relay.var("w", shape=(fan_out, fan_in))
    b = relay.var("b", shape=(fan_out,))
    y = relay.nn.bias_add(relay.nn.dense(x, w), b)
    func = infer(relay.Function([x, w, b], relay.nn.relu(y) if relu else y))
    return lower_function(func.with_attr("Primitive", 1), Target(target))


@pytest.mark.parametrize("target,lanes,tile,threshold", [
    (AVX2, 8, (4, 16), 1 << 20), (AVX512, 16, (4, 64), 1 << 21)])
def test_mlp_layer_kernels_per_isa(target, lanes, tile, threshold):
    """784x256 and 256x256: the packed register tile of the ISA, columns in parallel (12.8
    and 4.2 MFLOP, above the threshold); 256x10, serial (0.16 MFLOP: a fan-out would cost more
    than it saves): with AVX-512 10 columns fit one vector, so the packed tile of 8 rows x one
    partial vector; with AVX2 10 is no multiple of the 8 lanes, so the unpacked dot-product
    schedule, 8 columns' partial sums at once."""
    t = Target(target)
    assert parallel_min_flops(t) == threshold
    for k, (fan_in, fan_out) in enumerate(LAYERS):
        relu = k < len(LAYERS) - 1
        lowered = _layer(fan_in, fan_out, relu, target)
        text = lowered.prim_func.script()
        vectors = {int(n) for n in re.findall(r"T\.vectorized\((\d+)\)", text)}
        flops = 2 * BATCH * fan_in * fan_out
        if fan_out % lanes == 0:
            assert dense_tile(BATCH, fan_out, t) == tile
            assert lowered.anchor[0].name == "dense_pack.x86"
            assert tile[1] in vectors
        elif fan_out < lanes:
            assert dense_tile(BATCH, fan_out, t) == (8, fan_out)
            assert lowered.anchor[0].name == "dense_pack.x86"
            assert vectors == {fan_out} and "T.unroll(8)" in text
        else:
            assert dense_tile(BATCH, fan_out, t) is None
            assert max(vectors) <= 16  # the rfactor'ed dot products' partial sums
            # 10 columns = 5 x 2: five independent chains of partial sums per row
            assert text.count("T.unroll(5)") >= 2, text
        assert ("T.parallel" in text) == (flops >= threshold), (target, fan_in, fan_out)


def _mlp(seed=0):
    rng = np.random.default_rng(seed)
    x = relay.var("x", shape=(BATCH, LAYERS[0][0]))
    h, weights = x, []
    for k, (fan_in, fan_out) in enumerate(LAYERS):
        w = rng.standard_normal((fan_out, fan_in)).astype("float32") / np.sqrt(fan_in)
        b = rng.standard_normal(fan_out).astype("float32")
        weights.append((w, b))
        h = relay.nn.bias_add(relay.nn.dense(h, relay.const(w)), relay.const(b))
        if k < len(LAYERS) - 1:
            h = relay.nn.relu(h)
    return irlab.IRModule.from_expr(relay.Function([x], relay.nn.softmax(h))), weights


def _reference(x, weights):
    h = x.astype(np.float64)
    for k, (w, b) in enumerate(weights):
        h = h @ w.T + b
        if k < len(weights) - 1:
            h = np.maximum(h, 0)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("threads", [1, 2])
def test_mlp_runs_on_the_host(threads):
    mod, weights = _mlp()
    with irlab.transform.PassContext(opt_level=3):
        lib = relay.build(mod, f"llvm -num-cores={threads}")
    m = graph_executor.GraphModule(lib["default"](irlab.cpu()))
    for seed in (1, 2):
        x = np.random.default_rng(seed).standard_normal((BATCH, LAYERS[0][0]), "float32")
        m.run(x=x)
        np.testing.assert_allclose(m.get_output(0).numpy(), _reference(x, weights),
                                   rtol=1e-4, atol=1e-6)
