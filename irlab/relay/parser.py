"""Relay text parser (placeholder until the parser lands)."""


def parse(text, source_name="from_string", init_module=None, init_meta_table=None):
    raise NotImplementedError("the Relay parser is not written yet")


def parse_expr(text):
    raise NotImplementedError("the Relay parser is not written yet")


fromtext = parse
