"""Per-kernel times of a model: irlab's fused kernels next to onnxruntime's nodes, in graph
order, with the GFLOPS of each convolution / dense layer -- which kernels are furthest from
onnxruntime, relative to their work.

    python3 benchmarks/bench_kernels.py [--model resnet18|mlp] [--threads N] [--size S]
        [--chunks-per-thread K]

irlab: each kernel of the graph executor called alone (bound to its views, as ``run`` calls
it), the best of 7 batches, in thread CPU time at 1 thread (what a busy host distorts least)
and wall time otherwise. onnxruntime: its session profile (``enable_profiling``), the best of
30 runs per node. Kernels are paired by output shape in graph order (both fuse conv + bias +
add + relu). FLOPs = 2 * output elements * weight elements / output channels (a conv's
C_in/groups * KH * KW MACs per output, a dense layer's K). ``--chunks-per-thread 1`` fans
irlab's parallel loops out as one contiguous chunk per thread (a static split) instead of the
native pool's shared-out chunks (``irlab.runtime.threading.chunks_per_thread``).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _flops(out_shape, weight_shape) -> float:
    """2 * MACs of a conv / dense whose output and weight have these shapes (0: no weight)."""
    if not weight_shape or len(out_shape) < 2 or len(weight_shape) < 2 or not out_shape[1]:
        return 0.0
    return 2.0 * float(np.prod(out_shape)) * float(np.prod(weight_shape)) / out_shape[1]


def _as_nchw(shape):
    """An NCHW{n}c output shape (the x86 NCHWc convs' blocked layout) as its NCHW shape, so it
    pairs with onnxruntime's node and its FLOPs count channels; other shapes as they are."""
    shape = list(shape)
    if len(shape) == 5:
        n, chunks, h, w, block = shape
        return [n, chunks * block, h, w]
    return shape


def irlab_kernels(model, inputs, threads):
    """[(name, seconds, output shape, FLOPs)] of irlab's kernels, in graph order."""
    import irlab as tvm
    from irlab import relay
    from irlab.contrib import graph_executor
    from irlab.relay.frontend import from_onnx

    mod, params = from_onnx(model, freeze_params=True)
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, f"llvm -num-cores={threads}", params=params)
    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    m.set_input(**inputs)
    ex = m.module
    shapes = ex.graph["attrs"]["shape"][1]
    clock = time.thread_time if threads == 1 else time.perf_counter
    rows = []
    for nid, call in ex._state().steps:
        node = ex.nodes[nid]
        ins = [shapes[ex.row_ptr[e[0]] + e[1]] for e in node["inputs"]]
        out = _as_nchw(shapes[ex.row_ptr[nid]])
        call()
        number, best = 3, float("inf")
        for _ in range(7):
            start = clock()
            for _ in range(number):
                call()
            best = min(best, (clock() - start) / number)
        name = node["name"].replace("tvmgen_default_fused_", "")
        rows.append((name, best, list(out), _flops(out, ins[1] if len(ins) > 1 else None)))
    return rows


def ort_nodes(model, inputs, threads, runs=30):
    """[(name, seconds, output shape, FLOPs)] of onnxruntime's nodes, in graph order."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.enable_profiling = True
    opts.profile_file_prefix = os.path.join(tempfile.mkdtemp(prefix="irlab-ort-"), "profile")
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    for _ in range(runs):
        sess.run(None, inputs)
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    times, info = collections.defaultdict(list), {}
    for e in events:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        name, args = e["name"][:-len("_kernel_time")], e.get("args", {})
        times[name].append(e["dur"] * 1e-6)
        if name not in info:
            shapes = [list(d.values())[0] for d in args.get("input_type_shape", [])]
            out = [list(d.values())[0] for d in args.get("output_type_shape", [])][0]
            info[name] = (args.get("op_name", "?"), out, shapes)
    rows = []
    for name, (op, out, ins) in info.items():  # dicts keep the first run's (graph) order
        weighted = op in ("Conv", "FusedConv", "Gemm", "FusedGemm", "MatMul")
        weight = ins[1] if weighted and len(ins) > 1 else None
        rows.append((f"{op} {name}", min(times[name]), out, _flops(out, weight)))
    return rows


def pair(ours, theirs):
    """Each irlab kernel with the next onnxruntime node of the same output shape."""
    pairs, j = [], 0
    for row in ours:
        k = next((k for k in range(j, len(theirs)) if theirs[k][2] == row[2]), None)
        pairs.append((row, theirs[k] if k is not None else None))
        j = k + 1 if k is not None else j
    return pairs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("resnet18", "mlp"), default="resnet18")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--size", type=int, default=224, help="ResNet image size")
    parser.add_argument("--chunks-per-thread", type=int, default=None,
                        help="chunks per thread of irlab's parallel loops (1: static split)")
    args = parser.parse_args()
    from irlab.runtime import threading as pool
    from irlab.relay.frontend import onnx_models
    from machine import describe, load, settle

    model = onnx_models.resnet18(image_size=args.size) if args.model == "resnet18" \
        else onnx_models.mlp()
    inputs = onnx_models.random_input(model)
    print(describe())
    chunks = args.chunks_per_thread or pool.CHUNKS_PER_THREAD
    with pool.chunks_per_thread(chunks):
        ours = irlab_kernels(model, inputs, args.threads)
    settle()
    theirs = ort_nodes(model, inputs, args.threads)
    what = "thread CPU" if args.threads == 1 else "wall"
    print(f"{args.model}, {args.threads} thread(s): irlab kernels ({what} ms, best of 7; "
          f"{chunks} chunks per thread) next to onnxruntime nodes (profiled ms, best of 30); "
          f"slowest irlab kernels first")
    print(f"{'irlab kernel':44} {'ms':>7} {'GFLOPS':>7} | {'ort ms':>7} {'GFLOPS':>7} "
          f"{'ratio':>6}  output")
    pairs = pair(ours, theirs)
    for (name, sec, out, flops), peer in sorted(pairs, key=lambda p: -p[0][1]):
        mine = f"{flops / sec / 1e9:7.1f}" if flops else f"{'-':>7}"
        if peer is None:
            print(f"{name[:44]:44} {sec * 1e3:7.3f} {mine} | {'?':>7}")
            continue
        work = peer[3] or flops  # the same layer: irlab's count when the profile lacks one
        theirs_gf = f"{work / peer[1] / 1e9:7.1f}" if work else f"{'-':>7}"
        print(f"{name[:44]:44} {sec * 1e3:7.3f} {mine} | {peer[1] * 1e3:7.3f} {theirs_gf} "
              f"{sec / peer[1]:6.2f}  {out}")
    total_ours, total_theirs = sum(r[1] for r in ours), sum(r[1] for r in theirs)
    print(f"{'total':44} {total_ours * 1e3:7.3f} {'':7} | {total_theirs * 1e3:7.3f} {'':7} "
          f"{total_ours / total_theirs:6.2f}")
    print(load())


if __name__ == "__main__":
    main()
