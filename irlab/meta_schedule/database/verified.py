"""Which record a verified workload builds with: the margin rule over interleaved times.

A final verification (``meta_schedule/verification.py``) re-times TOPI's schedule of a
workload and its best tuned records in turns, and commits them as one group: first TOPI's
(``origin="verified-default"``), then the tuned ones (``"verified"``), each with one time per
round. The latest group of a workload decides (a ``tune_relay`` resumed on the same
``work_dir`` verifies again, and its group replaces the older one; candidates measured after
a group count only once verified).

A tuned record is taken only when it beats TOPI's by more than ``VERIFY_MARGIN``, compared
round by round: the median over rounds of (tuned time / TOPI's time in the same round).
"""

from __future__ import annotations

import statistics

VERIFIED_ORIGINS = ("verified-default", "verified")  # the origins a verification commits

# How much faster (as a fraction) a tuned kernel must be than TOPI's, paired round by round,
# to be built instead. It covers what interleaving does not cancel: (1) the spread of the
# paired median itself, which for two builds of the same dense kernel (ratio 1.0 by rights;
# 40 rounds of 20 ms, 2 threads, on this 2-core VM while other agents' jobs ran, load 3.3-6)
# was 0.977-1.052 over 14 runs, 13 of them within 3%; (2) a kernel's time inside the network
# differing from its time alone (other kernels' data in the caches, alignment), which no
# isolated measurement sees: a dense record 4% faster alone gave an MLP 10% slower than
# TOPI's build. A win of a few percent on one kernel is not worth that risk.
VERIFY_MARGIN = 0.05


def latest_verification(records) -> list:
    """The last verification group in ``records`` (one workload's, one target's, in commit
    order): its TOPI record then its tuned records; [] when none was verified."""
    starts = [i for i, r in enumerate(records) if r.origin == "verified-default"]
    if not starts:
        return []
    group = [records[starts[-1]]]
    group += [r for r in records[starts[-1] + 1:] if r.origin == "verified"]
    return group


def paired_ratio(record, baseline) -> float:
    """The median over rounds of ``record``'s time / ``baseline``'s in the same round (< 1:
    ``record`` is faster); with unequal round counts, the ratio of their medians."""
    ours, theirs = record.run_secs, baseline.run_secs
    if len(ours) != len(theirs):
        return statistics.median(ours) / statistics.median(theirs)
    return statistics.median(a / b for a, b in zip(ours, theirs))


def choose_verified(group, margin=VERIFY_MARGIN):
    """The record to build from a verification group (``latest_verification``): the tuned
    record with the smallest paired ratio to TOPI's if that ratio is below ``1 - margin``,
    else TOPI's. When TOPI's failed in the verification, the fastest tuned one that ran;
    None when nothing in the group ran."""
    baseline, tuned = group[0], [r for r in group[1:] if r.is_valid]
    if not baseline.is_valid:
        return min(tuned, key=lambda r: statistics.median(r.run_secs), default=None)
    if not tuned:
        return baseline
    best = min(tuned, key=lambda r: paired_ratio(r, baseline))
    return best if paired_ratio(best, baseline) < 1.0 - margin else baseline
