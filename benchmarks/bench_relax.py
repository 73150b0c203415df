"""Relax next to Relay and onnxruntime, in one run (issue 16's benchmark).

1. ResNet-18 224 and the MLP (b32), imported from ONNX with the Relay frontend, then run three
   ways at 1 and 2 threads: ``relay.build`` + graph executor; the same optimized program
   translated to Relax (``relax.testing.relay_translator``: the very same kernels) +
   ``relax.build`` + VM; onnxruntime. The goal: Relax within 1.1x of Relay. Wall-clock
   medians, and the calling thread's CPU time per call, Relay and Relax measured in alternating
   rounds (``cpu``: the figure to read on a loaded machine; at 2 threads it leaves out the
   worker's share).
2. The same models imported by ``relax.frontend.onnx`` (kernels legalized from Relax ops,
   scheduled by ``DefaultCPUSchedule`` in the zero pipeline), static and with a symbolic
   batch, next to ``relay.build`` (TOPI's x86 schedules) and onnxruntime.
3. Dynamic shapes: the MLP imported with a symbolic batch by ``relax.frontend.onnx``, built
   ONCE and run at batch 1, 7 and 32, next to one static build per batch (the same generic
   schedule in both, so the column compares only what a symbolic shape costs) and the build
   times.

    python benchmarks/bench_relax.py [--quick] [--repeat N]

The head names the machine (CPU, ISA, numpy's BLAS kernel, load). Prints figures; asserts
nothing beyond equal outputs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _median_seconds(run, repeat, budget=0.2):
    run()
    times = []
    for _ in range(repeat):
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < budget:
            run()
            n += 1
        times.append((time.perf_counter() - start) / n)
    return float(np.median(times))


def _interleaved_cpu_seconds(first, second, rounds):
    """Median thread CPU seconds per call of ``first`` and of ``second``, measured in
    alternating short rounds (so both see the same load)."""
    from machine import interleaved

    t = interleaved({"first": first, "second": second}, rounds, seconds=0.1)
    return t["first"].cpu_median, t["second"].cpu_median


def _vm_runner(ex, inputs_in_order):
    import irlab as tvm
    from irlab import relax

    vm = relax.VirtualMachine(ex, tvm.cpu())
    args = [tvm.nd.array(a) for a in inputs_in_order]
    return lambda: vm["main"](*args)


def compare_executors(name, model, threads, repeat):
    import irlab as tvm
    from irlab import relax, relay
    from irlab.contrib import graph_executor
    from irlab.relay.frontend import from_onnx, onnx_models
    from bench_e2e import ort_runner

    inputs = onnx_models.random_input(model)
    mod, params = from_onnx(model, freeze_params=True)
    target = f"llvm -num-cores={threads}"
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target, params=params)
    g = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    g.set_input(**inputs)
    relay_s = _median_seconds(g.run, repeat)
    relax_mod = relax.testing.relay_translator.from_relay(mod["main"], target, params)
    ex = relax.build(relax_mod, target)
    run = _vm_runner(ex, [inputs[p.name_hint] for p in relax_mod["main"].params])
    relax_s = _median_seconds(run, repeat)
    relay_cpu, relax_cpu = _interleaved_cpu_seconds(g.run, run, 2 * repeat)
    out = run()
    out = (out if hasattr(out, "numpy") else out[0]).numpy()
    g.run()
    assert np.array_equal(out, g.get_output(0).numpy()), "Relax and Relay outputs differ"
    ort_s = _median_seconds(ort_runner(model, inputs, threads)[0], repeat)
    print(f"{name:24} {threads:>3} {relay_s * 1e3:>9.3f} {relax_s * 1e3:>9.3f} "
          f"{ort_s * 1e3:>8.3f} {relax_s / relay_s:>11.2f} {relax_s / ort_s:>9.2f} "
          f"{relay_cpu * 1e3:>13.3f} {relax_cpu * 1e3:>13.3f} {relax_cpu / relay_cpu:>9.2f}",
          flush=True)


def _symbolic_batch(model):
    """``model`` with its batch dimension named ``batch`` (dynamic)."""
    import onnx

    dynamic = onnx.ModelProto()
    dynamic.CopyFrom(model)
    for value in (dynamic.graph.input[0], *dynamic.graph.output):
        value.type.tensor_type.shape.dim[0].dim_param = "batch"
    return dynamic


def _relax_frontend_build(model, target):
    """``relax.frontend.onnx`` -> zero pipeline (fusion, folding, generic schedule) ->
    ``relax.build``; with the build time."""
    from irlab import relax

    start = time.perf_counter()
    mod = relax.get_pipeline("zero")(relax.frontend.onnx.from_onnx(model))
    return relax.build(mod, target), time.perf_counter() - start


def compare_frontend(name, model, threads, repeat):
    """Relay (TOPI schedules) vs the Relax frontend's kernels, static and symbolic batch."""
    import irlab as tvm
    from irlab import relay
    from irlab.contrib import graph_executor
    from irlab.relay.frontend import from_onnx, onnx_models
    from bench_e2e import ort_runner

    inputs = onnx_models.random_input(model)
    mod, params = from_onnx(model, freeze_params=True)
    target = f"llvm -num-cores={threads}"
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target, params=params)
    g = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    g.set_input(**inputs)
    relay_s = _median_seconds(g.run, repeat)
    g.run()
    expected = g.get_output(0).numpy()
    x = list(inputs.values())[0]
    cols = []
    for variant in (model, _symbolic_batch(model)):
        ex, build_s = _relax_frontend_build(variant, target)
        run = _vm_runner(ex, [x])
        np.testing.assert_allclose(run().numpy(), expected, rtol=1e-3, atol=1e-4)  # sum orders
        cols.append((_median_seconds(run, repeat), build_s, run))
    relay_cpu, static_cpu = _interleaved_cpu_seconds(g.run, cols[0][2], 2 * repeat)
    ort_s = _median_seconds(ort_runner(model, inputs, threads)[0], repeat)
    (static_s, static_b, _), (sym_s, sym_b, _) = cols
    print(f"{name:24} {threads:>3} {relay_s * 1e3:>9.3f} {static_s * 1e3:>10.3f} "
          f"{sym_s * 1e3:>9.3f} {ort_s * 1e3:>8.3f} {static_s / relay_s:>12.2f} "
          f"{sym_s / relay_s:>9.2f} {relay_cpu * 1e3:>13.3f} {static_cpu * 1e3:>14.3f} "
          f"{static_b:>8.1f} {sym_b:>7.1f}", flush=True)


