"""``BlockBuilder``: builds Relax functions binding by binding, normalizing as it goes.

    bb = relax.BlockBuilder()
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n, 784], "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit_te(topi.nn.relu, x)      # a PrimFunc "relu" + R.call_tir
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)
    mod = bb.get()

Normalization (``normalize``) puts an expression in A-normal form (a nested call becomes a
binding of the current block) and deduces its struct info (``irlab.relax.normalizer``).
"""

from __future__ import annotations

from irlab.errors import DiagnosticError, IrlabError
from irlab.ir.expr import GlobalVar
from irlab.ir.module import IRModule
from irlab.ir.structural import structural_equal, structural_hash
from irlab.relax.expr import (DataflowVar, Expr, Function, MatchCast, SeqExpr, Tuple, Var,
                              VarBinding)
from irlab.relax.normalizer import BlockFrame, BuilderScope, Normalizer
from irlab.relax.struct_info import StructInfo
from irlab.relax.te_bridge import te_call

__all__ = ["BlockBuilder"]


class _FunctionScope:
    """``with bb.function(name, params):`` -- ends with ``bb.emit_func_output``."""

    def __init__(self, builder, name, params, attrs, pure, private):
        self.builder = builder
        self.name = name
        self.params = params
        self.attrs = dict(attrs or {})
        self.pure = pure
        self.private = private
        self.done = False

    def __enter__(self):
        if self.builder._func is not None:
            raise IrlabError(f"bb.function({self.name!r}): already inside function "
                             f"{self.builder._func.name!r} (functions do not nest)")
        self.builder._func = self
        self.builder.scopes.append(BuilderScope())
        return self

    def __exit__(self, exc_type, exc, tb):
        builder = self.builder
        builder._func = None
        builder.scopes.pop()
        if exc_type is None and not self.done:
            raise IrlabError(f"function {self.name!r} ended without bb.emit_func_output(...)")
        return False


class _DataflowScope:
    def __init__(self, builder):
        self.builder = builder

    def __enter__(self):
        self.builder._begin_block(is_dataflow=True)
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.builder._end_block()
        return False


