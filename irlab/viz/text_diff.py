"""Diffs of printed IR that ignore renumbering: ``%3`` becoming ``%4`` is not a change.

Lines are compared after every local name (``%0``, ``%p01``, ``%x2``) is replaced by a
placeholder, so a pass that inserts one binding does not mark every later line as changed;
the lines shown are the real ones.
"""

from __future__ import annotations

import difflib
import html
import re
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


def diff_lines(before: str, after: str, ignore_types=False) -> list:
    """Side-by-side rows (``DiffLine``) of two printed programs."""
    a, b = before.splitlines(), after.splitlines()
    na = [normalize_line(x, ignore_types) for x in a]
    nb = [normalize_line(x, ignore_types) for x in b]
    rows = []
    matcher = difflib.SequenceMatcher(a=na, b=nb, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
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
