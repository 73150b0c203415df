"""A tiny Doc layer for the Relay text printer (TVM's ``src/relay/printer/doc.h``, flattened).

A doc is a plain Python list of *atoms*:

- a ``str``: text, printed as is;
- ``NL``: a line break followed by the current indentation;
- ``(PUSH, n)`` / ``POP``: indentation of ``n`` more spaces for the line breaks in between
  (TVM's ``Doc::Indent`` rewrites every line inside a doc; bracketing is equivalent and O(1));
- ``(BEGIN, node)`` / ``(END, node)``: marks around the text of an IR node, turned into
  ``(line, start_col, end_col)`` locations by ``render(..., track=True)``.

Docs are built by list concatenation; memoized docs are stored as tuples so nobody appends to
a shared one by accident.
"""

from __future__ import annotations

NL = 0
PUSH = 1
POP = 2
BEGIN = 3
END = 4


def indent(n: int, doc) -> list:
    """``doc`` with ``n`` more spaces after each of its line breaks."""
    return [(PUSH, n), *doc, POP]


def join(docs, sep=", ") -> list:
    """Concatenate docs with ``sep`` (a string) between them."""
    out: list = []
    for i, d in enumerate(docs):
        if i:
            out.append(sep)
        out.extend(d)
    return out


def render(doc, track: bool = False):
    """The text of ``doc`` and, with ``track``, ``{node: (line, start_col, end_col)}``.

    Lines and columns are 0-based and ``end_col`` is exclusive, so
    ``text.splitlines()[line][start:end]`` is the node's text. A node printed over several lines
    gets the end of its first line as ``end_col``. A node printed several times keeps its first
    occurrence (its definition: a parameter, a ``%N = ...`` binding).
    """
    out: list = []
    level = 0
    levels: list = []
    line = 0
    col = 0
    open_marks: dict = {}
    spans: dict = {}
    for atom in doc:
        if atom.__class__ is str:
            out.append(atom)
            if track:
                nl = atom.rfind("\n")
                if nl < 0:
                    col += len(atom)
                else:  # raw multi-line text (the metadata section)
                    line += atom.count("\n")
                    col = len(atom) - nl - 1
        elif atom == NL:
            out.append("\n" + " " * level)
            line += 1
            col = level
        elif atom == POP:
            level = levels.pop()
        else:
            tag, value = atom
            if tag == PUSH:
                levels.append(level)
                level += value
            elif not track:
                continue
            elif tag == BEGIN:
                if value not in spans and value not in open_marks:
                    open_marks[value] = (line, col)
            elif tag == END:
                start = open_marks.pop(value, None)
                if start is not None:
                    spans[value] = (start[0], start[1], line, col)
    text = "".join(out)
    if not track:
        return text, None
    lines = text.split("\n")
    locations = {}
    for node, (l0, c0, l1, c1) in spans.items():
        locations[node] = (l0, c0, c1 if l1 == l0 else len(lines[l0]))
    return text, locations
