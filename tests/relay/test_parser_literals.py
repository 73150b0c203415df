"""Relay text parser: numeric literals the type cannot hold are parse errors with line:col
(issue 20, finding 7: ``1.5i32`` raised a bare ValueError, ``1e39f32`` became inf)."""

import numpy as np
import pytest

from irlab.errors import ParseError
from irlab.relay import parser
from irlab.relay.parser import parse


@pytest.mark.parametrize("text, where, message", [
    ("fn () { 1.5i32 }", "1:9", "integer suffix on a number with a fraction"),
    ("fn () {\n  1e2i64\n}", "2:3", "integer suffix"),
    ("fn () { 1e39f32 }", "1:9", "1e39 is out of the range of float32"),
    ("fn () { -1e39f32 }", "1:9", "-1e39 is out of the range of float32"),
    ("fn () {\n  (1f, 1e39) }", "2:8", "out of the range of float32"),  # unsuffixed: float32
    ("fn () { 70000f16 }", "1:9", "out of the range of float16"),
    ("fn () { 1e400f64 }", "1:9", "out of the range of float64"),
])
def test_literal_out_of_its_type_is_a_located_parse_error(text, where, message):
    with pytest.raises(ParseError, match=message) as info:
        parse(text)
    assert f"from_string:{where}:" in str(info.value)
    assert "^" in str(info.value)  # the caret under the literal


@pytest.mark.parametrize("text, value", [
    ("fn () { 3.4028235e38f32 }", np.float32(3.4028235e38)),  # the largest float32
    ("fn () { 65504f16 }", np.float16(65504)),
    ("fn () { 1e-50f32 }", np.float32(0)),  # underflow rounds to zero, as in C
    ("fn () { inff32 }", np.float32(np.inf)),
])
def test_literals_in_range_parse(text, value):
    got = parse(text)["main"].body.data.numpy()
    assert got == value and got.dtype == value.dtype


def test_an_unexpected_python_error_still_gets_a_location(monkeypatch):
    """Any ValueError/TypeError a parsing step raises becomes a ParseError at the token."""
    def broken(self, *args, **kwargs):
        raise ValueError("a check the parser lacks")

    monkeypatch.setattr(parser._Parser, "parse_type", broken)
    with pytest.raises(ParseError, match=r"from_string:1:\d+: ValueError: a check the parser"):
        parse("fn (%x: Tensor[(2,), float32]) { %x }")


def test_floats_beyond_the_largest_finite_value_are_refused():
    """As TVM: a literal past the dtype's largest finite value is an error, even when rounding
    would bring it back to that value (65505f16 rounds to 65504)."""
    import pytest as _pytest

    from irlab.errors import DiagnosticError
    from irlab.relay.parser import parse_expr as _parse_expr

    for text in ("3.40283e+38f32", "65505f16", "1e39f32"):
        with _pytest.raises(DiagnosticError, match="out of the range"):
            _parse_expr(text)
    assert float(_parse_expr("65504f16").data.numpy()) == 65504.0
    assert float(_parse_expr("3.4028234e+38f32").data.numpy()) > 3.4e38
