"""float32 conv2d on ResNet-18's layer shapes (batch 1): irlab's schedules
(``irlab/topi/x86/conv2d.py``) -- NCHWc (what relay.build runs on x86), NCHW as the strategy
picks it, NCHW direct (packed weight), NCHW im2col + GEMM, NHWC direct -- vs numpy im2col +
matmul (OpenBLAS) and onnxruntime.

    python benchmarks/bench_conv.py              # all layers, 1 thread
    python benchmarks/bench_conv.py --threads 2
    python benchmarks/bench_conv.py --quick      # three layers
    python benchmarks/bench_conv.py --tasks      # ResNet-18's tuning tasks: TOPI time, share
    python benchmarks/bench_conv.py --tune 4 --trials 96   # tune the 4 largest, vs TOPI
    python benchmarks/bench_conv.py --tune 1 --task fused_nn_conv2d_add_nn_relu --trials 64
                                                 # the stem (--no-seed: no seeded defaults)
    python benchmarks/bench_conv.py --tasks --nchw    # the tasks with packed NCHW convs

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


def _best_time(fn, min_ms=100, repeat=None, clock=time.perf_counter):
    """Best per-call seconds of ``fn`` over ``repeat`` batches; ``clock=time.thread_time``
    counts this thread's CPU only (one thread: the time the kernel ran, not the time other
    processes of a loaded machine took the core)."""
    repeat = repeat or REPEAT
    fn()
    number = 1
    while True:
        start = clock()
        for _ in range(number):
            fn()
        elapsed = clock() - start
        if elapsed * 1000 >= min_ms / repeat:
            break
        number *= 2
    times = [elapsed / number]
    for _ in range(repeat - 1):
        start = clock()
        for _ in range(number):
            fn()
        times.append((clock() - start) / number)
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
    from irlab.relay.backend.te_compiler import lower_function
    from irlab.target import Target

    rng = np.random.default_rng(0)
    target = f"llvm -num-cores={threads}"
    if layout == "NCHWc":  # the blocks AlterOpLayout picks (use_nchwc)
        y = Target(target).vector_width("float32")
        x_ = y if ic % y == 0 else 1
        dshape, wshape = (1, ic // x_, size, size, x_), (oc // y, ic // x_, k, k, x_, y)
    elif layout == "NCHW":
        dshape, wshape, klayout = (1, ic, size, size), (oc, ic, k, k), "OIHW"
    else:
        dshape, wshape, klayout = (1, size, size, ic), (k, k, ic, oc), "HWIO"
    x = relay.var("x", shape=dshape)
    w = relay.var("w", shape=wshape)
    if layout == "NCHWc":
        call = relay.nn.contrib_conv2d_nchwc(x, w, strides=s, padding=p,
                                             data_layout=f"NCHW{x_}c",
                                             kernel_layout=f"OIHW{x_}i{y}o",
                                             out_layout=f"NCHW{y}c")
    else:
        call = relay.nn.conv2d(x, w, strides=s, padding=p, data_layout=layout,
                               kernel_layout=klayout)
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(relay.Function([x, w], call)))
    func = mod["main"]
    lowered = lower_function(func, Target(target))
    built = irlab.build(lowered.prim_func, target=target)
    a = rng.standard_normal(dshape, dtype=np.float32)
    b = rng.standard_normal(wshape, dtype=np.float32)
    ty = func.body.checked_type
    args = [irlab.nd.array(a), irlab.nd.array(b), irlab.nd.empty(
        tuple(int(d) for d in ty.shape), "float32")]
    f = built[lowered.name]
    f(*args)
    want = func.body.op.reference([a, b], func.body.attrs, ty)
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


def _kernel_seconds(mod, target, threads):
    """Best-of-repeats seconds of ``mod``'s ``main`` built for ``target`` on random inputs
    (at one thread, CPU seconds of the calling thread, which runs the kernel)."""
    import irlab
    from irlab.meta_schedule.arg_info import ArgInfo
    from irlab.meta_schedule.runner.measure import random_arguments
    from irlab.runtime.threading import num_threads_override

    lib = irlab.build(mod, target=target)
    args = [irlab.nd.array(a) for a in random_arguments(ArgInfo.from_entry_func(mod))]
    with num_threads_override(threads):
        clock = time.thread_time if threads == 1 else time.perf_counter
        return _best_time(lambda: lib["main"](*args), clock=clock)


def layout_of(task) -> str:
    """The layouts a task's kernel sees: data and weight (``NCHW{x}c/OIHW{x}i{y}o`` for the
    NCHWc conv, ``OIHW{n}o`` once AlterOpLayout packed an NCHW conv's weight), from the
    PrimFunc's buffer shapes."""
    if "conv2d" not in task.task_name:
        return "-"
    func = task.mod["main"]
    shapes = [tuple(int(d) for d in func.buffer_map[p].shape) for p in func.params]
    if len(shapes) >= 2 and len(shapes[0]) == 5 and len(shapes[1]) == 6:
        x, y = shapes[1][4:]
        return f"NCHW{x}c/OIHW{x}i{y}o"
    if len(shapes) < 2 or len(shapes[1]) not in (4, 5) or len(shapes[0]) != 4:
        return "-"
    weight = "OIHW" if len(shapes[1]) == 4 else f"OIHW{shapes[1][-1]}o"
    return f"NCHW/{weight}"


