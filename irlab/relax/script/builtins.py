"""The ``R`` namespace of TVMScript (``from irlab.script import relax as R``), as in TVM v0.16.

Struct-info constructors (``R.Tensor``, ``R.Shape``...) return StructInfo at once: a dimension
written as a string (``R.Tensor(("n", 4))``) names a symbolic ``tir.Var`` of the function being
parsed (``symbol_table``), so every ``"n"`` of one function is the same variable. Calls
(``R.call_tir``, ``R.add``...) build Relax expressions; ``R.<op>`` is ``relax.op.<op>``.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import contextvars
import inspect

from irlab import relax as _relax
from irlab import tir as _tir
from irlab.errors import IrlabError, ParseError
from irlab.ir.attrs import DictAttrs
from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.runtime.dtype import parse_dtype
from irlab.script import dialect

_SYMBOLS: contextvars.ContextVar = contextvars.ContextVar("relax_script_symbols", default=None)


@contextlib.contextmanager
def symbol_table(table: dict):
    """Resolve string dimensions through ``table`` (name -> tir.Var) while parsing."""
    token = _SYMBOLS.set(table)
    try:
        yield table
    finally:
        _SYMBOLS.reset(token)


def _symbolic(name: str):
    """The symbolic variable ``name`` of the current function (int64, created on first use)."""
    table = _SYMBOLS.get()
    if table is None:
        table = {}
    var = table.get(name)
    if var is None:
        var = table[name] = _tir.Var(name, "int64")
    return var


def _dim(value):
    """A shape dimension: an int, a PrimExpr, or a string naming (or computing over)
    symbolic variables, as the printer writes ``"n"`` / ``"n * 4"`` in a signature."""
    if isinstance(value, str):
        if value.isidentifier():
            return _symbolic(value)
        try:
            tree = ast.parse(value, mode="eval")
        except SyntaxError:
            raise IrlabError(f"shape dimension {value!r} is not an expression") from None
        table = _SYMBOLS.get()
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        if table is None:  # evaluated by Python itself (an annotation at `def` time)
            table = {name: _tir.Var(name, "int64") for name in names}
        missing = sorted(names - set(table))
        if missing:  # a computed dim cannot define a variable (as TVM: no solving for it)
            raise IrlabError(f"shape dimension {value!r}: symbolic variable {missing[0]} is "
                             f"not defined (a dimension written alone, \"{missing[0]}\", "
                             f"defines it)")
        env = {name: table[name] for name in names}
        return eval(compile(tree, "<dim>", "eval"), {"T": _tir}, env)  # noqa: S307
    if isinstance(value, bool) or not isinstance(value, (int, _tir.PrimExpr)):
        raise IrlabError(f"a shape dimension must be an int, a PrimExpr or a symbolic "
                         f"name string, got {value!r}")
    if isinstance(value, int):
        return _tir.IntImm("int64", value)
    return value


def _dtype(dtype):
    """A dtype string, or None for an unknown one."""
    if dtype is None:
        return None
    text = getattr(dtype, "dtype", dtype)
    if not isinstance(text, str):
        raise IrlabError(f"dtype must be a string such as 'float32', got {dtype!r}")
    return str(parse_dtype(text)) if text else None


# -- struct info ----------------------------------------------------------------------------
def _check_ndim(ndim, shape=None):
    if isinstance(ndim, bool) or not isinstance(ndim, int) or ndim < -1:
        raise IrlabError(f"ndim must be an int >= 0, or -1 for an unknown rank; got {ndim!r}")
    if shape is not None and ndim not in (-1, len(shape)):
        raise IrlabError(f"ndim={ndim} disagrees with the {len(shape)} dims of {tuple(shape)}")


def Tensor(shape=None, dtype=None, ndim: int = -1):  # noqa: N802 (TVM's name)
    """``R.Tensor((n, 4), "float32")``, ``R.Tensor(dtype="float32", ndim=2)``, ``R.Tensor``."""
    if isinstance(shape, str) and dtype is None:
        shape, dtype = None, shape
    _check_ndim(ndim, shape if isinstance(shape, (tuple, list)) else None)
    if shape is None:
        return _relax.TensorStructInfo(None, dtype=_dtype(dtype), ndim=ndim)
    if isinstance(shape, _relax.Expr):  # a shape-valued expression (a Var of R.Shape)
        return _relax.TensorStructInfo(shape, dtype=_dtype(dtype))
    if not isinstance(shape, (tuple, list)):
        raise IrlabError(f"R.Tensor: shape must be a tuple or list, got {shape!r}")
    return _relax.TensorStructInfo(_relax.ShapeExpr([_dim(d) for d in shape]),
                                   dtype=_dtype(dtype))


def Shape(values=None, ndim: int = -1):  # noqa: N802
    """``R.Shape([n, 4])`` or ``R.Shape(ndim=2)``."""
    _check_ndim(ndim, values)
    if values is None:
        return _relax.ShapeStructInfo(ndim=ndim)
    return _relax.ShapeStructInfo([_dim(d) for d in values])


def Tuple(*fields):  # noqa: N802
    """``R.Tuple(R.Tensor(...), R.Shape(...))``."""
    if len(fields) == 1 and isinstance(fields[0], (list, tuple)):
        fields = tuple(fields[0])
    return _relax.TupleStructInfo([as_struct_info(f) for f in fields])


def Object():  # noqa: N802
    return _relax.ObjectStructInfo()


def Prim(dtype=None, value=None):  # noqa: N802
    """``R.Prim("int64")`` or ``R.Prim(value=n)``."""
    if value is not None:
        return _relax.PrimStructInfo(value=_dim(value))
    return _relax.PrimStructInfo(_dtype(dtype) or "int64")


def Callable(params=None, ret=None, purity=None):  # noqa: N802
    """``R.Callable((R.Tensor(...),), R.Tensor(...))``; ``R.Callable`` alone is an opaque,
    impure function (a packed one), as TVM prints it."""
    ret = _relax.ObjectStructInfo() if ret is None else as_struct_info(ret)
    if params is None:
        return _relax.FuncStructInfo.opaque_func(ret=ret, purity=bool(purity))
    params = params if isinstance(params, (list, tuple)) else [params]
    return _relax.FuncStructInfo([as_struct_info(p) for p in params], ret,
                                 True if purity is None else purity)


_BARE_STRUCT_INFO = (Tensor, Shape, Tuple, Object, Prim, Callable)


def as_struct_info(value):
    """StructInfo from an annotation: ``R.Object`` / ``R.Tensor`` written without a call
    stand for their call without arguments."""
    if any(value is f for f in _BARE_STRUCT_INFO):
        return value()
    if value is None:  # ``-> None``: returns nothing, as TVM reads it
        return _relax.TupleStructInfo([])
    if isinstance(value, _relax.StructInfo):
        return value
    raise IrlabError(f"expected a struct info such as R.Tensor((n, 4), 'float32'), "
                     f"got {value!r}")


# -- expressions ----------------------------------------------------------------------------
def as_expr(value):
    """A Relax expression from a value written in a script: tuples become ``relax.Tuple``,
    Python numbers ``PrimValue``s, strings ``StringImm``s."""
    if isinstance(value, (_relax.Expr, GlobalVar)):  # a GlobalVar: a function as a value
        return value
    if isinstance(value, (tuple, list)):
        return _relax.Tuple([as_expr(v) for v in value])
    if isinstance(value, (bool, int, float)) or isinstance(value, _tir.PrimExpr):
        return prim_value(value)
    if isinstance(value, str):
        return _relax.StringImm(value)
    raise IrlabError(f"expected a Relax expression, got {type(value).__name__} {value!r}")


def _as_args(args):
    """The argument tuple of ``call_tir`` / ``call_dps_packed``: one expression or several."""
    if isinstance(args, (tuple, list)):
        return _relax.Tuple([as_expr(a) for a in args])
    arg = as_expr(args)
    return arg if isinstance(arg, _relax.Tuple) else _relax.Tuple([arg])


def _out_sinfo(out_sinfo):
    if isinstance(out_sinfo, (list, tuple)):
        return [as_struct_info(s) for s in out_sinfo]
    return as_struct_info(out_sinfo)


def call_tir(func, args, out_sinfo, tir_vars=None):
    """``R.call_tir(cls.f, (x, y), out_sinfo=R.Tensor(...))``: call the PrimFunc ``f`` with
    outputs allocated for it (destination passing)."""
    if isinstance(tir_vars, (list, tuple)):
        tir_vars = _relax.ShapeExpr([_dim(v) for v in tir_vars])
    return _relax.op.call_tir(func, _as_args(args), _out_sinfo(out_sinfo), tir_vars)


def call_dps_packed(func, args, out_sinfo):
    """``R.call_dps_packed("f", (x,), out_sinfo=...)``: a packed function in DPS style."""
    if isinstance(func, str):
        func = _relax.ExternFunc(func)
    return _relax.op.call_dps_packed(func, _as_args(args), _out_sinfo(out_sinfo))


def call_packed(func, *args, sinfo_args=None, **kwargs):
    """``R.call_packed("f", x, sinfo_args=R.Tensor(...))``: call a registered function."""
    if kwargs:
        raise IrlabError(f"R.call_packed: unexpected keyword arguments {sorted(kwargs)}")
    if sinfo_args is not None:
        sinfo_args = [as_struct_info(s) for s in (
            sinfo_args if isinstance(sinfo_args, (list, tuple)) else [sinfo_args])]
    return _relax.op.call_packed(func, *[as_expr(a) for a in args], sinfo_args=sinfo_args)


def call_pure_packed(func, *args, sinfo_args):
    """``R.call_pure_packed("f", x, sinfo_args=...)``: a packed call the compiler may treat as
    pure (allowed in dataflow blocks)."""
    sinfo_args = sinfo_args if isinstance(sinfo_args, (list, tuple)) else [sinfo_args]
    return _relax.op.call_pure_packed(func, *[as_expr(a) for a in args],
                                      sinfo_args=[as_struct_info(s) for s in sinfo_args])


class MatchCastPair:
    """What ``R.match_cast(value, sinfo)`` returns: the parser binds it as a MatchCast."""

    def __init__(self, value, struct_info):
        self.value, self.struct_info = value, struct_info


def match_cast(value, struct_info):
    """``lv = R.match_cast(x, R.Tensor(("n", "m"), "float32"))``: check x at run time, define
    new symbolic variables from its shape."""
    return MatchCastPair(as_expr(value), as_struct_info(struct_info))


def shape(values):
    """``R.shape([n, 4])``: a shape value."""
    return _relax.ShapeExpr([_dim(v) for v in values])


def const(value, dtype=None):
    """``R.const(1.0, "float32")``: a constant tensor."""
    return _relax.const(value, _dtype(dtype))


def prim_value(value):
    """``R.prim_value(1)``: a scalar TIR value."""
    return _relax.PrimValue(value)


def string(value):
    """``R.str("text")``: a string value."""
    return _relax.StringImm(value)


def make_tuple(*fields):
    """``R.tuple(a, b)``: a tuple value (``(a, b)`` too)."""
    return _relax.Tuple([as_expr(f) for f in fields])


def dtype(value):
    """``R.dtype("float32")``: a dtype value."""
    return _relax.DataTypeImm(value)


def ExternFunc(global_symbol):  # noqa: N802
    """``R.ExternFunc("name")``: a packed function known by name."""
    return _relax.ExternFunc(global_symbol)


# -- statements the parser reads (not callable as Python) -----------------------------------
class Marker:
    """A statement of the script (``R.dataflow()``, ``R.output``), read by the parser."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kwargs):
        raise ParseError(f"R.{self.name} is only meaningful inside an @R.function")

    def __repr__(self):
        return f"R.{self.name}"


