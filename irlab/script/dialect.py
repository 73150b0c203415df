"""Hooks by which a higher IR (Relax) joins TVMScript's ``@I.ir_module`` and module printer.

TVMScript's core knows TIR only; it sits below Relax in irlab's layers. A dialect plugs in
through two hooks defined here, so ``@I.ir_module`` classes can mix ``@T.prim_func`` with
``@R.function`` without the script layer importing Relax:

* **parsing**: a dialect's decorator returns a ``DeferredFunction`` when it decorates a method
  of a class body (the class's other functions are not known yet), and implements
  ``defer_source(node, source)`` to do the same for text read by ``from_source``. The module
  parser first gives every function a ``GlobalVar``, lets each deferred function ``declare``
  its signature, then ``define`` its body with a ``ModuleContext`` (``cls.f`` references);
* **printing**: ``register_function_printer(key, accepts, print_lines)`` adds a printer that
  ``print_module`` uses for the functions it ``accepts``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from irlab.errors import ParseError
from irlab.ir.expr import GlobalVar


@dataclass
class SourceInfo:
    """Where parsed source comes from, to point errors at the right line of the right file."""

    text: str
    filename: str = "<script>"
    line_offset: int = 0
    env: dict = field(default_factory=dict)

    def fail(self, node, message):
        """Raise a ParseError naming the file, line and column of ``node`` with its text."""
        line = getattr(node, "lineno", None)
        if line is None:
            raise ParseError(message)
        col = getattr(node, "col_offset", 0)
        lines = self.text.splitlines()
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        raise ParseError(f"{self.filename}:{line + self.line_offset}:{col + 1}: {message}\n"
                         f"    {text}\n    {' ' * col}^", line + self.line_offset, col + 1)


class ModuleNamespace:
    """``cls`` inside an ``@I.ir_module`` class: ``cls.f`` is the GlobalVar of function f."""

    def __init__(self, class_name: str, global_vars: dict):
        self._class_name = class_name
        self._global_vars = global_vars

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        gv = self._global_vars.get(name)
        if gv is None:
            known = ", ".join(sorted(self._global_vars)) or "none"
            raise AttributeError(f"module {self._class_name} has no function {name!r} "
                                 f"(functions: {known})")
        return gv

    def __repr__(self):
        return f"ModuleNamespace({self._class_name}: {', '.join(self._global_vars)})"


@dataclass
class ModuleContext:
    """What a function of an ``@I.ir_module`` class sees while it is parsed."""

    class_name: str
    global_vars: dict  # name -> GlobalVar, one per function of the class
    signatures: dict = field(default_factory=dict)  # GlobalVar -> a dialect's signature
    functions: dict = field(default_factory=dict)  # GlobalVar -> function already parsed
    scratch: dict = field(default_factory=dict)  # what a dialect computes once per module

    @property
    def namespace(self) -> ModuleNamespace:
        return ModuleNamespace(self.class_name, self.global_vars)

    def names(self) -> dict:
        """Names a function body may use: the class name (``cls = Module``) and each
        function's name (TVM's parser defines both)."""
        return {self.class_name: self.namespace, **self.global_vars}


class DeferredFunction:
    """A function of a dialect whose body waits for its module (set by the dialect)."""

    name: str

    def declare(self, ctx: ModuleContext) -> None:
        """Record this function's signature in ``ctx.signatures`` (before any body)."""

    def define(self, ctx: ModuleContext):
        """The parsed function, its body able to call the module's other functions."""
        raise NotImplementedError


def is_dialect_decorator(value) -> bool:
    """Whether ``value`` is a dialect's function decorator (``R.function``...)."""
    return callable(getattr(value, "defer_source", None))


def in_class_body(frame) -> bool:
    """Whether ``frame`` executes a class body (a decorator applied to a method sees it)."""
    return frame is not None and "__qualname__" in frame.f_locals and \
        "__module__" in frame.f_locals and frame.f_code.co_name != "<module>"


