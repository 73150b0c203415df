"""Build time against graph depth: ``relay.build`` of a chain of N fused add+relu layers
(``x = relu(x + c_i)``, ``irlab.relay.testing.chain``) at opt levels 3 and 0, for N in 25,
50, 100, 200, 500, 1000, 3000 (``--quick``: up to 200). Prints seconds per build and per
layer: flat per-layer figures mean linear scaling. Each build runs in a fresh process (the
build caches would otherwise share kernels between sizes) with the disk cache off. Asserts
nothing.

FuseOps puts up to ``relay.FuseOps.max_depth`` (256) ops in one kernel: up to 128 layers are
one kernel whose expression is as deep as the chain; past that, the chain is cut into
kernels of 128 layers, structurally equal ones lowered once.

Run: python benchmarks/bench_chain.py [--quick] [--sizes 25,50] [--opt-levels 3,0]
     [--shape 1,64,56,56]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

SIZES = (25, 50, 100, 200, 500, 1000, 3000)
QUICK_SIZES = (25, 50, 100, 200)


def build_once(num_layers, opt_level, shape):
    """Build the chain in this process; wall and CPU seconds (all threads)."""
    import irlab as tvm
    from irlab import relay
    from irlab.relay.testing import chain

    mod, params = chain.get_workload(num_layers, shape=shape)
    wall, cpu = time.perf_counter(), time.process_time()
    with tvm.transform.PassContext(opt_level=opt_level):
        relay.build(mod, target="llvm", params=params)
    return time.perf_counter() - wall, time.process_time() - cpu


def _in_subprocess(num_layers, opt_level, shape, timeout):
    cmd = [sys.executable, __file__, "--one", str(num_layers), "--opt-levels", str(opt_level),
           "--shape", ",".join(map(str, shape))]
    env = dict(os.environ, IRLAB_CACHE="0")
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"failed: {last[:200]}"
    return json.loads(done.stdout.strip().splitlines()[-1]), ""


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="sizes up to 200 layers")
    parser.add_argument("--sizes", help="comma-separated chain lengths")
    parser.add_argument("--opt-levels", default="3,0")
    parser.add_argument("--shape", default="1,16,8,8", help="the activation shape")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per build")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args()
    shape = tuple(int(d) for d in args.shape.split(","))
    levels = [int(x) for x in args.opt_levels.split(",")]
    if args.one is not None:
        wall, cpu = build_once(args.one, levels[0], shape)
        print(json.dumps({"wall": wall, "cpu": cpu}))
        return
    sizes = ([int(x) for x in args.sizes.split(",")] if args.sizes
             else QUICK_SIZES if args.quick else SIZES)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import machine

    print(machine.describe())
    print(f"chain of add+relu layers on {shape}, relay.build(target='llvm'), fresh process "
          f"per build, disk cache off")
    print(f"{'layers':>7} {'opt':>3} {'wall s':>8} {'cpu s':>8} {'ms/layer (cpu)':>15}")
    for opt_level in levels:
        for n in sizes:
            got, why = _in_subprocess(n, opt_level, shape, args.timeout)
            if got is None:
                print(f"{n:>7} {opt_level:>3} {why}", flush=True)
                continue
            print(f"{n:>7} {opt_level:>3} {got['wall']:>8.2f} {got['cpu']:>8.2f} "
                  f"{1000 * got['cpu'] / n:>15.1f}", flush=True)


if __name__ == "__main__":
    main()