dataflow = Marker("dataflow")
output = Marker("output")
func_attr = Marker("func_attr")


# -- @R.function ----------------------------------------------------------------------------
class FunctionDecorator:
    """``@R.function`` / ``@R.function(pure=False, private=True)``."""

    def __init__(self, pure=True, private=False):
        self.pure, self.private = pure, private

    def __call__(self, fn):
        if not inspect.isfunction(fn):
            raise ParseError("@R.function decorates a Python function")
        deferred = self.defer_source(*_source_of(fn))
        if dialect.in_class_body(_caller_frame()):
            return deferred  # @I.ir_module defines it once every function is known
        return deferred.define(dialect.ModuleContext("Module", {}))

    def defer_source(self, node, source):
        from irlab.relax.script.parser import DeferredRelaxFunction

        return DeferredRelaxFunction(node, source, self.pure, self.private)

    def __repr__(self):
        return f"R.function(pure={self.pure}, private={self.private})"


def function(f=None, *, pure=True, private=False):
    """Decorator: parse a Python function into a ``relax.Function``."""
    decorator = FunctionDecorator(pure, private)
    return decorator if f is None else decorator(f)


function.defer_source = FunctionDecorator().defer_source


def _source_of(fn):
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as err:
        raise ParseError(f"cannot read the source of {fn!r}: {err}") from None
    import textwrap

    text = textwrap.dedent("".join(lines))
    env = dict(fn.__globals__)
    env.update(_closure_values(fn))
    node = ast.parse(text).body[0]
    return node, dialect.SourceInfo(text, inspect.getsourcefile(fn) or "<unknown>",
                                    first - 1, env)


