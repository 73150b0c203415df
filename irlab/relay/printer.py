"""Relay text printer (placeholder until the printer lands)."""


def pretty_print(node):
    return f"<{type(node).__name__}>"


def astext(node, show_meta_data=True):
    return pretty_print(node)
