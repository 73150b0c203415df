"""``MethodTable``: how every IR walker dispatches (Relay's, Relax's and TIR's functors, the
interpreters, printers and codegens): node class -> the walker class's method, looked up by
name once per node class and cached on the walker class."""

from __future__ import annotations


class MethodTable(dict):
    """Node class -> the functor class's method for it (None when it has none), each entry
    looked up by name once, on the first node of that class."""

    __slots__ = ("functor_cls", "name_of")

    def __init__(self, functor_cls, name_of):
        super().__init__()
        self.functor_cls = functor_cls
        self.name_of = name_of  # node class -> method name (None: not visitable)

    def __missing__(self, node_cls):
        name = self.name_of(node_cls)
        method = getattr(self.functor_cls, name, None) if name is not None else None
        self[node_cls] = method
        return method

    def __repr__(self):
        known = sorted(k.__name__ for k, v in self.items() if v is not None)
        return f"MethodTable({self.functor_cls.__name__}: {', '.join(known)})"


def class_method_table(functor_cls, name_of, attribute: str) -> MethodTable:
    """The table of ``functor_cls`` kept in its own ``attribute`` (built on first use; a
    subclass of the walker gets its own, so its overrides are found)."""
    table = functor_cls.__dict__.get(attribute)
    if table is None:
        table = MethodTable(functor_cls, name_of)
        setattr(functor_cls, attribute, table)
    return table


def mro_method_name(methods: dict):
    """A ``name_of`` for ``MethodTable``: the method of the nearest class in the node class's
    MRO that ``methods`` (node class -> method name) lists, so a node subclass is visited as
    its base."""
    def name_of(node_cls):
        return next((methods[k] for k in node_cls.__mro__ if k in methods), None)

    return name_of
