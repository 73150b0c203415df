"""IR text diffs as compact JSON rows for the browser, with the changed parts of each
replaced line marked (tokens compared with local names renumbered away, so ``%3`` -> ``%4``
is not highlighted).

A row is ``[tag, left_no, right_no, left_changes, right_changes]``: tag ``e`` (equal),
``d`` (only on the left), ``i`` (only on the right) or ``r`` (replaced); line numbers are
1-based (0: none); changes are ``[start, end)`` character ranges. The line texts are sent
once per program, not per row.
"""

from __future__ import annotations

import difflib
import re

from irlab.viz.text_diff import diff_lines

_TOKEN = re.compile(r"%[A-Za-z_0-9.]+|@[A-Za-z_0-9.]+|\w+|\s+|.")
_LOCAL = re.compile(r"%[A-Za-z_0-9.]+")
_TAGS = {"equal": "e", "delete": "d", "insert": "i", "replace": "r"}


def _tokens(line: str):
    spans = [(m.start(), m.end()) for m in _TOKEN.finditer(line)]
    keys = [_LOCAL.sub("%_", line[a:b]) for a, b in spans]
    return spans, keys


def changed_ranges(left: str, right: str):
    """Character ranges of ``left`` and of ``right`` that differ (token by token)."""
    lspans, lkeys = _tokens(left)
    rspans, rkeys = _tokens(right)
    lranges, rranges = [], []
    matcher = difflib.SequenceMatcher(a=lkeys, b=rkeys, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            _add(lranges, lspans[i1][0], lspans[i2 - 1][1])
        if j2 > j1:
            _add(rranges, rspans[j1][0], rspans[j2 - 1][1])
    return lranges, rranges


def _add(ranges, start, end):
    if ranges and ranges[-1][1] == start:
        ranges[-1][1] = end
    else:
        ranges.append([start, end])


def diff_rows(before: str, after: str, ignore_types=False) -> list:
    """Side-by-side rows of two printed programs (see the module docstring)."""
    rows = []
    for row in diff_lines(before, after, ignore_types):
        tag = _TAGS[row.tag]
        lchg, rchg = [], []
        if tag == "r":
            lchg, rchg = changed_ranges(row.left, row.right)
        rows.append([tag, row.left_no or 0, row.right_no or 0, lchg, rchg])
    return rows


def diff_stats(rows) -> dict:
    """Counts of removed, added and replaced lines."""
    counts = {"d": 0, "i": 0, "r": 0}
    for row in rows:
        if row[0] in counts:
            counts[row[0]] += 1
    return {"removed": counts["d"], "added": counts["i"], "replaced": counts["r"]}
