"""The operator registry: ``Op.get(name)`` and everything known about an operator.

Each operator is registered once (``register_op``) with its inputs, attrs type, type relation,
fusion pattern and numpy reference implementation. Later stages attach more entries with
``op.set_attr(key, value)`` (``"FTVMCompute"``, ``"FTVMStrategy"``...), as TVM does.
"""

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

from irlab.errors import IrlabError, OpNotRegisteredError
from irlab.ir.attrs import get_attrs_type
from irlab.ir.expr import RelayExpr
from irlab.runtime.registry import get_global_func


class OpPattern(enum.IntEnum):
    """Fusion pattern of an operator (TVM's ``OpPatternKind`` / ``TOpPattern``)."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


TOpPattern = OpPattern


class _NotApplicable:
    """The value of an op attribute that the op declares it does not need (``add`` has no
    attrs to convert, ``annotation.stop_fusion`` no compute). ``get_attr`` reads it as unset,
    ``has_attr`` as declared, so a check over every op can tell "not applicable" from
    "forgotten"."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "NOT_APPLICABLE"

    def __reduce__(self):
        return (_NotApplicable, ())


NOT_APPLICABLE = _NotApplicable()


@dataclass
class OpArgument:
    """One declared input of an operator."""

    name: str
    type_info: str = "Tensor"
    description: str = ""


@dataclass
class _OpEntry:
    """The mutable registry record behind an (immutable, interned) ``Op``."""

    num_inputs: int = -1
    arguments: list = field(default_factory=list)
    support_level: int = 10
    attrs_type: type | None = None
    description: str = ""
    type_rel: Callable | None = None
    attrs: dict = field(default_factory=dict)  # key -> (value, plevel)
    defined_in: str = ""  # the module that registered the op


_REGISTRY: dict[str, "Op"] = {}
_ENTRIES: dict[str, _OpEntry] = {}
# Type relations by name, for ``Op.add_type_rel(name)`` (the op families register theirs).
TYPE_RELATIONS: dict[str, Callable] = {}


