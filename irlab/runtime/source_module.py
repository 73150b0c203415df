"""``SourceModule``: what a user code generator built -- its source text, and the functions it
made callable, if any (TVM's ``CSourceModule`` / ``SourceModule`` for a target kind irlab
does not compile itself)."""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.runtime.module import Module


class SourceModule(Module):
    """Generated source (``get_source()``) plus the callables a code generator attached:
    ``functions`` maps a function name to a Python callable taking the call's arguments
    (``NDArray``s and scalars), as a compiled function would."""

    type_key = "source"

    def __init__(self, source: str, fmt: str = "", functions=None, target=None,
                 generator: str = "code generator"):
        super().__init__((), target)
        self.source = source
        self.fmt = fmt
        self.generator = generator
        self._callables = dict(functions or {})
        self.entry_name = next(iter(self._callables), None)

    def get_function(self, name, query_imports=False):
        func = self._callables.get(name)
        if func is not None:
            return func
        for module in self.imported_modules if query_imports else ():
            if module.implements_function(name, True):
                return module.get_function(name, query_imports=True)
        if not self._callables:
            raise IrlabError(f"the module {self.generator} generated has source only "
                             f"(get_source()), no callable function {name!r}")
        raise IrlabError(f"module has no function {name!r}; it has: "
                         f"{', '.join(self._callables)}")

    def __call__(self, *args):
        if self.entry_name is None:
            raise IrlabError(f"the module {self.generator} generated has source only "
                             f"(get_source()), no function to call")
        return self._callables[self.entry_name](*args)

    def implements_function(self, name, query_imports=False):
        return name in self._callables or super().implements_function(name, query_imports)

    def get_func_names(self) -> list[str]:
        return list(self._callables)

    def get_source(self, fmt=""):
        return self.source

    @property
    def format(self):
        return self.fmt


__all__ = ["SourceModule", "source_module_from"]


def source_module_from(results, target=None, generator="code generator", fmt=""):
    """The module of a user code generator's per-function ``results`` (``(name, output)``,
    output text, a ``Module`` or None): the one module it returned for a single function,
    else a ``SourceModule`` of the texts joined, importing the modules returned."""
    modules = [out for _, out in results if isinstance(out, Module)]
    if len(results) == 1 and modules:
        return modules[0]
    text = "\n".join(out for _, out in results if isinstance(out, str))
    module = SourceModule(text, fmt, None, target, generator)
    for inner in modules:
        module.import_module(inner)
    return module
