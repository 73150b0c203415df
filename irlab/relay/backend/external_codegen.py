"""Calling external codegens (BYOC): every function with attr ``Compiler="<name>"`` that
``@main`` calls goes to the global function ``relay.ext.<name>``, which returns a runtime
``Module`` implementing the function's ``global_symbol``; ``relay.build`` imports it into the
library, and the graph executor calls the symbol like any kernel (TVM's
``LowerExternalFunctions``)."""

from __future__ import annotations

from irlab.errors import CompileError, IrlabError
# the built-in codegens (relay.ext.ccompiler) register themselves on import
from irlab.relay.backend import contrib  # noqa: F401
from irlab.runtime.module import Module
from irlab.runtime.registry import get_global_func


def compiler_of(func):
    """The external compiler a function is for, or None for a native function."""
    attrs = func.attrs
    if attrs is None or "Compiler" not in attrs:
        return None
    return str(attrs["Compiler"])


class ExternalCodegen:
    """Collects the modules external codegens make for the functions of one build."""

    def __init__(self):
        self.modules: list[Module] = []
        self._symbols: dict = {}  # function (by identity) -> its symbol

    def lower(self, func) -> str:
        """The symbol implementing ``func`` (``Compiler`` set), its module made on first use."""
        symbol = self._symbols.get(func)
        if symbol is None:
            symbol = self._symbols[func] = self._codegen(func)
        return symbol

    def _codegen(self, func) -> str:
        compiler = compiler_of(func)
        symbol = str((func.attrs or {}).get("global_symbol", ""))
        symbol = symbol or f"{compiler}_{len(self.modules)}"
        if "global_symbol" not in (func.attrs or {}):
            func = func.with_attr("global_symbol", symbol)
        codegen = get_global_func(f"relay.ext.{compiler}", allow_missing=True)
        if codegen is None:
            raise IrlabError(
                f"function {symbol} is for the external compiler {compiler!r} "
                f"(Compiler=\"{compiler}\"), but no codegen is registered as "
                f"relay.ext.{compiler}: register one with tvm.register_func"
                f"(\"relay.ext.{compiler}\", codegen)")
        try:
            module = codegen(func)
        except Exception as err:  # noqa: BLE001 -- any failure of user code is reported
            raise IrlabError(f"the external codegen relay.ext.{compiler} failed on function "
                             f"{symbol}: {type(err).__name__}: {err}\n"
                             f"the function:\n{func.astext()}") from err
        self._check(module, compiler, symbol)
        self.modules.append(module)
        return symbol

    @staticmethod
    def _check(module, compiler, symbol):
        if not isinstance(module, Module):
            raise IrlabError(f"relay.ext.{compiler} returned a {type(module).__name__} for "
                             f"function {symbol}; it must return a runtime Module")
        if not module.implements_function(symbol, query_imports=True):
            raise IrlabError(f"relay.ext.{compiler} returned a module without function "
                             f"{symbol}; it has: {', '.join(module.get_func_names())}")
        compile_ = getattr(module, "compile", None)
        if compile_ is None:
            return
        try:
            compile_()
        except CompileError as err:
            raise CompileError(f"the C source relay.ext.{compiler} generated for {symbol} "
                               f"does not compile: {err}") from None


__all__ = ["ExternalCodegen", "compiler_of"]
