"""The long tier of differential fuzzing (issue 20): random TIR PrimFuncs built for LLVM and
C against the TIR interpreter, and random Relay graphs through ``relay.build`` at opt_level 0
and 3 against the Relay interpreter (half of them with NaN/inf inputs).

    python benchmarks/fuzz_differential.py --programs 10000 [--seed 1] [--relay-share 0.2]

Prints the count of programs run and of mismatches per family. A mismatch's program is
written to ``--out`` (TVMScript / Relay text plus the message) to be minimized into
``tests/fuzz/regressions``. NaN and infinity inputs are compared like any other (compiled
max/min propagate NaN and start from -inf/+inf, as numpy). The "known" column counts mismatches
set aside as known issues (none today). Errors (a valid program that fails to build or run) are
counted as mismatches.
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import seed as hypothesis_seed  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from tqdm import tqdm  # noqa: E402

from benchmarks.machine import describe  # noqa: E402
from irlab.testing.differential import run_relay_graph, run_tir_batch  # noqa: E402
from irlab.testing.relay_graphs import relay_graphs  # noqa: E402
from irlab.testing.tir_programs import tir_programs  # noqa: E402


class Tally:
    """Programs run / mismatches / known mismatches per family; failing programs to a file."""

    def __init__(self, out_path):
        self.runs = collections.Counter()
        self.bad = collections.Counter()
        self.known = collections.Counter()
        self.out_path = out_path

    def record(self, families, mismatches, known, text):
        for family in families:
            self.runs[family] += 1
            if mismatches:
                self.bad[family] += 1
            elif known:
                self.known[family] += 1
        if mismatches or known:
            with open(self.out_path, "a") as out:
                tag = "MISMATCH" if mismatches else "KNOWN (issue 20 item 4)"
                out.write(f"==== {tag} {' '.join(families)}\n{text}\n")
                out.write("\n".join(str(m) for m in mismatches + known) + "\n\n")

    def report(self, elapsed):
        print(f"\n{'family':<24}{'programs':>10}{'mismatches':>12}{'known':>8}")
        for family in sorted(self.runs):
            print(f"{family:<24}{self.runs[family]:>10}{self.bad[family]:>12}"
                  f"{self.known[family]:>8}")
        total = self.runs["tir"] + self.runs["relay"]
        bad = self.bad["tir"] + self.bad["relay"]
        print(f"\ntotal: {total} programs, {bad} mismatches, "
              f"{self.known['relay']} known NaN max/min mismatches, {elapsed:.0f} s")


def _error(target, err):
    from irlab.testing.differential import Mismatch

    return [Mismatch(target, "error", f"{type(err).__name__}: {str(err)[:500]}")]


def fuzz_tir(count, tally, bar, seed, batch=16):
    """``count`` TIR programs, drawn and compiled ``batch`` at a time (one module per build)."""
    @settings(max_examples=max(1, count // batch), deadline=None, database=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(st.lists(tir_programs(), min_size=batch, max_size=batch), st.integers(0, 2 ** 16))
    def run(programs, input_seed):
        for k, (program, mismatches) in enumerate(
                zip(programs, run_tir_batch(programs, seed=input_seed))):
            text = f"input seed {input_seed + k}\n{program.func.script()}"
            tally.record(("tir",) + tuple(f"tir:{f}" for f in program.families), mismatches,
                         [], text)
        bar.update(len(programs))

    hypothesis_seed(seed)(run)()


def fuzz_relay(count, tally, bar, seed):
    @settings(max_examples=count, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(relay_graphs(), st.integers(0, 2 ** 16), st.booleans())
    def run(graph, input_seed, special):
        try:
            mismatches = run_relay_graph(graph, seed=input_seed, special=special)
        except Exception as err:  # noqa: BLE001
            mismatches = _error("relay.build", err)
        known = []  # no mismatch is set aside: NaN/inf through max/min matches numpy now
        families = ("relay", f"relay:{graph.family}") + (("relay:nan-inf",) if special else ())
        text = f"input seed {input_seed}, NaN/inf inputs {special}\n{graph.mod}"
        tally.record(families, mismatches, known, text)
        bar.update(1)

    hypothesis_seed(seed)(run)()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=1000, help="TIR + Relay programs")
    parser.add_argument("--relay-share", type=float, default=0.2,
                        help="the share of Relay graphs among the programs")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="fuzz_mismatches.txt",
                        help="where failing programs are written")
    args = parser.parse_args(argv)
    n_relay = int(round(args.programs * args.relay_share))
    n_tir = (args.programs - n_relay + 15) // 16 * 16
    tally = Tally(args.out)
    start = time.time()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # report what ran, then stop
    try:
        with tqdm(total=n_tir + n_relay, desc="programs", mininterval=5) as bar:
            if n_tir:
                fuzz_tir(n_tir, tally, bar, args.seed)
            if n_relay:
                fuzz_relay(n_relay, tally, bar, args.seed)
    except KeyboardInterrupt:
        print("\ninterrupted: the counts are of the programs run so far")
    print(describe())
    tally.report(time.time() - start)


if __name__ == "__main__":
    main()
