"""ONNX conformance counts: the installed onnx package's node test cases through from_onnx and
the Relay interpreter, pass/fail per op.

Run: python benchmarks/onnx_conformance.py [--failures] [--all-ops]
A case is in scope when every node of its graph has a converter; "gap" counts the in-scope
failures that are documented known gaps, "FAIL" the ones that are not (there should be none).
Nothing is asserted (the test suite does that).
"""

from __future__ import annotations

import argparse
import collections
import time

from irlab.relay.frontend import onnx_conformance as conformance


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--failures", action="store_true", help="print each failure message")
    parser.add_argument("--all-ops", action="store_true",
                        help="also list the generated op types with no case in scope")
    args = parser.parse_args()

    import onnx

    start = time.perf_counter()
    cases = conformance.collect_cases()
    collected = time.perf_counter() - start
    start = time.perf_counter()
    results = conformance.run_all()
    elapsed = time.perf_counter() - start

    rows = collections.defaultdict(lambda: [0, 0, 0])  # op -> pass, known gap, unexpected
    for name, error in results.items():
        case = cases[name]
        op = conformance.op_under_test(case)
        if error is None:
            rows[op][0] += 1
        elif conformance.gap_reason(case):
            rows[op][1] += 1
        else:
            rows[op][2] += 1
    print(f"onnx {onnx.__version__}: {len(cases)} generated node cases "
          f"({collected:.1f} s), {len(results)} in scope, run in {elapsed:.1f} s\n")
    print(f"{'op':44s} {'pass':>5s} {'gap':>5s} {'FAIL':>5s}")
    for op in sorted(rows, key=lambda o: (o.endswith("(expanded)"), o.lower())):
        passed, gaps, failed = rows[op]
        print(f"{op[:44]:44s} {passed:5d} {gaps:5d} {failed:5d}")
    totals = [sum(r[i] for r in rows.values()) for i in range(3)]
    print(f"\n{'total':44s} {totals[0]:5d} {totals[1]:5d} {totals[2]:5d}")

    reasons = collections.Counter(conformance.gap_reason(cases[n]) for n, e in results.items()
                                  if e is not None and conformance.gap_reason(cases[n]))
    print("\nknown gaps:")
    for reason, count in reasons.most_common():
        print(f"  {count:4d}  {reason}")
    if args.failures:
        print("\nfailures:")
        for name, error in sorted(results.items()):
            if error is not None:
                print(f"  {name}: {error}")
    if args.all_ops:
        in_scope = {node.op_type for n in results for node in cases[n].model.graph.node}
        generated = {node.op_type for c in cases.values() for node in c.model.graph.node}
        print("\nop types with no case in scope:", ", ".join(sorted(generated - in_scope)))


if __name__ == "__main__":
    main()
