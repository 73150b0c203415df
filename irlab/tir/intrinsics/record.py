"""``Intrinsic``: everything about one TIR intrinsic in one record, and the registry of them.

A record is data (names, strings, flags) plus its numpy reference; what needs code in a
higher layer (an LLVM or C lowering) is a function registered there in the global function
registry under a name the record holds (TVM's ``FLowerIntrinsic`` op attribute), so the TIR
layer never imports a code generator.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Callable

from irlab.errors import TIRError
from irlab.runtime.registry import get_global_func, register_func
from irlab.tir import expr as E

INTRINSICS: dict[str, "Intrinsic"] = {}

# how each consumer reads a record (the order each code generator tries):
#   interpreter: ``numpy`` (``if_then_else`` and ``assume`` are control: evaluated in place)
#   LLVM:        lowering("llvm"), else ``llvm`` (an overloaded ``llvm.<name>`` intrinsic,
#                lane-wise on vectors), else ``libm`` (the C function, called per lane)
#   C:           lowering("c"), else ``libm`` (``f`` suffix for float32), else ``c_operator``
#                (infix), else ``c_function`` (called as spelled)
#   VectorizeLoop: ``elementwise``; ``conditional`` keeps the first argument scalar
#   deep-expression codegen: ``pure`` and not ``conditional`` may be translated ahead
#   TVMScript: ``tvmscript``: ``T.<short name>(args)`` is parsed, and printed when the
#                arguments have the call's dtype (else ``T.call_intrin``)
#   builders:    ``has_builder`` (pure, fixed arity, a numpy reference): ``tir.<short name>``,
#                ``te.<short name>`` and ``T.<short name>`` build the call (``builder()``);
#                hand-written ones in ``tir.op`` (``floor``, ``fabs``, ``pow``...) take over
#   NumpyCodeGen: ``numpy`` (``np.<ufunc>`` in the source when it is one)


@dataclasses.dataclass(eq=False)
class Intrinsic:
    """One TIR intrinsic (``Call(dtype, name, args)``): its arity, effect and semantics, and
    how the interpreter, VectorizeLoop and the LLVM and C code generators translate it.

    ``numpy(*args)`` is the reference: it takes the arguments as numpy values (scalars of
    their dtype, or arrays for vectors) and returns the result, which the interpreter casts
    to the call's dtype (integers wrap). ``dtype_rule(args)`` gives the result dtype when the
    record is called to build a ``Call`` (default: the first argument's dtype).
    """

    name: str
    num_args: int | None = None
    pure: bool = True  # TVM's TCallEffectKind: kPure (no side effect) vs kOpaque
    numpy: Callable | None = None
    llvm: str | None = None
    libm: str | None = None
    c_operator: str | None = None
    c_function: str | None = None
    elementwise: bool = False
    conditional: bool = False  # evaluates only some arguments (``if_then_else``)
    tvmscript: bool = False  # TVMScript spells it ``T.<short name>(args)`` (dtype: the args')
    dtype_rule: Callable | None = None
    lowerings: dict = dataclasses.field(default_factory=dict)  # target kind -> function name
    doc: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.startswith("tir."):
            raise TIRError(f"an intrinsic name starts with 'tir.', got {self.name!r}")
        if self.num_args is not None and (not isinstance(self.num_args, int)
                                          or self.num_args < 0):
            raise TIRError(f"intrinsic {self.name}: num_args must be a count or None, "
                           f"got {self.num_args!r}")

    @property
    def short_name(self) -> str:
        """The name without ``tir.`` (``exp``): the spelling of ``T.exp`` and ``tir.exp``."""
        return self.name[4:]

    def __call__(self, *args, dtype=None, span=None):
        """A ``Call`` of this intrinsic on ``args`` (converted to PrimExprs)."""
        args = tuple(E.convert(a) if not isinstance(a, str) else a for a in args)
        self.check_arity(len(args))
        if dtype is None:
            dtype = self.dtype_rule(args) if self.dtype_rule else _first_dtype(self, args)
        return E.Call(dtype, self.name, args, span)

    @property
    def has_builder(self) -> bool:
        """Whether ``tir.<name>``, ``te.<name>`` and ``T.<name>`` build it: a pure intrinsic
        of fixed arity that computes a value from its arguments (it has a numpy reference)."""
        return self.pure and self.num_args is not None and self.numpy is not None

    def builder(self):
        """The function ``tir.<short name>`` (and ``te.<short name>``): its arguments, then
        ``span``; made once per record, its docstring taken from the record."""
        made = self.__dict__.get("_builder")
        if made is None:
            made = self.__dict__["_builder"] = _make_builder(self)
        return made

    def describe(self) -> str:
        """A one-paragraph description of the intrinsic (the builders' docstring)."""
        what = self.doc or f"``{self.short_name}`` of the argument(s)"
        ways = ", ".join(f"{k} {getattr(self, k)!r}" for k in ("llvm", "libm", "c_operator",
                                                                "c_function")
                         if getattr(self, k) is not None)
        return (f"{what[0].upper()}{what[1:]}: a Call of the intrinsic ``{self.name}`` "
                f"(reference: {_callable_name(self.numpy)}{'; ' + ways if ways else ''}).")

    def check_arity(self, count, node=None):
        if self.num_args is not None and count != self.num_args:
            raise TIRError(f"{self.name} takes {self.num_args} argument(s), got {count}", node)

    def lowering(self, target_kind: str):
        """The lowering function registered for ``target_kind`` (``"llvm"``, ``"c"``) or
        None: called as ``fn(emitter, call)``, ``emitter`` being the code generator's
        function builder."""
        name = self.lowerings.get(target_kind)
        return get_global_func(name) if name is not None else None

    def __repr__(self):
        ways = [k for k in ("numpy", "llvm", "libm", "c_operator", "c_function")
                if getattr(self, k) is not None] + [f"lower.{k}" for k in self.lowerings]
        arity = "any" if self.num_args is None else self.num_args
        return f"Intrinsic({self.name}, args={arity}, {'pure' if self.pure else 'opaque'}, " \
               f"{', '.join(ways) or 'opaque to every backend'})"


_ARG_NAMES = {1: ("x",), 2: ("x1", "x2"), 3: ("a", "b", "c")}


def _make_builder(record):
    names = _ARG_NAMES.get(record.num_args) or tuple(f"x{i}" for i in range(record.num_args))
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    params.append(inspect.Parameter("span", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                    default=None))
    signature = inspect.Signature(params)

    def build(*args, **kwargs):
        if kwargs.keys() - {"span"} or len(args) != record.num_args:
            bound = signature.bind(*args, **kwargs)  # TypeError as a Python function's
            args, kwargs = bound.args[:record.num_args], {"span": bound.arguments.get("span")}
        return record(*args, span=kwargs.get("span"))

    build.__name__ = build.__qualname__ = record.short_name
    build.__signature__ = signature
    build.__doc__ = record.describe()
    return build


def _callable_name(fn) -> str:
    module = getattr(fn, "__module__", None) or ("numpy" if hasattr(fn, "nin") else "")
    prefix = "np." if module == "numpy" else ""
    return prefix + getattr(fn, "__name__", repr(fn))


def _first_dtype(record, args):
    if not args:
        raise TIRError(f"{record.name}: say the result dtype (no argument to take it from)")
    return args[0].dtype


def register_intrinsic(name, num_args=None, pure=True, override=False, **fields):
    """Register an intrinsic: ``register_intrinsic(Intrinsic(...))`` or by fields
    (``register_intrinsic("tir.exp", 1, numpy=np.exp, llvm="exp", libm="exp")``; a name
    without ``tir.`` gets it). Registering a name twice is an error unless ``override``.
    Returns the record."""
    if isinstance(name, Intrinsic):
        if fields:
            raise TIRError("register_intrinsic: give a record or fields, not both")
        record = name
    else:
        name = name if str(name).startswith("tir.") else "tir." + str(name)
        record = Intrinsic(name, num_args, pure, **fields)
    old = INTRINSICS.get(record.name)
    if old is not None and old is not record and not override:
        raise TIRError(f"intrinsic {record.name} is already registered ({old!r}); pass "
                       f"override=True to replace it")
    INTRINSICS[record.name] = record
    return record


def get_intrinsic(op) -> Intrinsic:
    """The record of ``op`` (a name, with or without ``tir.``, or a Call's op)."""
    return INTRINSICS[intrinsic_name(op)]


def intrinsic_name(op) -> str:
    """The registered name of ``op`` (``"exp"`` and ``"tir.exp"`` both name ``tir.exp``)."""
    name = getattr(op, "name", op)
    if not isinstance(name, str):
        raise TIRError(f"a TIR Call needs an intrinsic name, got {op!r}")
    if name in INTRINSICS:
        return name
    if "tir." + name in INTRINSICS:
        return "tir." + name
    raise TIRError(f"unknown TIR intrinsic {name!r}; registered: {', '.join(sorted(INTRINSICS))}")


def register_lowering(op, target_kind: str, f=None, override=False):
    """Register ``f(emitter, call)`` as how ``target_kind``'s code generator translates the
    intrinsic ``op`` (TVM's ``register_intrin_lowering``); usable as a decorator. The
    function goes to the global registry as ``tir.lower.<target_kind>.<op>`` and the record
    keeps that name."""
    record = get_intrinsic(op)
    func_name = f"tir.lower.{target_kind}.{record.name}"

    def register(fn):
        packed = register_func(func_name, fn, override=override)
        record.lowerings[target_kind] = func_name
        return packed

    return register(f) if f is not None else register