def _closure_values(fn) -> dict:
    """The closure variables of ``fn`` that have a value (a method of a class being defined
    names the class, whose cell is still empty: the parser binds it to the module)."""
    values = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            values[name] = cell.cell_contents
        except ValueError:
            continue
    return values


def _caller_frame():
    """The first frame outside this module (where ``@R.function`` was applied)."""
    frame = inspect.currentframe()
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    return frame


# TVM's names that would shadow Python's builtins in this module
_RENAMED = {"str": string, "tuple": make_tuple}


class OpCall:
    """``R.builtin.alloc_tensor(...)``: a call of a registered Relax op that has no Python
    builder; keyword arguments are its attributes, ``sinfo_args=`` its struct infos."""

    def __init__(self, op):
        self.op = op

    def __call__(self, *args, sinfo_args=None, **kwargs):
        attrs = None
        if kwargs:
            attrs_type = self.op.attrs_type
            attrs = attrs_type(**kwargs) if attrs_type is not None else DictAttrs(kwargs)
        if sinfo_args is not None and not isinstance(sinfo_args, (list, tuple)):
            sinfo_args = [sinfo_args]
        if args and isinstance(args[0], builtins.str):  # the printer's spelling of a callee
            args = (_relax.ExternFunc(args[0]),) + args[1:]
        return _relax.Call(self.op, [as_expr(a) for a in args], attrs,
                           [as_struct_info(s) for s in sinfo_args or ()])

    def __repr__(self):
        return f"R.{self.op.name[len('relax.'):]}"


