"""Algebraic data types: a ``TypeData`` definition and its ``Constructor``s (TVM's ``ir.adt``).

``type List[A] { Cons(A, List[A]), Nil }`` is a ``TypeData`` whose header is the
``GlobalTypeVar`` ``List``, whose type parameters are ``[A]`` and whose constructors are
``Cons`` and ``Nil``. A module holds type definitions next to its functions
(``mod[List] = TypeData(...)``).
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.expr import RelayExpr
from irlab.ir.node import Node
from irlab.ir.type import GlobalTypeVar, Type, TypeVar
from irlab.runtime.registry import get_global_func


class Constructor(RelayExpr):
    """A constructor of an ADT: calling it with ``inputs`` builds a value of ``belong_to``.

    ``tag`` is its position in the definition (set when the ``TypeData`` is built). A
    constructor is an expression: ``Cons(x, Nil())`` is a call of ``Cons``."""

    _non_structural = ("tag",)
    name_hint: str
    inputs: tuple
    belong_to: GlobalTypeVar
    tag: int

    def __init__(self, name_hint, inputs, belong_to, span=None):
        for i, ty in enumerate(inputs):
            if not isinstance(ty, Type):
                raise IrlabError(f"input {i} of constructor {name_hint!r} must be a Type, "
                                 f"got {type(ty).__name__}")
        if not isinstance(belong_to, GlobalTypeVar):
            raise IrlabError(f"constructor {name_hint!r} must belong to a GlobalTypeVar, "
                             f"got {type(belong_to).__name__}")
        super().__init__(span, str(name_hint), tuple(inputs), belong_to, -1)

    def __call__(self, *args):
        return get_global_func("relay.ir.Call")(self, args)

    def astext(self, show_meta_data=True, annotate=None) -> str:
        return self.name_hint

    def __repr__(self):
        return f"Constructor({self.name_hint})"


class TypeData(Node):
    """The definition of an ADT: ``header[type_vars] { constructors }``.

    ``extern type T[A]`` (an opaque type) is a ``TypeData`` without constructors."""

    _bind_fields = ("type_vars",)
    header: GlobalTypeVar
    type_vars: tuple
    constructors: tuple

    def __init__(self, header, type_vars, constructors):
        if not isinstance(header, GlobalTypeVar):
            raise IrlabError(f"TypeData's header must be a GlobalTypeVar, got "
                             f"{type(header).__name__}")
        for tv in type_vars:
            if not isinstance(tv, TypeVar):
                raise IrlabError(f"type parameters of {header.name_hint} must be TypeVars, "
                                 f"got {type(tv).__name__}")
        constructors = tuple(constructors)
        for tag, ctor in enumerate(constructors):
            if not isinstance(ctor, Constructor):
                raise IrlabError(f"constructors of {header.name_hint} must be Constructors, "
                                 f"got {type(ctor).__name__}")
            object.__setattr__(ctor, "tag", tag)
        super().__init__(header, tuple(type_vars), constructors)

    def __repr__(self):
        params = f"[{', '.join(tv.name_hint for tv in self.type_vars)}]" \
            if self.type_vars else ""
        names = ", ".join(c.name_hint for c in self.constructors)
        return f"TypeData({self.header.name_hint}{params} {{{names}}})"
