"""Diffs of printed IR that ignore renumbering: ``%3`` becoming ``%4`` is not a change.

Lines are compared after every local name (``%0``, ``%p01``, ``%x2``) is replaced by a
placeholder, so a pass that inserts one binding does not mark every later line as changed;
the lines shown are the real ones.
"""

from __future__ import annotations

import difflib
from array import array
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


# The most edits (inserted plus deleted lines) the shortest-edit-script matcher looks for
# before giving up: its work and memory grow with the square of this number (3,000: ~1-3 s
# of CPU and 36 MB at most; EliminateCommonSubexpr on the 5,000-node graph removes 2,498).
MAX_EDITS = 3000


def _trim(na, nb) -> tuple:
    """Lengths of the common head and tail of two line lists."""
    head = 0
    while head < min(len(na), len(nb)) and na[head] == nb[head]:
        head += 1
    tail = 0
    while tail < min(len(na), len(nb)) - head and na[-1 - tail] == nb[-1 - tail]:
        tail += 1
    return head, tail


def _fewest_edits(a, b) -> int:
    """A lower bound of the edits from ``a`` to ``b``: each line more often in one of them
    than in the other is inserted or deleted."""
    counts = Counter(a)
    counts.subtract(b)
    return sum(abs(c) for c in counts.values())


def _edit_frontiers(a, b, max_edits):
    """Myers' greedy search for a shortest edit script: the frontier (furthest x on each
    diagonal k = x - y) before each number of edits d, or None past ``max_edits``. Its work
    is (len(a) + len(b)) * d, whatever the repetition of lines, so a pass that changes 5
    lines of 5,000 costs a few thousand comparisons."""
    n, m = len(a), len(b)
    off = max_edits + 1
    v = [0] * (2 * max_edits + 3)
    frontiers = []
    for d in range(max_edits + 1):
        frontiers.append(array("i", v[off - d - 1:off + d + 2]))  # 4 bytes an entry
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[off + k - 1] < v[off + k + 1]):
                x = v[off + k + 1]
            else:
                x = v[off + k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            v[off + k] = x
            if x >= n and y >= m:
                return frontiers
    return None


def _edit_steps(a, b, frontiers) -> list:
    """Backtrack the frontiers into steps ('equal' | 'delete' | 'insert'), in order."""
    steps = []
    x, y = len(a), len(b)
    for d in range(len(frontiers) - 1, -1, -1):
        v = frontiers[d]  # v[i] is the frontier of diagonal i - d - 1
        k = x - y
        if k == -d or (k != d and v[k - 1 + d + 1] < v[k + 1 + d + 1]):
            prev_k = k + 1
        else:
            prev_k = k - 1
        prev_x = v[prev_k + d + 1]
        prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:
            steps.append("equal")
            x, y = x - 1, y - 1
        if d:
            steps.append("insert" if x == prev_x else "delete")
        x, y = prev_x, prev_y
    steps.reverse()
    return steps


def _steps_to_opcodes(steps) -> list:
    """Group edit steps into difflib-style opcodes (a delete next to an insert: replace)."""
    ops, i, j, pos = [], 0, 0, 0
    while pos < len(steps):
        i1, j1 = i, j
        if steps[pos] == "equal":
            while pos < len(steps) and steps[pos] == "equal":
                i, j, pos = i + 1, j + 1, pos + 1
            ops.append(("equal", i1, i, j1, j))
            continue
        while pos < len(steps) and steps[pos] != "equal":
            i, j = (i + 1, j) if steps[pos] == "delete" else (i, j + 1)
            pos += 1
        tag = "replace" if i > i1 and j > j1 else ("delete" if i > i1 else "insert")
        ops.append((tag, i1, i, j1, j))
    return ops


def _shift(ops, di, dj) -> list:
    return [(tag, i1 + di, i2 + di, j1 + dj, j2 + dj) for tag, i1, i2, j1, j2 in ops]


def line_opcodes(na: list, nb: list) -> list:
    """difflib opcodes of two lists of normalized lines. Exact (difflib, no junk heuristic)
    when that is cheap. Otherwise (a big program of few distinct lines once renumbering is
    ignored) the common head and tail are kept and the middle gets a shortest edit script
    (Myers), so 5 changed lines of 5,000 show as 5; past ``MAX_EDITS`` edits the middle is
    matched with difflib's "popular lines are junk" heuristic, which stays fast."""
    if _match_cost(na, nb) <= MATCH_BUDGET:
        return difflib.SequenceMatcher(a=na, b=nb, autojunk=False).get_opcodes()
    head, tail = _trim(na, nb)
    ma, mb = na[head:len(na) - tail], nb[head:len(nb) - tail]
    ids = {}
    ia = [ids.setdefault(x, len(ids)) for x in ma]
    ib = [ids.setdefault(x, len(ids)) for x in mb]
    frontiers = None
    if _fewest_edits(ia, ib) <= MAX_EDITS:  # else the search would only give up, seconds later
        frontiers = _edit_frontiers(ia, ib, min(MAX_EDITS, len(ia) + len(ib)))
    if frontiers is not None:
        middle = _steps_to_opcodes(_edit_steps(ia, ib, frontiers))
    else:
        junk = _match_cost(ma, mb) > MATCH_BUDGET
        middle = difflib.SequenceMatcher(a=ma, b=mb, autojunk=junk).get_opcodes()
    ops = [("equal", 0, head, 0, head)] if head else []
    ops.extend(_shift(middle, head, head))
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
