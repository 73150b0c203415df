"""float32 conv2d on ResNet-18's layer shapes (batch 1): irlab's schedules
(``irlab/topi/x86/conv2d.py``) -- NCHW as the strategy picks it, NCHW direct (packed weight),
NCHW im2col + GEMM, NHWC direct -- vs numpy im2col + matmul (OpenBLAS) and onnxruntime.

    python benchmarks/bench_conv.py              # all layers, 1 thread
    python benchmarks/bench_conv.py --threads 2
    python benchmarks/bench_conv.py --quick      # three layers

Each conv is lowered as LowerTE does (``lower_function`` of a one-op Relay function) with
``llvm -num-cores=<threads>``. GFLOPS = 2 * N*OC*OH*OW*IC*KH*KW / the best of ``--repeat``
(5) repeats: the machine is shared, the best repeat is the least disturbed one.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

# (name, in channels, out channels, input size, kernel, stride, padding)
LAYERS = [
    ("conv1 7x7/2", 3, 64, 224, 7, 2, 3),
    ("l1 3x3 64@56", 64, 64, 56, 3, 1, 1),
    ("l2 3x3/2 64>128", 64, 128, 56, 3, 2, 1),
    ("l2 3x3 128@28", 128, 128, 28, 3, 1, 1),
    ("l2 1x1/2 64>128", 64, 128, 56, 1, 2, 0),
    ("l3 3x3 256@14", 256, 256, 14, 3, 1, 1),
    ("l4 3x3 512@7", 512, 512, 7, 3, 1, 1),
    ("l4 1x1/2 256>512", 256, 512, 14, 1, 2, 0),
]
QUICK = ["l1 3x3 64@56", "l3 3x3 256@14", "l4 3x3 512@7"]


REPEAT = 5


def _best_time(fn, min_ms=100, repeat=None):
    repeat = repeat or REPEAT
    fn()
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed * 1000 >= min_ms / repeat:
            break
        number *= 2
    times = [elapsed / number]
    for _ in range(repeat - 1):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return float(np.min(times))


def irlab_conv(ic, oc, size, k, s, p, layout, threads, nchw="auto"):
    """(seconds, max relative error, implementation) of irlab's lowered conv2d in ``layout``;
    ``nchw``: "auto" (the strategy's choice), "direct" or "im2col" (forced)."""
    from irlab.relay.op.strategy import conv as conv_strategy

    saved = conv_strategy.IM2COL_MAX_PIXELS
    conv_strategy.IM2COL_MAX_PIXELS = {"auto": saved, "direct": 0, "im2col": 1 << 30}[nchw]
    try:
        return _irlab_conv(ic, oc, size, k, s, p, layout, threads)
    finally:
        conv_strategy.IM2COL_MAX_PIXELS = saved


def _irlab_conv(ic, oc, size, k, s, p, layout, threads):
    import irlab
    from irlab import relay
    from irlab.ir.op import Op
    from irlab.relay.backend.te_compiler import lower_function
    from irlab.target import Target

    rng = np.random.default_rng(0)
    if layout == "NCHW":
        dshape, wshape, klayout = (1, ic, size, size), (oc, ic, k, k), "OIHW"
    else:
        dshape, wshape, klayout = (1, size, size, ic), (k, k, ic, oc), "HWIO"
    x = relay.var("x", shape=dshape)
    w = relay.var("w", shape=wshape)
    call = relay.nn.conv2d(x, w, strides=s, padding=p, data_layout=layout,
                           kernel_layout=klayout)
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(relay.Function([x, w], call)))
    func = mod["main"]
    target = f"llvm -num-cores={threads}"
    lowered = lower_function(func, Target(target))
    built = irlab.build(lowered.prim_func, target=target)
    a = rng.standard_normal(dshape, dtype=np.float32)
    b = rng.standard_normal(wshape, dtype=np.float32)
    ty = func.body.checked_type
    args = [irlab.nd.array(a), irlab.nd.array(b), irlab.nd.empty(
        tuple(int(d) for d in ty.shape), "float32")]
    f = built[lowered.name]
    f(*args)
    want = Op.get("nn.conv2d").reference([a, b], func.body.attrs, ty)
    err = float(np.max(np.abs(args[-1].numpy() - want)) / (np.max(np.abs(want)) + 1e-9))
    return _best_time(lambda: f(*args)), err, lowered.anchor[0].name


def numpy_conv(ic, oc, size, k, s, p):
    from irlab.relay.op.nn.conv import conv2d_nchw

    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, ic, size, size), dtype=np.float32)
    b = rng.standard_normal((oc, ic, k, k), dtype=np.float32)
    return _best_time(lambda: conv2d_nchw(a, b, (s, s), (p,) * 4, (1, 1), 1))


def ort_conv(ic, oc, size, k, s, p, threads):
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError:
        return None
    rng = np.random.default_rng(0)
    w = rng.standard_normal((oc, ic, k, k), dtype=np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[k, k], strides=[s, s],
                            pads=[p] * 4)
    graph = helper.make_graph(
        [node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                       [1, ic, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.flatten())])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    a = rng.standard_normal((1, ic, size, size), dtype=np.float32)
    return _best_time(lambda: sess.run(None, {"x": a}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=5,
                        help="repeats per measurement (the best is kept)")
    parser.add_argument("--columns", nargs="+",
                        default=["NCHW", "NCHW-direct", "NCHW-im2col", "NHWC"])
    args = parser.parse_args(argv)
    global REPEAT
    REPEAT = args.repeat
    try:
        from threadpoolctl import threadpool_limits
        limit = threadpool_limits(limits=args.threads, user_api="blas")
    except ImportError:
        limit = None
    layers = [layer for layer in LAYERS if not args.quick or layer[0] in QUICK]
    from machine import describe

    print(describe())
    print(f"conv2d float32, batch 1, {args.threads} thread(s); GFLOPS (ms)")
    head = f"{'layer':<18}" + "".join(f"{col:>20}" for col in args.columns)
    print(head + f"{'numpy im2col':>18}{'onnxruntime':>18}")
    for name, ic, oc, size, k, s, p in layers:
        out = (size + 2 * p - k) // s + 1
        flops = 2.0 * oc * out * out * ic * k * k
        line = f"{name:<18}"
        for col in args.columns:
            layout, _, nchw = col.partition("-")
            t, err, impl = irlab_conv(ic, oc, size, k, s, p, layout, args.threads,
                                      nchw or "auto")
            flag = "" if err < 1e-4 else "!"
            line += f"{flops / t / 1e9:>11.1f} ({t * 1e3:5.2f}){flag}"
        t = numpy_conv(ic, oc, size, k, s, p)
        line += f"{flops / t / 1e9:>9.1f} ({t * 1e3:5.2f})"
        t = ort_conv(ic, oc, size, k, s, p, args.threads)
        line += f"{flops / t / 1e9:>9.1f} ({t * 1e3:5.2f})" if t else f"{'-':>18}"
        print(line, flush=True)
    del limit


if __name__ == "__main__":
    main()