def task_rows(image_size, threads):
    """``[(task, seconds of TOPI's kernel, FLOPs)]`` of ResNet-18's tuning tasks
    (``extract_tasks`` at opt_level 3 for ``llvm -num-cores=threads``)."""
    from irlab import meta_schedule as ms
    from irlab.meta_schedule.feature_extractor.flops import estimate_flops
    from irlab.relay.frontend import from_onnx, onnx_models

    mod, params = from_onnx(onnx_models.resnet18(image_size=image_size), freeze_params=True)
    target = f"llvm -num-cores={threads}"
    rows = []
    for task in ms.relay_integration.extract_tasks(mod, target, params):
        seconds = _kernel_seconds(task.default_schedule.mod, target, threads)
        rows.append((task, seconds, estimate_flops(task.mod)))
    return rows


def print_tasks(image_size, threads):
    """The task table of issue 15: per task TOPI's time, FLOPs, GFLOPS, weight, share."""
    from machine import describe, load

    print(describe())
    rows = task_rows(image_size, threads)
    total = sum(t.weight * sec for t, sec, _ in rows)
    print(f"ResNet-18 {image_size}: {len(rows)} tasks, TOPI kernels at {threads} thread(s), "
          f"sum of weight x time {total * 1e3:.2f} ms ({load()})")
    print(f"{'task':<34}{'layout':>22}{'weight':>7}{'TOPI ms':>9}{'MFLOP':>8}{'GFLOPS':>8}"
          f"{'share':>7}")
    for task, sec, flops in sorted(rows, key=lambda r: -r[0].weight * r[1]):
        print(f"{task.task_name:<34}{layout_of(task):>22}{task.weight:>7}{sec * 1e3:>9.3f}"
              f"{flops / 1e6:>8.1f}{flops / sec / 1e9:>8.1f}"
              f"{100 * task.weight * sec / total:>6.1f}%", flush=True)


