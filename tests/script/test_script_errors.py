"""TVMScript mistakes are ParseErrors with the line and a caret, not IndexError or an
AttributeError from the code generator (issue 20, finding 7)."""

import pytest

from irlab.errors import ParseError
from irlab.script.parser import from_source

HEADER = '@T.prim_func\ndef f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):\n'


@pytest.mark.parametrize("line, message", [
    ("T.func_attr()", "T.func_attr takes one dict"),
    ("T.func_attr(1)", "T.func_attr takes one dict"),
    ('T.func_attr(attrs={"global_symbol": "f"})', "T.func_attr takes one dict"),
])
def test_func_attr_without_a_dict(line, message):
    with pytest.raises(ParseError, match=message) as info:
        from_source(HEADER + f"    {line}\n    B[0] = A[0]\n")
    assert "<script>:3:5:" in str(info.value)


@pytest.mark.parametrize("statement, column, shown", [
    ("A[T.float32(1.5)] = T.float32(1)", 7, r"T.float32\(1.5\) \(float32\)"),
    ("B[0] = A[T.float32(1.5)]", 14, r"T.float32\(1.5\) \(float32\)"),
    ("B[0] = A[1.5]", 14, r"1.5 \(a Python float\)"),
    ("B[T.bool(True)] = A[0]", 7, r"T.bool\(True\) \(bool\)"),
])
def test_buffer_index_must_be_an_integer(statement, column, shown):
    with pytest.raises(ParseError, match=f"a buffer index must be an integer, got {shown}") \
            as info:
        from_source(HEADER + f"    {statement}\n")
    assert f"<script>:3:{column}:" in str(info.value)
    assert "^" in str(info.value)


def test_integer_indices_of_any_width_are_fine():
    func = from_source(HEADER + "    for i in range(4):\n        B[T.int64(3) - i] = "
                                "A[T.uint8(1) + T.Cast('uint8', i)]\n")
    assert func is not None


def test_function_level_match_buffer_without_arguments():
    with pytest.raises(ParseError, match="T.match_buffer at function level takes a handle") \
            as info:
        from_source('@T.prim_func\ndef f(a: T.handle):\n    A = T.match_buffer()\n'
                    '    A[0] = T.float32(1)\n')
    assert "<script>:3:9:" in str(info.value)