class BlockBuilder:
    """Builds Relax functions into an ``IRModule`` (TVM's ``relax.BlockBuilder``)."""

    _current: list = []

    def __init__(self, mod: IRModule | None = None):
        self.module = mod.copy() if mod is not None else IRModule()
        self.scopes: list[BuilderScope] = []
        self._func: _FunctionScope | None = None
        self._bindings: dict = {}  # Var -> bound value (lookup_binding)
        self._func_hashes: dict = {}  # structural hash -> [GlobalVar] (dedup of add_func)
        # the given module's PrimFuncs, hashed on the first add_func (many builders never add)
        self._unhashed = [gv for gv, f in self.module.items() if not isinstance(f, Function)]
        self._normalizer = Normalizer(self)

    @staticmethod
    def current() -> "BlockBuilder | None":
        return BlockBuilder._current[-1] if BlockBuilder._current else None

    def __enter__(self):
        BlockBuilder._current.append(self)
        return self

    def __exit__(self, *exc):
        BlockBuilder._current.pop()
        return False

    # -- scopes -----------------------------------------------------------------------------
    def function(self, name, params=None, attrs=None, pure=True, private=False):
        """Start a function; ``params`` may also be given to ``emit_func_output``."""
        if isinstance(params, Var):
            params = [params]
        return _FunctionScope(self, str(name), params, attrs, pure, private)

    def dataflow(self):
        """``with bb.dataflow():`` -- a DataflowBlock; values leave it via ``emit_output``."""
        return _DataflowScope(self)

    def _scope(self, what) -> BuilderScope:
        if not self.scopes:
            raise IrlabError(f"{what} must be called inside `with bb.function(...)`")
        return self.scopes[-1]

    def _begin_block(self, is_dataflow):
        scope = self._scope("bb.dataflow()" if is_dataflow else "bb.emit")
        if scope.frame is not None and scope.frame.is_dataflow:
            raise IrlabError("dataflow blocks do not nest")
        scope.end_frame()
        scope.frame = BlockFrame(is_dataflow)

    def begin_dataflow_block(self):
        """Open a DataflowBlock in the current scope (``with bb.dataflow()`` does this)."""
        self._begin_block(is_dataflow=True)

    def begin_binding_block(self):
        """Open a (non-dataflow) BindingBlock in the current scope."""
        self._begin_block(is_dataflow=False)

    def end_block(self):
        """Close the open block; returns it (None when no block was open)."""
        return self._scope("ending a block").end_frame()

    # TVM's private spellings, used by code written against tvm.relax
    _begin_dataflow_block = begin_dataflow_block
    _begin_binding_block = begin_binding_block
    _end_block = end_block

    def begin_scope(self):
        """Start a new function body / SeqExpr scope (mutators visiting a SeqExpr)."""
        self.scopes.append(BuilderScope())

    def end_scope(self) -> list:
        """Close the innermost scope; returns its non-empty blocks."""
        scope = self.scopes.pop()
        scope.end_frame()
        return scope.blocks

    def current_block_is_dataflow(self) -> bool:
        frame = self.scopes[-1].frame if self.scopes else None
        return frame is not None and frame.is_dataflow

    def _frame(self) -> BlockFrame:
        """The open block of the current scope (a BindingBlock is opened if none is)."""
        scope = self._scope("bb.emit")
        if scope.frame is None:
            scope.frame = BlockFrame(is_dataflow=False)
        return scope.frame

    def in_block(self) -> bool:
        """True inside a function or SeqExpr scope (where bindings can be emitted)."""
        return bool(self.scopes)

    # -- emitting ---------------------------------------------------------------------------
    def _normalize_atomically(self, normalize, expr):
        """``normalize(expr)``; if it fails, the bindings it emitted are taken back (a failed
        emit leaves the block as it was)."""
        frame = self._frame()
        mark = len(frame.bindings)
        try:
            return normalize(expr)
        except Exception as err:
            for binding in frame.bindings[mark:]:
                self._bindings.pop(binding.var, None)
            del frame.bindings[mark:]
            if type(err) is DiagnosticError and self._func is not None \
                    and not str(err).startswith("in function "):
                raise DiagnosticError(f"in function {self._func.name}: {err}",
                                      err.node) from err
            raise

    def emit(self, expr, name_hint="") -> Var:
        """Bind ``expr`` (normalized) to a fresh variable of the current block."""
        value = self._normalize_atomically(self.normalize, expr)
        frame = self._frame()
        var_cls = DataflowVar if frame.is_dataflow else Var
        var = var_cls(name_hint or ("lv" if frame.is_dataflow else "gv"), value.struct_info)
        self.append_binding(frame, VarBinding(var, value))
        return var

    def emit_normalized(self, binding):
        """Append an already normalized binding as is."""
        self.append_binding(self._frame(), binding)
        return binding.var

    def append_binding(self, frame, binding):
        """Add a normalized binding to ``frame`` and remember it for ``lookup_binding``."""
        frame.bindings.append(binding)
        self._bindings[binding.var] = binding.value

    def emit_output(self, output, name_hint="") -> Var:
        """Make ``output`` visible after the current dataflow block (a non-dataflow Var)."""
        frame = self._frame()
        if not frame.is_dataflow:
            raise IrlabError("bb.emit_output is only valid inside `with bb.dataflow()`")
        if isinstance(output, (list, tuple)):
            output = Tuple(output)
        value = self._normalize_atomically(self.normalize, output)
        var = Var(name_hint or "gv", value.struct_info)
        self.append_binding(frame, VarBinding(var, value))
        return var

    def match_cast(self, value, struct_info, name_hint="") -> Var:
        """Bind ``value`` cast to ``struct_info`` (checked at run time); new symbolic dims in
        ``struct_info`` are defined here."""
        sinfo = _sinfo(struct_info)
        value = self._normalize_atomically(self._normalizer.normalize_argument, value)
        frame = self._frame()
        var_cls = DataflowVar if frame.is_dataflow else Var
        var = var_cls(name_hint or ("lv" if frame.is_dataflow else "gv"), sinfo)
        self.append_binding(frame, MatchCast(var, value, sinfo))
        return var

    def emit_func_output(self, output, params=None) -> GlobalVar:
        """End the current function with result ``output``; adds it to the module."""
        func_scope = self._func
        if func_scope is None:
            raise IrlabError("bb.emit_func_output must be called inside `with bb.function()`")
        if func_scope.done:
            raise IrlabError(f"emit_func_output called twice for {func_scope.name!r}")
        scope = self.scopes[-1]
        if scope.frame is not None and scope.frame.is_dataflow:
            raise IrlabError("bb.emit_func_output must be called after the dataflow block "
                             "ends (return a value made visible with bb.emit_output)")
        if params is not None:
            if func_scope.params is not None:
                raise IrlabError(f"the parameters of {func_scope.name!r} were already given "
                                 f"to bb.function")
            func_scope.params = [params] if isinstance(params, Var) else list(params)
        if func_scope.params is None:
            raise IrlabError(f"function {func_scope.name!r} has no parameters: give them to "
                             f"bb.function or bb.emit_func_output")
        if isinstance(output, (list, tuple)):
            output = Tuple(output)
        body = self._normalizer.normalize_argument(output)
        scope.end_frame()
        seq = self.normalize(SeqExpr(scope.blocks, body))
        attrs = dict(func_scope.attrs)
        if not func_scope.private:
            attrs.setdefault("global_symbol", func_scope.name)
        func = Function(func_scope.params, seq, None, func_scope.pure, attrs or None)
        func = self.normalize(func)
        if func_scope.name in self.module:
            raise IrlabError(f"the module already has a function named {func_scope.name!r}")
        gv = self._add_named(func, func_scope.name, dedup=False)
        func_scope.done = True
        scope.blocks = []
        return gv

    # -- normalization ----------------------------------------------------------------------
    def normalize(self, expr) -> Expr:
        """``expr`` in normal form with its struct info deduced."""
        return self._normalizer.normalize(expr)

    def lookup_binding(self, var):
        """The value bound to ``var`` by this builder, or None."""
        return self._bindings.get(var)

    # -- the module -------------------------------------------------------------------------
    def get(self) -> IRModule:
        """The module built so far."""
        return self.module.copy()

    def finalize(self) -> IRModule:
        return self.get()

    def add_func(self, func, func_name) -> GlobalVar:
        """Add ``func`` under a unique name derived from ``func_name``; an identical function
        added before is reused (its GlobalVar returned)."""
        return self._add_named(func, func_name, dedup=True)

    def _add_named(self, func, name, dedup):
        if dedup:
            for old in self._unhashed:
                if old in self.module:
                    self._func_hashes.setdefault(structural_hash(self.module[old]),
                                                 []).append(old)
            self._unhashed = []
            key = structural_hash(func)
            for gv in self._func_hashes.get(key, []):
                if gv in self.module and structural_equal(self.module[gv], func):
                    return gv
        gv = GlobalVar(self._unique_name(name) if dedup else name)
        if isinstance(func, Function):
            func = self.normalize(func)
        self.module[gv] = func
        self._func_hashes.setdefault(structural_hash(func), []).append(gv)
        return gv

    def update_func(self, gv, func):
        """Replace the function of ``gv``."""
        self.module[gv] = func

    def get_unique_name(self, name) -> str:
        return self._unique_name(name)

    def _unique_name(self, name) -> str:
        candidate, k = name, 0
        while candidate in self.module:
            k += 1
            candidate = f"{name}{k}"
        return candidate

    # -- TE ---------------------------------------------------------------------------------
    def call_te(self, func, *args, **kwargs) -> Expr:
        """``func`` (a TE/TOPI function) on the tensors ``args`` as a PrimFunc added to the
        module, and the ``R.call_tir`` calling it (not emitted). ``primfunc_name_hint`` names
        the PrimFunc (default: the function's name), ``primfunc_attrs`` adds attributes."""
        name_hint = kwargs.pop("primfunc_name_hint", None)
        attrs = kwargs.pop("primfunc_attrs", None)
        args = [self.normalize(a) if isinstance(a, Expr) else a for a in args]
        kwargs = {k: self.normalize(v) if isinstance(v, Expr) else v for k, v in kwargs.items()}
        prim_func, call_args, out_sinfo, tir_vars = te_call(func, args, kwargs)
        if attrs:
            prim_func = prim_func.with_attr(dict(attrs))
        gv = self.add_func(prim_func, name_hint or _func_name(func))
        from irlab.relax.op.base import call_tir

        return call_tir(gv, call_args, out_sinfo, tir_vars)

    def emit_te(self, func, *args, **kwargs) -> Var:
        """``emit(call_te(func, *args, **kwargs))``."""
        name_hint = kwargs.pop("name_hint", "")
        return self.emit(self.call_te(func, *args, **kwargs), name_hint)

    def __repr__(self):
        return f"BlockBuilder({len(self.module)} functions)"


def _func_name(func) -> str:
    name = getattr(func, "__name__", None) or type(func).__name__
    return name.strip("_") or "te_func"


def _sinfo(value) -> StructInfo:
    if isinstance(value, StructInfo):
        return value
    as_sinfo = getattr(value, "as_struct_info", None)
    if callable(as_sinfo):
        return as_sinfo()
    raise IrlabError(f"expected a StructInfo, got {type(value).__name__}")