def tune_tasks(count, trials, threads, image_size, work_root, per_iter, names=None,
               seed_defaults=True):
    """Tune the ``count`` tasks with the largest share of ResNet-18 alone (``tune_tir``,
    ``trials`` each) and print tuned vs TOPI per task: both timed here in turns, best of
    three each (the machine is shared; at one thread in thread-CPU seconds), the tuned
    kernel checked against TOPI's output. ``names``: those tasks instead of the largest;
    ``seed_defaults``: EvolutionarySearch measures the rules' default decisions first."""
    import os
    import tempfile

    from irlab import meta_schedule as ms
    from machine import describe, load

    print(describe())
    rows = sorted(task_rows(image_size, threads), key=lambda r: -r[0].weight * r[1])
    rows = [r for r in rows if r[0].task_name in names] if names else rows[:count]
    target = f"llvm -num-cores={threads}"
    work_root = work_root or tempfile.mkdtemp(prefix="bench_conv_tune_")
    print(f"{'task':<34}{'trials':>7}{'tune s':>8}{'CPU s':>8}{'TOPI ms':>9}{'tuned ms':>9}"
          f"{'TOPI/tuned':>11}  load")
    for task, _, _ in rows:
        start, cpu = time.perf_counter(), _children_cpu()
        work_dir = os.path.join(work_root, task.task_name)
        if trials:
            strategy = ms.search_strategy.EvolutionarySearch(seed_defaults=seed_defaults)
            db = ms.tune_tir(task.mod, target, work_dir, trials, num_trials_per_iter=per_iter,
                             seed=0, strategy=strategy)
        else:  # --trials 0: time what an earlier run recorded
            db = ms.database.JSONDatabase(work_dir=work_dir)
        wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
        sch = ms.tir_integration.compile_tir(db, task.mod, target)
        if sch is None:
            print(f"{task.task_name:<34} no successful record")
            continue
        _check_equal(sch.mod, task.default_schedule.mod, target)
        topi = tuned = float("inf")
        for _ in range(3):
            topi = min(topi, _kernel_seconds(task.default_schedule.mod, target, threads))
            tuned = min(tuned, _kernel_seconds(sch.mod, target, threads))
        print(f"{task.task_name:<34}{trials:>7}{wall:>8.0f}{cpu:>8.0f}{topi * 1e3:>9.3f}"
              f"{tuned * 1e3:>9.3f}{topi / tuned:>11.2f}  {load()}", flush=True)
    print(f"records in {work_root}")


def _children_cpu() -> float:
    """CPU seconds of this process and its finished children (builder/runner workers)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _check_equal(mod, reference, target):
    """Raise unless ``mod`` computes ``reference``'s output on random inputs."""
    import irlab
    from irlab.meta_schedule.arg_info import ArgInfo
    from irlab.meta_schedule.runner.measure import random_arguments

    outs = []
    for m in (mod, reference):
        args = [irlab.nd.array(a) for a in random_arguments(ArgInfo.from_entry_func(m))]
        irlab.build(m, target=target)["main"](*args)
        outs.append(args[-1].numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-4, atol=1e-4)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=5,
                        help="repeats per measurement (the best is kept)")
    parser.add_argument("--columns", nargs="+",
                        default=["NCHWc", "NCHW", "NCHW-direct", "NCHW-im2col", "NHWC"])
    parser.add_argument("--tasks", action="store_true",
                        help="ResNet-18's tuning tasks (extract_tasks): TOPI time and share")
    parser.add_argument("--image-size", type=int, default=224, help="with --tasks/--tune")
    parser.add_argument("--tune", type=int, default=0, metavar="N",
                        help="tune the N tasks of ResNet-18 with the largest share")
    parser.add_argument("--trials", type=int, default=96,
                        help="with --tune: per task (0: time the records in --work-dir)")
    parser.add_argument("--per-iter", type=int, default=32, help="with --tune")
    parser.add_argument("--work-dir", default=None, help="with --tune: records go here")
    parser.add_argument("--task", nargs="+", default=None,
                        help="with --tune: these tasks (names as --tasks prints them)")
    parser.add_argument("--no-seed", action="store_true",
                        help="with --tune: no seeded default decisions in the first round")
    parser.add_argument("--nchw", action="store_true",
                        help="with --tasks/--tune: ResNet-18's convs as packed NCHW instead "
                             "of the default NCHWc (PassContext relay.x86.conv2d_NCHWc False)")
    args = parser.parse_args(argv)
    if args.tasks or args.tune:
        from irlab.transform import PassContext

        with PassContext(opt_level=3, config={"relay.x86.conv2d_NCHWc": not args.nchw}):
            if args.tasks:
                return print_tasks(args.image_size, args.threads)
            return tune_tasks(args.tune, args.trials, args.threads, args.image_size,
                              args.work_dir, args.per_iter, args.task, not args.no_seed)
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
