"""ResNet-18 and the MLP (built with onnx.helper, imported with from_onnx) through relay.build:
latency at 1 and 2 threads next to onnxruntime on the same model in the same run, and the
cold and warm build times (issue 8's targets: ResNet-18 within 2x of onnxruntime; build under
3 s cold and 0.5 s warm).

    python3 benchmarks/bench_e2e.py [--quick] [--repeat N]

The head names the machine (CPU, ISA, numpy's BLAS kernel, load). At 1 thread both run in the
calling thread, so the "cpu ratio" column (thread CPU time, irlab / onnxruntime) is what a
busy machine distorts least; wall-clock ratios need a quiet one.

"cold" clears every cache (programs, LLVM objects in memory, a fresh disk cache directory);
"warm" rebuilds the same model in the same process.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _clear_caches():
    import irlab.build_module as bm
    import irlab.relay.build_module as relay_bm
    import irlab.target.llvm_jit as jit

    bm._built.clear()
    relay_bm._built.clear()
    jit._memory_cache.clear()


def build(mod, params, threads):
    import irlab as tvm
    from irlab import relay

    with tvm.transform.PassContext(opt_level=3):
        return relay.build(mod, f"llvm -num-cores={threads}", params=params)


def cpu_seconds(run, seconds=1.0):
    """Thread CPU seconds per call of ``run`` (called for about ``seconds`` of wall time)."""
    run()
    n, cpu, start = 0, time.thread_time(), time.perf_counter()
    while time.perf_counter() - start < seconds:
        run()
        n += 1
    return (time.thread_time() - cpu) / n


def irlab_latency(lib, inputs, repeat):
    """(median wall seconds, thread CPU seconds, output) of the graph executor's run."""
    import irlab as tvm
    from irlab.contrib import graph_executor

    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    m.set_input(**inputs)
    result = m.benchmark(number=max(1, 20 // repeat), repeat=repeat, min_repeat_ms=200)
    return result.median, cpu_seconds(m.run), m.get_output(0).numpy()


def ort_latency(model, inputs, threads, repeat):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    sess.run(None, inputs)
    times = []
    for _ in range(repeat):
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < 0.2:
            sess.run(None, inputs)
            n += 1
        times.append((time.perf_counter() - start) / n)
    cpu = cpu_seconds(lambda: sess.run(None, inputs))
    return float(np.median(times)), cpu, sess.run(None, inputs)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small ResNet (64x64), 3 repeats")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    from irlab.relay.frontend import from_onnx, onnx_models

    repeat = 3 if args.quick else args.repeat
    size = 64 if args.quick else 224
    models = {"mlp 784-256-256-10 b32": onnx_models.mlp(),
              f"resnet18 1x3x{size}x{size}": onnx_models.resnet18(image_size=size)}
    from machine import describe

    print(describe())
    print(f"{'model':24} {'thr':>3} {'irlab ms':>9} {'ort ms':>8} {'ratio':>6} {'cpu ratio':>9} "
          f"{'cold s':>7} {'warm s':>7}  max rel err")
    for name, model in models.items():
        inputs = onnx_models.random_input(model)
        mod, params = from_onnx(model, freeze_params=True)
        for threads in (1, 2):
            os.environ["IRLAB_CACHE_DIR"] = tempfile.mkdtemp(prefix="irlab-bench-")
            _clear_caches()
            start = time.perf_counter()
            lib = build(mod, params, threads)
            cold = time.perf_counter() - start
            start = time.perf_counter()
            lib = build(mod, params, threads)
            warm = time.perf_counter() - start
            ours, our_cpu, out = irlab_latency(lib, inputs, repeat)
            theirs, their_cpu, expect = ort_latency(model, inputs, threads, repeat)
            err = float(np.abs(out - expect).max() / max(np.abs(expect).max(), 1e-30))
            cpu_ratio = f"{our_cpu / their_cpu:.2f}" if threads == 1 else "-"
            print(f"{name:24} {threads:>3} {ours * 1e3:>9.3f} {theirs * 1e3:>8.3f} "
                  f"{ours / theirs:>6.2f} {cpu_ratio:>9} {cold:>7.2f} {warm:>7.2f}  {err:.1e}",
                  flush=True)


if __name__ == "__main__":
    main()