def build_module(class_name: str, items: list, mod):
    """Fill ``mod`` from ``items`` [(name, PrimFunc | DeferredFunction)] in class order."""
    gvars = {name: GlobalVar(name) for name, _ in items}
    ctx = ModuleContext(class_name, gvars)
    ctx.functions = {gvars[name]: item for name, item in items
                     if not isinstance(item, DeferredFunction)}
    for _, item in items:
        if isinstance(item, DeferredFunction):
            item.declare(ctx)
    for name, item in items:
        func = item.define(ctx) if isinstance(item, DeferredFunction) else item
        mod[gvars[name]] = func
    return mod


# -- printing -------------------------------------------------------------------------------
METADATA_NOTE = "# Metadata omitted. Use show_meta=True in script() method to show it."


@dataclass
class PrintOptions:
    """Options of one ``script()`` call, shared by the functions of a module: ``show_meta``
    prints every constant in full; otherwise big ones are ``metadata[kind][k]`` references."""

    show_meta: bool = False
    metadata: dict = field(default_factory=dict)  # kind -> objects not shown in the text

    def reference(self, kind: str, obj) -> str:
        """The text standing for ``obj`` in the metadata section (TVM's spelling)."""
        items = self.metadata.setdefault(kind, [])
        items.append(obj)
        return f'metadata["{kind}"][{len(items) - 1}]'


@dataclass(frozen=True)
class FunctionPrinter:
    accepts: object  # function -> bool
    # (function, name, class_name | None, PrintOptions) -> (lines, the
    # ``# from tvm.script import ...`` header lines they need)
    print_lines: object
    key: str  # the dialect's name; registering it again replaces its printer


_PRINTERS: list = []


def register_function_printer(key: str, accepts, print_lines) -> None:
    """Let ``print_module`` print the functions ``accepts`` returns True for."""
    _PRINTERS[:] = [p for p in _PRINTERS if p.key != key]
    _PRINTERS.append(FunctionPrinter(accepts, print_lines, key))


def function_printer(func) -> FunctionPrinter | None:
    """The registered printer of ``func`` (None: no dialect prints it)."""
    return next((p for p in _PRINTERS if p.accepts(func)), None)


def parse_class_body(node: ast.ClassDef, source: SourceInfo, parse_prim_func):
    """(name, PrimFunc | DeferredFunction) for each function of a class in printed text."""
    items = []
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            items.append((item.name, _parse_method(item, source, parse_prim_func)))
        elif isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(
                item.targets[0], ast.Name):  # ``f = R.ExternFunc("f")``
            items.append((item.targets[0].id, _module_value(item, source)))
        elif not (isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant)):
            source.fail(item, "an @I.ir_module class may only hold @T.prim_func and "
                              "@R.function functions")
    return items


def decorator_of(node: ast.FunctionDef, source: SourceInfo):
    """The evaluated decorator of a function in text (None when it has none we know)."""
    for dec in node.decorator_list:
        try:
            value = eval(compile(ast.Expression(dec), source.filename, "eval"),  # noqa: S307
                         dict(source.env))
        except Exception:  # an unknown decorator: the caller reports it
            continue
        if is_dialect_decorator(value):
            return value
    return None


def is_module_function(value) -> bool:
    """Whether a class attribute is a function of the module (a PrimFunc, a dialect's
    deferred function, or a function object a dialect marks ``_is_module_function``)."""
    return type(value).__name__ == "PrimFunc" or isinstance(value, DeferredFunction) or \
        getattr(value, "_is_module_function", False)


def _module_value(item, source):
    try:
        value = eval(compile(ast.Expression(item.value), source.filename, "eval"),  # noqa: S307
                     dict(source.env))
    except Exception as err:
        source.fail(item.value, f"{type(err).__name__}: {err}")
    if not is_module_function(value):
        source.fail(item, "an @I.ir_module class may only hold functions "
                          "(f = R.ExternFunc(\"f\") declares an external one)")
    return value


def _parse_method(item, source, parse_prim_func):
    decorator = decorator_of(item, source)
    if decorator is not None:
        return decorator.defer_source(item, source)
    return parse_prim_func(item)