class OpNamespace:
    """``R.nn``, ``R.builtin``, ``R.memory``...: Relax ops under a dotted prefix; the Python
    builder of ``relax.op`` when there is one, else the registered op itself."""

    def __init__(self, prefix, python_module=None):
        self.prefix, self.python_module = prefix, python_module

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        builder = getattr(self.python_module, name, None)
        if callable(builder) and not inspect.ismodule(builder):
            return builder
        return _op_or_namespace(f"{self.prefix}.{name}", builder)

    def __repr__(self):
        return f"R.{self.prefix[len('relax.'):]}"


def _op_or_namespace(full_name, python_module=None):
    names = Op.list_op_names()
    if full_name in names:
        return OpCall(Op.get(full_name))
    if python_module is not None or any(n.startswith(full_name + ".") for n in names):
        return OpNamespace(full_name, python_module)
    raise AttributeError(f"R.{full_name[len('relax.'):]} is not defined (no Relax op "
                         f"{full_name})")


def __getattr__(name):
    """``R.add``, ``R.nn.relu``...: the Relax op builders (``relax.op.<name>``), or, for an
    op without one, a generic call of the registered op."""
    if name in _RENAMED:
        return _RENAMED[name]
    if name.startswith("_"):
        raise AttributeError(name)
    builder = getattr(_relax.op, name, None)
    if callable(builder) and not inspect.ismodule(builder):
        return builder
    return _op_or_namespace(f"relax.{name}", builder)
