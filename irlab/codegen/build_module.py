"""``CodeGenBase``: the base of a code generator written by a user (seed 000's
``tvm.codegen.build_module.CodeGenBase``), given to ``tvm.build(mod, target, codegen=...)``
or registered for a target kind as ``target.build.<kind>``.

A code generator is a TIR functor (``irlab.tir.functor``): ``visit_<kind>`` methods looked up
through a per-class table, one per node kind it handles (``visit_add``, ``visit_buffer_load``,
``visit_for``...). By convention an expression's method returns the expression's text and a
statement's method emits lines through the indenting emitter (``emit``, ``indented``);
``name_of`` gives each variable one unique identifier. The base handles the statements that
only scope a body (``SeqStmt``, ``DeclBuffer``, ``AttrStmt``); any other node kind without a
method is refused, naming the generator and the kind.

``tvm.build`` lowers every PrimFunc (the whole ``irlab.lower`` pipeline, then
``LowerIntrin``: flat loops over 1-D buffers), calls ``generate_code(func, target)`` for each
and hands the results to ``create_module``; the default keeps the text as a
``SourceModule`` (``get_source()``), and a generator that can run its output overrides
``create_module`` (``irlab.codegen.numpy_codegen`` does, as a complete example).
"""

from __future__ import annotations

import contextlib
import keyword
import re

from irlab.errors import CodegenError, TIRError
from irlab.ir.module import IRModule
from irlab.runtime.source_module import source_module_from
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.function import PrimFunc
from irlab.tir.functor import ExprFunctor, StmtFunctor


class CodeGenBase(ExprFunctor, StmtFunctor):
    """Subclass it and define ``visit_prim_func`` plus a ``visit_<kind>`` per TIR node kind
    (or override ``generate_code`` entirely, as the seed does)."""

    source_format = ""   # what get_source(fmt) calls the text: "c", "py"...
    indent_text = "    "
    reserved_names: frozenset = frozenset()  # identifiers name_of never hands out

    def __init__(self):
        ExprFunctor.__init__(self)
        self.reset()

    def reset(self):
        """Forget the text, the names and the memo: a fresh function."""
        self.lines: list[str] = []
        self.memo_map = {}
        self._level = 0
        self._names: dict = {}
        self._taken: set = set(self.reserved_names)
        self.func: PrimFunc | None = None
        self.target = None

    # -- the indenting emitter ------------------------------------------------------------------
    def emit(self, text: str = ""):
        """Append ``text`` (one line or several) at the current indentation."""
        for line in str(text).split("\n"):
            self.lines.append(self.indent_text * self._level + line if line else "")

    @contextlib.contextmanager
    def indented(self, header: str | None = None, footer: str | None = None,
                 empty: str | None = None):
        """Emit ``header``, then what the block emits one level deeper (``empty`` when it
        emitted nothing, e.g. Python's ``pass``), then ``footer``."""
        if header is not None:
            self.emit(header)
        self._level += 1
        start = len(self.lines)
        try:
            yield
            if empty is not None and len(self.lines) == start:
                self.emit(empty)
        finally:
            self._level -= 1
        if footer is not None:
            self.emit(footer)

    def source(self) -> str:
        return "\n".join(self.lines) + "\n" if self.lines else ""

    # -- names ------------------------------------------------------------------------------------
    def name_of(self, node, hint: str | None = None) -> str:
        """A unique identifier for ``node`` (a Var or a Buffer), the same at every use."""
        name = self._names.get(node)
        if name is not None:
            return name
        base = re.sub(r"\W", "_", hint or getattr(node, "name_hint", None)
                      or getattr(node, "name", None) or "v")
        if not base or base[0].isdigit():
            base = "v_" + base
        name, count = base, 0
        while name in self._taken or keyword.iskeyword(name):
            count += 1
            name = f"{base}_{count}"
        self._taken.add(name)
        self._names[node] = name
        return name

    # -- visiting -----------------------------------------------------------------------------
    def visit(self, node):
        """Dispatch a PrimFunc, a statement or an expression to its ``visit_<kind>``."""
        if isinstance(node, PrimFunc):
            return self.visit_prim_func(node)
        if isinstance(node, S.Stmt):
            return self.visit_stmt(node)
        if isinstance(node, E.PrimExpr):
            return self.visit_expr(node)
        raise CodegenError(f"{type(self).__name__} cannot generate code for "
                           f"{type(node).__name__}")

    def visit_prim_func(self, func: PrimFunc):
        raise CodegenError(f"{type(self).__name__} defines no visit_prim_func")

    # statements that only scope their body, the same in every language (override to differ)
    def visit_seq_stmt(self, s):
        for stmt in s.seq:
            self.visit_stmt(stmt)

    def visit_decl_buffer(self, s):
        self.visit_stmt(s.body)  # a view of storage named where its data var was bound

    def visit_attr_stmt(self, s):
        self.visit_stmt(s.body)

    @classmethod
    def _method_for(cls, node_cls):
        try:
            return super()._method_for(node_cls)
        except TIRError as err:  # the functor's refusal, said as a code generator's gap
            raise CodegenError(f"{cls.__name__} has no visit method for "
                               f"{node_cls.__name__} nodes") from err

    @staticmethod
    def symbol_of(func: PrimFunc, default: str = "main") -> str:
        """The name the function is called by (its ``global_symbol``)."""
        attrs = func.attrs
        return str(attrs["global_symbol"]) if attrs and "global_symbol" in attrs else default

    # -- what tvm.build calls -------------------------------------------------------------------
    def generate_code(self, stmt, target):
        """The code of one lowered PrimFunc (``stmt``): by default ``visit`` it and return the
        emitted text. May also return a ``runtime.Module``."""
        self.reset()
        self.func = stmt if isinstance(stmt, PrimFunc) else None
        self.target = target
        self.visit(stmt)
        return self.source()

    def create_module(self, results, target):
        """The ``runtime.Module`` of ``[(symbol, generate_code output)]``: here the text as a
        ``SourceModule``; override to make the functions callable."""
        return source_module_from(results, target, type(self).__name__, self.source_format)

    def build(self, mod: IRModule, target):
        """Code for every PrimFunc of an already lowered ``mod``: the signature of
        ``target.build.<kind>``, so ``register_func("target.build.mine", MyGen().build)``."""
        results = [(self.symbol_of(func, gvar.name_hint), self.generate_code(func, target))
                   for gvar, func in mod.functions.items() if isinstance(func, PrimFunc)]
        return self.create_module(results, target)


__all__ = ["CodeGenBase"]
