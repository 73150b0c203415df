"""Times the foundation on real models: build, InferType, print, parse, interpret.

Run: python benchmarks/bench_relay_core.py [--models resnet18,mobilenet_v2,...] [--no-run]
Prints one row per model; nothing is asserted (figures, not tests).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import irlab
from irlab import relay


def _builders():
    from irlab.relay.testing import bert, mlp, mobilenet, resnet, simplenet

    return {
        "simplenet": lambda: simplenet.get_workload(),
        "mlp": lambda: mlp.get_workload(batch_size=1),
        "resnet18": lambda: resnet.get_workload(num_layers=18),
        "resnet50": lambda: resnet.get_workload(num_layers=50),
        "mobilenet_v2": lambda: mobilenet.get_workload(),
        "bert_layer": lambda: bert.get_workload(),
    }


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    builders = _builders()
    parser.add_argument("--models", default=",".join(builders))
    parser.add_argument("--no-run", action="store_true", help="skip the interpreter")
    args = parser.parse_args()
    header = f"{'model':14s} {'nodes':>6s} {'build':>8s} {'infer':>8s} {'print':>8s} " \
             f"{'parse':>8s} {'interp':>8s}"
    print(header)
    print("-" * len(header))
    for name in args.models.split(","):
        (mod, params), t_build = _timed(builders[name])
        mod, t_infer = _timed(lambda: relay.transform.InferType()(mod))
        text, t_print = _timed(mod.astext)
        parsed, t_parse = _timed(lambda: irlab.parser.parse(text))
        assert irlab.ir.structural_equal(parsed, mod)
        nodes = relay.analysis.count_nodes(mod["main"])
        t_run = float("nan")
        if not args.no_run:
            data = mod["main"].params[0]
            x = np.random.default_rng(0).standard_normal(data.checked_type.shape)
            run = relay.create_executor("debug", mod=mod, params=params).evaluate()
            _, t_run = _timed(lambda: run(x.astype(data.checked_type.dtype)))
        print(f"{name:14s} {nodes:6d} {t_build:7.3f}s {t_infer:7.3f}s {t_print:7.3f}s "
              f"{t_parse:7.3f}s {t_run:7.3f}s")


if __name__ == "__main__":
    main()
