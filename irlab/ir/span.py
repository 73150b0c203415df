"""Source locations attached to IR nodes (``Span``), as TVM's ``tvm.ir.Span``."""

from __future__ import annotations

from irlab.ir.node import Node


class SourceName(Node):
    """The name of a source (a file, ``from_string``, or an ONNX node name)."""

    _value_semantics = True
    name: str

    def __str__(self):
        return self.name


class Span(Node):
    """A region of a source: ``source_name`` plus 1-based line/column start and end."""

    _value_semantics = True
    source_name: SourceName
    line: int
    column: int
    end_line: int
    end_column: int

    def __init__(self, source_name, line=0, column=0, end_line=None, end_column=None):
        if isinstance(source_name, str):
            source_name = SourceName(source_name)
        super().__init__(source_name, int(line), int(column),
                         int(line if end_line is None else end_line),
                         int(column if end_column is None else end_column))

    def __str__(self):
        return f"{self.source_name}:{self.line}:{self.column}"
