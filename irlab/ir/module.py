"""``IRModule``: the unit of compilation, a map from ``GlobalVar`` to functions.

As in TVM's Python API the module is updated in place by ``mod[gv] = f`` and ``update``;
passes never mutate their input module: they return a new one (``copy()`` is shallow, cheap).
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.adt import TypeData
from irlab.ir.attrs import DictAttrs
from irlab.ir.expr import GlobalVar
from irlab.ir.type import GlobalTypeVar
from irlab.runtime.registry import get_global_func


class TypeDefinitions(dict):
    """A module's ADT definitions, ``GlobalTypeVar -> TypeData``; ``items()`` is a list,
    as TVM's ``Map.items()`` (``mod.type_definitions.items()[0]``)."""

    def items(self):
        return list(super().items())


class IRModule:
    """Functions by global name (Relay ``Function``s and, later, TIR ``PrimFunc``s)."""

    def __init__(self, functions=None, type_definitions=None, attrs=None):
        self._functions: dict[GlobalVar, object] = {}
        self._global_vars: dict[str, GlobalVar] = {}
        self.type_definitions = TypeDefinitions()
        self.import_set: set = set()  # standard-library files imported (import_from_std)
        for key, data in (type_definitions or {}).items():
            self._add_type(key, data)
        self.attrs = attrs if isinstance(attrs, DictAttrs) or attrs is None else DictAttrs(attrs)
        for key, func in (functions or {}).items():
            self[key] = func

    # -- construction -----------------------------------------------------------------------
    @staticmethod
    def from_expr(expr, functions=None, type_defs=None) -> "IRModule":
        """A module whose ``main`` is ``expr`` (a bare expression is wrapped in a function of
        its free variables)."""
        mod = IRModule(functions, type_defs)
        as_function = get_global_func("relay.ir.as_function", allow_missing=True)
        mod["main"] = as_function(expr) if as_function is not None else expr
        return mod

    def copy(self) -> "IRModule":
        new = IRModule(attrs=self.attrs)
        new.type_definitions = TypeDefinitions(self.type_definitions)
        new.import_set = set(self.import_set)
        new._functions = dict(self._functions)
        new._global_vars = dict(self._global_vars)
        return new

    # -- access -----------------------------------------------------------------------------
    def _resolve(self, key, create=False) -> GlobalVar:
        if isinstance(key, GlobalVar):
            known = self._global_vars.get(key.name_hint)
            if known is not None and known is not key:
                raise IrlabError(
                    f"a different GlobalVar named @{key.name_hint} is already in this module")
            return key
        if isinstance(key, str):
            gv = self._global_vars.get(key)
            if gv is None:
                if not create:
                    raise IrlabError(self._missing(key))
                gv = GlobalVar(key)
            return gv
        raise IrlabError(f"module keys are names or GlobalVars, got {type(key).__name__}")

    def _missing(self, name):
        names = ", ".join(sorted(self._global_vars)) or "none"
        return f"cannot find global function @{name} in the module (functions: {names})"

    def __getitem__(self, key):
        if isinstance(key, GlobalTypeVar):
            return self.get_type_data(key)
        gv = self._resolve(key)
        if gv not in self._functions:
            raise IrlabError(self._missing(gv.name_hint))
        return self._functions[gv]

    def __setitem__(self, key, func):
        if isinstance(key, GlobalTypeVar):
            self._add_type(key, func)
            return
        self._add(key, func, update=True)

    # -- algebraic data types -----------------------------------------------------------------
    def _add_type(self, key, data):
        if not isinstance(data, TypeData):
            raise IrlabError(f"a type definition must be a TypeData, got {type(data).__name__}")
        if isinstance(key, str):
            key = data.header
        if key.name_hint != data.header.name_hint:
            raise IrlabError(f"type definition {data.header.name_hint} stored under the name "
                             f"{key.name_hint}")
        known = self._type_var(key.name_hint)
        if known is not None:
            del self.type_definitions[known]
        self.type_definitions[key] = data

    def _type_var(self, name):
        return next((t for t in self.type_definitions if t.name_hint == name), None)

    def add_type_data(self, key, data):
        self._add_type(key, data)

    def get_global_type_var(self, name: str) -> GlobalTypeVar:
        """The ``GlobalTypeVar`` of the ADT called ``name``."""
        gtv = self._type_var(name)
        if gtv is None:
            known = ", ".join(sorted(t.name_hint for t in self.type_definitions)) or "none"
            raise IrlabError(f"no type definition named {name!r} in the module (types: "
                             f"{known})")
        return gtv

    def get_global_type_vars(self) -> list:
        return sorted(self.type_definitions, key=lambda t: t.name_hint)

    def get_type_data(self, key):
        """The ``TypeData`` of an ADT, by ``GlobalTypeVar`` or name."""
        name = key.name_hint if isinstance(key, GlobalTypeVar) else key
        return self.type_definitions[self.get_global_type_var(name)]

    def get_constructor(self, tag_or_name):
        """A constructor of one of the module's ADTs, by name (or by tag)."""
        for data in self.type_definitions.values():
            for ctor in data.constructors:
                if tag_or_name in (ctor.name_hint, ctor.tag):
                    return ctor
        raise IrlabError(f"no constructor {tag_or_name!r} in the module's type definitions")

    def _add(self, key, func, update):
        from irlab.ir.expr import RelayExpr

        is_prim_func = type(func).__name__ == "PrimFunc"
        if not is_prim_func and not isinstance(func, RelayExpr):
            raise IrlabError(f"module entries must be functions, got {type(func).__name__}")
        # Relax functions (``_is_module_function``) go in as they are; a bare Relay
        # expression becomes a function of its free variables.
        if not is_prim_func and not getattr(func, "_is_module_function", False):
            func = get_global_func("relay.ir.as_function")(func)
        gv = self._resolve(key, create=True)
        if not update and gv in self._functions:
            raise IrlabError(f"@{gv.name_hint} is already defined in the module")
        self._global_vars[gv.name_hint] = gv
        self._functions[gv] = func

    def add(self, var, func, update=False):
        self._add(var, func, update)
        return self

    def update_func(self, var, func):
        self._add(var, func, update=True)

    def update(self, other):
        """Add (or replace) every function of ``other``."""
        items = other.functions.items() if isinstance(other, IRModule) else other.items()
        for gv, func in items:
            name = gv.name_hint if isinstance(gv, GlobalVar) else gv
            self._add(self._global_vars.get(name, gv), func, update=True)

    def remove(self, var):
        gv = self._resolve(var)
        self._functions.pop(gv, None)
        self._global_vars.pop(gv.name_hint, None)

    def __delitem__(self, key):
        self.remove(key)

    def __contains__(self, key):
        if isinstance(key, GlobalTypeVar):
            return self._type_var(key.name_hint) is not None
        name = key.name_hint if isinstance(key, GlobalVar) else key
        return name in self._global_vars

    def __len__(self):
        return len(self._functions)

    @property
    def functions(self) -> dict:
        return dict(self._functions)

    def items(self):
        return list(self._functions.items())

    def get_global_var(self, name: str) -> GlobalVar:
        gv = self._global_vars.get(name)
        if gv is None:
            raise IrlabError(self._missing(name))
        return gv

    def get_global_vars(self) -> list:
        return [self._global_vars[n] for n in sorted(self._global_vars)]

    def import_from_std(self, file_to_import: str) -> None:
        """Add the types and functions of a Relay standard-library file (irlab's own
        ``core.rly``, ``prelude.rly``, ``gradient.rly``), once per module."""
        if file_to_import in self.import_set:
            return
        get_global_func("relay.std.import")(self, file_to_import)
        self.import_set.add(file_to_import)

    def with_attr(self, key, value) -> "IRModule":
        new = self.copy()
        new.attrs = (self.attrs or DictAttrs()).with_attr(key, value)
        return new

    def get_attr(self, key, default=None):
        return default if self.attrs is None else self.attrs.get(key, default)

    # -- printing ---------------------------------------------------------------------------
    def script(self, *args, **kwargs) -> str:
        """TVMScript text of the module (``irlab.script.printer``)."""
        return get_global_func("script.print_module")(self, **kwargs)

    def show(self, style=None, black_format=False, **kwargs) -> None:
        """Print the module's TVMScript (``IRModule.show`` as TVM; ``style`` and
        ``black_format`` are accepted: the text is already formatted)."""
        print(self.script(**kwargs))

    def astext(self, show_meta_data=True, annotate=None) -> str:
        return get_global_func("relay.ir.astext")(self, show_meta_data)

    def __str__(self):
        # As TVM: a module with no Relay function (PrimFuncs, Relax functions) prints as
        # TVMScript.
        if self._functions and not any(type(f).__module__.startswith("irlab.relay.")
                                       for f in self._functions.values()):
            return self.script()
        if any(getattr(f, "_is_module_function", False) for f in self._functions.values()):
            return get_global_func("relax.module_text")(self)
        return get_global_func("relay.ir.pretty_print")(self)

    def __repr__(self):
        return str(self)

    # Modules compare by identity; use irlab.ir.structural_equal for structure.
    __hash__ = object.__hash__