def dynamic_batches(batches, repeat):
    import irlab as tvm
    from irlab import relax
    from irlab.relay.frontend import onnx_models

    dynamic = _symbolic_batch(onnx_models.mlp(batch=1))
    one, one_build = _relax_frontend_build(dynamic, "llvm")
    print(f"  one symbolic build: {one_build:.2f} s")
    print(f"  {'batch':>5} {'symbolic ms':>12} {'static ms':>10} {'ratio':>6} "
          f"{'static build s':>15}")
    for b in batches:
        x = np.random.default_rng(0).standard_normal((b, 784)).astype("float32")
        start = time.perf_counter()
        static = relax.build(relax.get_pipeline("zero")(relax.frontend.onnx.from_onnx(
            dynamic, shape_dict={"input": [b, 784]})), "llvm")
        static_build = time.perf_counter() - start
        sym_s = _median_seconds(_vm_runner(one, [x]), repeat)
        static_s = _median_seconds(_vm_runner(static, [x]), repeat)
        a = relax.VirtualMachine(one, tvm.cpu())["main"](tvm.nd.array(x)).numpy()
        c = relax.VirtualMachine(static, tvm.cpu())["main"](tvm.nd.array(x)).numpy()
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6)
        print(f"  {b:>5} {sym_s * 1e3:>12.3f} {static_s * 1e3:>10.3f} {sym_s / static_s:>6.2f} "
              f"{static_build:>15.2f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="ResNet-18 at 64x64, 3 repeats")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    from irlab.relay.frontend import onnx_models
    from machine import describe

    repeat = 3 if args.quick else args.repeat
    size = 64 if args.quick else 224
    print(describe())
    print(f"{'model':24} {'thr':>3} {'relay ms':>9} {'relax ms':>9} {'ort ms':>8} "
          f"{'relax/relay':>11} {'relax/ort':>9} {'relay cpu ms':>13} {'relax cpu ms':>13} "
          f"{'cpu ratio':>9}")
    models = {"mlp 784-256-256-10 b32": onnx_models.mlp(),
              f"resnet18 1x3x{size}x{size}": onnx_models.resnet18(image_size=size)}
    for name, model in models.items():
        for threads in (1, 2):
            compare_executors(name, model, threads, repeat)
    print("relax.frontend.onnx + zero pipeline (DefaultCPUSchedule) + relax.build:")
    print(f"{'model':24} {'thr':>3} {'relay ms':>9} {'static ms':>10} {'sym ms':>9} "
          f"{'ort ms':>8} {'static/relay':>12} {'sym/relay':>9} {'relay cpu ms':>13} "
          f"{'static cpu ms':>14} {'build s':>8} {'sym b s':>7}")
    for name, model in models.items():
        for threads in (1, 2):
            compare_frontend(name, model, threads, repeat)
    print("MLP with a symbolic batch (relax.frontend.onnx), one build vs one per batch:")
    dynamic_batches((1, 7, 32), repeat)


if __name__ == "__main__":
    main()