class Op(RelayExpr):
    """A primitive operator, e.g. ``Op.get("nn.conv2d")``. One object per name."""

    name: str

    def __init__(self, name, span=None):
        super().__init__(span, name)

    # -- lookup ---------------------------------------------------------------------------
    @staticmethod
    def get(name: str) -> "Op":
        try:
            return _REGISTRY[name]
        except KeyError:
            import difflib

            close = difflib.get_close_matches(name, list(_REGISTRY), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise OpNotRegisteredError(f"operator {name!r} is not registered{hint}") from None

    @staticmethod
    def list_op_names() -> list[str]:
        return sorted(_REGISTRY)

    @property
    def _entry(self) -> _OpEntry:
        return _ENTRIES[self.name]

    # -- registered facts -----------------------------------------------------------------
    @property
    def num_inputs(self) -> int:
        return self._entry.num_inputs

    @property
    def arguments(self) -> list:
        return list(self._entry.arguments)

    @property
    def support_level(self) -> int:
        return self._entry.support_level

    @property
    def attrs_type(self):
        return self._entry.attrs_type

    @property
    def attrs_type_key(self) -> str:
        t = self._entry.attrs_type
        return t._type_key if t is not None else ""

    @property
    def description(self) -> str:
        return self._entry.description

    @property
    def defined_in(self) -> str:
        """The module that registered the op (``irlab.relay.op.nn.conv`` for nn.conv2d)."""
        return self._entry.defined_in

    @property
    def type_rel(self):
        return self._entry.type_rel

    def get_attr(self, key: str, default=None):
        """The attribute's value; ``default`` when unset or declared ``NOT_APPLICABLE``."""
        value = self._entry.attrs.get(key)
        if value is None or value[0] is NOT_APPLICABLE:
            return default
        return value[0]

    def has_attr(self, key: str) -> bool:
        """Whether the op declares ``key`` (a value, or ``NOT_APPLICABLE``)."""
        return key in self._entry.attrs

    def set_attrs(self, plevel: int = 10, **attrs) -> "Op":
        """Several attributes at once: ``op.set_attrs(FInferCorrectLayout=rule, ...)``."""
        for key, value in attrs.items():
            self.set_attr(key, value, plevel)
        return self

    def set_attr(self, key: str, value: Any, plevel: int = 10) -> "Op":
        """Attach ``value`` under ``key``; a lower plevel never overrides a higher one."""
        old = self._entry.attrs.get(key)
        if old is not None and old[1] > plevel:
            return self
        self._entry.attrs[key] = (value, plevel)
        return self

    def reset_attr(self, key: str) -> "Op":
        self._entry.attrs.pop(key, None)
        return self

    # -- TVM's registration chain: relay.op.op.register(name), then op.set_...(...) ----------
    def set_num_inputs(self, num_inputs: int) -> "Op":
        self._entry.num_inputs = int(num_inputs)
        return self

    def add_argument(self, name: str, type_info: str = "Tensor", description: str = "") -> "Op":
        self._entry.arguments.append(OpArgument(name, type_info, description))
        return self

    def set_support_level(self, level: int) -> "Op":
        self._entry.support_level = int(level)
        return self

    def set_attrs_type_key(self, key: str) -> "Op":
        """The attrs class calls of this op carry, by its type key (``"relay.attrs.XAttrs"``)."""
        self._entry.attrs_type = get_attrs_type(key)
        return self

    def add_type_rel(self, rel_name: str, type_rel_func=None) -> "Op":
        """The op's type relation: ``type_rel_func(arg_types, attrs) -> output Type`` (TVM's
        Python form, called once every argument type is known), or the relation registered
        as ``rel_name`` (``"Identity"``, ``"Broadcast"``...) when no function is given."""
        if type_rel_func is None:
            if rel_name not in TYPE_RELATIONS:
                raise IrlabError(f"operator {self.name}: no type relation named {rel_name!r}; "
                                 f"known: {', '.join(sorted(TYPE_RELATIONS))}")
            self._entry.type_rel = TYPE_RELATIONS[rel_name]
            return self

        op_name = self.name

        def relation(ctx):
            try:
                return type_rel_func([ctx.arg(i) for i in range(ctx.num_args)], ctx.attrs)
            except IrlabError:
                raise
            except Exception as err:  # a user's relation failed: a type error, as in TVM
                ctx.expect(False, f"the type relation {rel_name!r} of operator {op_name} "
                                  f"raised {type(err).__name__}: {err}")
                raise

        relation.__name__ = rel_name
        self._entry.type_rel = relation
        return self

    @property
    def pattern(self) -> OpPattern:
        return OpPattern(self.get_attr("TOpPattern", OpPattern.OPAQUE))

    @property
    def reference(self):
        """The numpy reference implementation ``f(inputs, attrs, out_type)``."""
        return self.get_attr("FReference")

    def __call__(self, *args, attrs=None):
        return get_global_func("relay.ir.Call")(self, list(args), attrs)

    def astext(self) -> str:
        return self.name

    def __reduce__(self):
        return (Op.get, (self.name,))


def register_op(name: str, *, num_inputs: int, arguments=(), attrs_type=None, type_rel=None,
                pattern=OpPattern.OPAQUE, reference=None, support_level: int = 10,
                description: str = "", defined_in: str | None = None) -> Op:
    """Register an operator. Registering the same name twice is an error. ``defined_in`` is
    the defining module (by default the caller's)."""
    if name in _REGISTRY:
        raise IrlabError(f"operator {name!r} is already registered")
    if defined_in is None:
        defined_in = sys._getframe(1).f_globals.get("__name__", "")
    args = [a if isinstance(a, OpArgument) else OpArgument(*((a,) if isinstance(a, str) else a))
            for a in arguments]
    _ENTRIES[name] = _OpEntry(num_inputs=num_inputs, arguments=args,
                              support_level=support_level, attrs_type=attrs_type,
                              description=description, type_rel=type_rel,
                              defined_in=defined_in)
    op = Op(name)
    _REGISTRY[name] = op
    op.set_attr("TOpPattern", OpPattern(pattern))
    if reference is not None:
        op.set_attr("FReference", reference)
    return op
