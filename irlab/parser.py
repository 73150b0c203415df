"""``irlab.parser``: read Relay text (``parse``, ``parse_expr``), as ``tvm.parser``."""

from irlab.relay.parser import parse, parse_expr, fromtext

__all__ = ["parse", "parse_expr", "fromtext"]
