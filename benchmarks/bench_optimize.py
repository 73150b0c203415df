"""relay.optimize on ResNet-50 at opt_level 3: time with no instrument, with IRSnapshot
(with and without node/op counts) and with VerifyAfterEach. Prints figures; asserts nothing.

Run: python benchmarks/bench_optimize.py [--repeat 3] [--model resnet50]
"""

from __future__ import annotations

import argparse
import statistics
import time

import irlab as tvm
from irlab import relay
from irlab.instrument import IRSnapshot, VerifyAfterEach


def _workload(name):
    from irlab.relay.testing import mobilenet, resnet

    if name == "resnet50":
        return resnet.get_workload(num_layers=50)
    if name == "resnet18":
        return resnet.get_workload(num_layers=18)
    return mobilenet.get_workload()


def _time(mod, params, instruments, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        with tvm.transform.PassContext(opt_level=3, instruments=list(instruments())):
            relay.optimize(mod, "llvm", params)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--model", default="resnet50")
    args = parser.parse_args()
    mod, params = _workload(args.model)
    snapshot = IRSnapshot()
    runs = [
        ("no instrument", lambda: []),
        ("IRSnapshot", lambda: [snapshot]),
        ("IRSnapshot(track_counts=False)", lambda: [IRSnapshot(track_counts=False)]),
        ("VerifyAfterEach", lambda: [VerifyAfterEach()]),
    ]
    base = None
    print(f"relay.optimize({args.model}, opt_level=3), median of {args.repeat}")
    for label, instruments in runs:
        seconds = _time(mod, params, instruments, args.repeat)
        base = base or seconds
        print(f"  {label:32s} {seconds:7.3f} s   {seconds / base:5.2f}x")
    snapshot.clear()
    with tvm.transform.PassContext(opt_level=3, instruments=[snapshot]):
        relay.optimize(mod, "llvm", params)
    print(f"  passes recorded: {len(snapshot)}, changed: {len(snapshot.changed())}")


if __name__ == "__main__":
    main()
