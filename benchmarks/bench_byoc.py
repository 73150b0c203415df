"""ResNet-18 three ways, side by side: irlab's native build, the same model with its
convolutions, dense layers, pooling, adds and ReLUs offloaded to oneDNN through BYOC
(``partition_for_dnnl`` -> ``relay.ext.dnnl``), and onnxruntime (whose CPU kernels are of
the same class as oneDNN's), at 1 and 2 threads.

    python3 benchmarks/bench_byoc.py [--quick] [--repeat N]

The head names the machine (CPU, ISA, load). Both irlab builds use ``-num-cores``: native
kernels run their parallel loops on that many threads, and the dnnl module sets oneDNN's
OpenMP threads to it during its calls. "cpu ms" is the calling thread's CPU time per run at
1 thread (what a busy machine distorts least). The three are timed interleaved
(``machine.interleaved``). Needs ``irlab[dnnl]``.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_e2e import irlab_runner, ort_runner  # noqa: E402 - the same runners as bench_e2e


def build(mod, params, threads, offload):
    import irlab as tvm
    from irlab import relay
    from irlab.relay.op.contrib import partition_for_dnnl

    if offload:
        mod, params = partition_for_dnnl(mod, params), None
    with tvm.transform.PassContext(opt_level=3):
        return relay.build(mod, f"llvm -num-cores={threads}", params=params)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small ResNet (64x64), 3 repeats")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    from irlab.relay.backend.contrib.dnnl import find_dnnl, missing_reason
    from irlab.relay.frontend import from_onnx, onnx_models
    from machine import describe, interleaved

    if find_dnnl() is None:
        sys.exit(missing_reason())
    repeat = 3 if args.quick else args.repeat
    size = 64 if args.quick else 224
    model = onnx_models.resnet18(image_size=size)
    inputs = onnx_models.random_input(model)
    mod, params = from_onnx(model, freeze_params=True)
    print(describe())
    print(f"oneDNN: {find_dnnl()}")
    print(f"resnet18 1x3x{size}x{size}")
    print(f"{'thr':>3} {'native ms':>10} {'dnnl ms':>8} {'ort ms':>8} {'dnnl/ort':>8} "
          f"{'native/ort':>10} {'cpu ms n/d/o':>18}  max rel err dnnl, native")
    for threads in (1, 2):
        libs = {offload: build(mod, params, threads, offload) for offload in (False, True)}
        runners = {"native": irlab_runner(libs[False], inputs),
                   "dnnl": irlab_runner(libs[True], inputs),
                   "ort": ort_runner(model, inputs, threads)}
        t = interleaved({name: run for name, (run, _) in runners.items()}, repeat, 0.2)
        native, dnnl, ort = (t[name].median for name in ("native", "dnnl", "ort"))
        native_cpu, dnnl_cpu, ort_cpu = (t[name].cpu_median for name in ("native", "dnnl", "ort"))
        native_out, dnnl_out, expect = (runners[name][1]() for name in ("native", "dnnl", "ort"))
        scale = max(np.abs(expect).max(), 1e-30)
        errs = [float(np.abs(o - expect).max() / scale) for o in (dnnl_out, native_out)]
        cpu = "/".join(f"{c * 1e3:.1f}" for c in (native_cpu, dnnl_cpu, ort_cpu)) \
            if threads == 1 else "-"
        print(f"{threads:>3} {native * 1e3:>10.2f} {dnnl * 1e3:>8.2f} {ort * 1e3:>8.2f} "
              f"{dnnl / ort:>8.2f} {native / ort:>10.2f} {cpu:>18}  "
              f"{errs[0]:.1e}, {errs[1]:.1e}", flush=True)


if __name__ == "__main__":
    main()
