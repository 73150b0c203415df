"""ResNet-18 and the MLP (built with onnx.helper, imported with from_onnx) through relay.build:
latency at 1 and 2 threads next to onnxruntime on the same model in the same run, and the
cold and warm build times (issue 8's targets: ResNet-18 within 2x of onnxruntime; build under
3 s cold and 0.5 s warm).

    python3 benchmarks/bench_e2e.py [--quick] [--repeat N] [--compare-nchw] [--compare-winograd]

``--compare-nchw`` also times ResNet-18 built with the NCHWc conv off (``relay.x86.conv2d_NCHWc``
False: the packed NCHW schedule), interleaved with the other two, and prints its ratio to
onnxruntime last on the line. ``--compare-winograd`` does the same for the build with the
Winograd 3x3 convs on (``relay.x86.conv2d_winograd``: what ``compile_relay`` / MetaSchedule
builds, off in a plain relay.build), with its cold build time and its error to onnxruntime.

The head names the machine (CPU, ISA, numpy's BLAS kernel, load). irlab and onnxruntime are
timed interleaved (``machine.interleaved``: alternating repeats in one process at the same
thread count), so the ratio compares medians over the same minutes even on a host whose speed
drifts. At 1 thread both run in the calling thread, so the "cpu ratio" column (thread CPU
time, irlab / onnxruntime) is what a busy machine distorts least; "others" shows that no
thread left spinning by a 2-thread run took CPU during the 1-thread ones.

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


def build(mod, params, threads, config=None):
    import irlab as tvm
    from irlab import relay

    with tvm.transform.PassContext(opt_level=3, config=config or {}):
        return relay.build(mod, f"llvm -num-cores={threads}", params=params)


def irlab_runner(lib, inputs):
    """(run, output): the graph executor's ``run`` on ``inputs``, and its output getter."""
    import irlab as tvm
    from irlab.contrib import graph_executor

    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    m.set_input(**inputs)
    return m.run, lambda: m.get_output(0).numpy()


def ort_runner(model, inputs, threads):
    """(run, output) of an onnxruntime session on ``inputs`` with ``threads`` intra-op
    threads (its default settings otherwise: workers spin briefly between runs)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    return (lambda: sess.run(None, inputs)), (lambda: sess.run(None, inputs)[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small ResNet (64x64), 3 repeats")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--compare-nchw", action="store_true",
                        help="ResNet-18 with the NCHWc conv off too (ratio to ort last)")
    parser.add_argument("--compare-winograd", action="store_true",
                        help="ResNet-18 with the Winograd convs on too (ratio to ort last)")
    args = parser.parse_args()
    from irlab.relay.frontend import from_onnx, onnx_models

    repeat = 3 if args.quick else args.repeat
    size = 64 if args.quick else 224
    models = {"mlp 784-256-256-10 b32": onnx_models.mlp(),
              f"resnet18 1x3x{size}x{size}": onnx_models.resnet18(image_size=size)}
    from machine import SETTLE_NOTE, describe, interleaved, load

    print(describe())
    print(f"irlab and onnxruntime timed interleaved: {repeat} alternating repeats of ~0.2 s "
          f"each, same process, same thread count; ratio = median / median; {SETTLE_NOTE}.\n"
          f"cpu ratio: the calling thread's CPU time (1 thread); others: CPU the process's "
          f"other threads used during irlab's 1-thread runs (0 = nothing left spinning)")
    print(f"{'model':24} {'thr':>3} {'irlab ms':>9} {'ort ms':>8} {'ratio':>6} {'cpu ratio':>9} "
          f"{'others':>7} {'cold s':>7} {'warm s':>7}  max rel err")
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
            our_run, our_out = irlab_runner(lib, inputs)
            their_run, their_out = ort_runner(model, inputs, threads)
            runs = {"irlab": our_run, "ort": their_run}
            if args.compare_nchw and "resnet" in name:
                runs["nchw"] = irlab_runner(build(mod, params, threads,
                                                  {"relay.x86.conv2d_NCHWc": False}), inputs)[0]
            wino_note = ""
            if args.compare_winograd and "resnet" in name:
                _clear_caches()
                start = time.perf_counter()
                wino_lib = build(mod, params, threads, {"relay.x86.conv2d_winograd": True})
                wino_cold = time.perf_counter() - start
                runs["wino"], wino_out = irlab_runner(wino_lib, inputs)
            t = interleaved(runs, repeat, seconds=0.2)
            ours, theirs = t["irlab"], t["ort"]
            expect = their_out()
            err = float(np.abs(our_out() - expect).max() / max(np.abs(expect).max(), 1e-30))
            if "wino" in t:
                wino_err = float(np.abs(wino_out() - expect).max()
                                 / max(np.abs(expect).max(), 1e-30))
                wino_note = (f"  winograd {t['wino'].median / theirs.median:.2f} (cold "
                             f"{wino_cold:.2f} s, err {wino_err:.1e})")
            ratio = ours.median / theirs.median
            cpu_ratio, others = "-", "-"
            if threads == 1:
                cpu_ratio = f"{ours.cpu_median / theirs.cpu_median:.2f}"
                others = f"{100 * ours.others_median / ours.median:.1f}%"
            print(f"{name:24} {threads:>3} {ours.median * 1e3:>9.3f} "
                  f"{theirs.median * 1e3:>8.3f} {ratio:>6.2f} {cpu_ratio:>9} {others:>7} "
                  f"{cold:>7.2f} {warm:>7.2f}  {err:.1e}"
                  + (f"  nchw {t['nchw'].median / theirs.median:.2f}" if "nchw" in t else "")
                  + wino_note, flush=True)
    print(load())


if __name__ == "__main__":
    main()
