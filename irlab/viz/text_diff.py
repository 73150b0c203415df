"""Diffs of printed IR that ignore renumbering: ``%3`` becoming ``%4`` is not a change.

Lines are compared after every local name (``%0``, ``%p01``, ``%x2``) is replaced by a
placeholder, so a pass that inserts one binding does not mark every later line as changed;
the lines shown are the real ones.
"""

from __future__ import annotations

import difflib
import html
import re
from collections import Counter
from dataclasses import dataclass

_LOCAL = re.compile(r"%[A-Za-z_0-9.]+")
_COMMENT = re.compile(r"/\*.*?\*/")


def normalize_line(line: str, ignore_types=False) -> str:
    line = _LOCAL.sub("%_", line)
    if ignore_types:
        line = _COMMENT.sub("", line)
    return line.rstrip()


@dataclass
class DiffLine:
    """One row of a side-by-side diff: tag is equal/insert/delete/replace."""

    tag: str
    left: str | None
    right: str | None
    left_no: int | None
    right_no: int | None


# Above this many candidate line pairs (each line of one program against the equal lines
# of the other) the exact matcher is too slow: it looks at them again for every block it
# matches. Renumbering ignored, the 5,000 lines of a regular graph are a few distinct lines,
# and difflib took minutes on them.
MATCH_BUDGET = 300_000


def _match_cost(na, nb) -> int:
    """How many (line, equal line) pairs difflib's matcher would look at, about."""
    counts = Counter(nb)
    return sum(counts[x] for x in na)


def line_opcodes(na: list, nb: list) -> list:
    """difflib opcodes of two lists of normalized lines. Exact (no junk heuristic) when that
    is cheap; otherwise the common head and tail are kept as they are and the middle is
    matched with difflib's "popular lines are junk" heuristic, which stays fast."""
    if _match_cost(na, nb) <= MATCH_BUDGET:
        return difflib.SequenceMatcher(a=na, b=nb, autojunk=False).get_opcodes()
    head = 0
    while head < min(len(na), len(nb)) and na[head] == nb[head]:
        head += 1
    tail = 0
    while tail < min(len(na), len(nb)) - head and na[-1 - tail] == nb[-1 - tail]:
        tail += 1
    ma, mb = na[head:len(na) - tail], nb[head:len(nb) - tail]
    junk = _match_cost(ma, mb) > MATCH_BUDGET
    ops = [("equal", 0, head, 0, head)] if head else []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
            a=ma, b=mb, autojunk=junk).get_opcodes():
        ops.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        ops.append(("equal", len(na) - tail, len(na), len(nb) - tail, len(nb)))
    return ops


def diff_lines(before: str, after: str, ignore_types=False) -> list:
    """Side-by-side rows (``DiffLine``) of two printed programs."""
    a, b = before.splitlines(), after.splitlines()
    na = [normalize_line(x, ignore_types) for x in a]
    nb = [normalize_line(x, ignore_types) for x in b]
    rows = []
    for tag, i1, i2, j1, j2 in line_opcodes(na, nb):
        if tag == "equal":
            rows.extend(DiffLine("equal", a[i], b[j], i + 1, j + 1)
                        for i, j in zip(range(i1, i2), range(j1, j2)))
            continue
        left, right = list(range(i1, i2)), list(range(j1, j2))
        for k in range(max(len(left), len(right))):
            li = left[k] if k < len(left) else None
            rj = right[k] if k < len(right) else None
            row_tag = "replace" if li is not None and rj is not None else (
                "delete" if li is not None else "insert")
            rows.append(DiffLine(row_tag, a[li] if li is not None else None,
                                 b[rj] if rj is not None else None,
                                 None if li is None else li + 1,
                                 None if rj is None else rj + 1))
    return rows


def unified_diff(before: str, after: str, context=3, ignore_types=False) -> str:
    """A unified diff whose +/- lines are only the real changes (renumbering ignored)."""
    rows = diff_lines(before, after, ignore_types)
    keep = set()
    for i, row in enumerate(rows):
        if row.tag != "equal":
            keep.update(range(max(0, i - context), min(len(rows), i + context + 1)))
    out = []
    last = -2
    for i in sorted(keep):
        if i != last + 1:
            row = rows[i]
            out.append(f"@@ -{row.left_no or '?'} +{row.right_no or '?'} @@")
        row = rows[i]
        if row.tag == "equal":
            out.append(" " + row.right)
        else:
            if row.left is not None:
                out.append("-" + row.left)
            if row.right is not None:
                out.append("+" + row.right)
        last = i
    return "\n".join(out)


def changed(before: str, after: str, ignore_types=False) -> bool:
    """True when the programs differ beyond renumbering."""
    return any(r.tag != "equal" for r in diff_lines(before, after, ignore_types))


def diff_html(before: str, after: str, ignore_types=False) -> str:
    """A side-by-side HTML table of the diff (all text escaped)."""
    cells = []
    for row in diff_lines(before, after, ignore_types):
        left = "" if row.left is None else html.escape(row.left)
        right = "" if row.right is None else html.escape(row.right)
        cells.append(
            f'<tr class="irlab-diff-{row.tag}"><td class="no">{row.left_no or ""}</td>'
            f'<td class="code">{left}</td><td class="no">{row.right_no or ""}</td>'
            f'<td class="code">{right}</td></tr>')
    return '<table class="irlab-diff">' + "".join(cells) + "</table>"
