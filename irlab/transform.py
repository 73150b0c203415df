"""Pass infrastructure shared by Relay and TIR: ``PassInfo``, ``PassContext``, ``Pass``,
``module_pass`` and ``Sequential`` (TVM's ``tvm.transform``).

A pass is a value applied as ``mod = pass_(mod)``. ``Pass.__call__`` asks the current
context's instruments first (``should_run``/``run_before_pass``) and reports after
(``run_after_pass``). Only ``Sequential`` applies opt-level gating, exactly as TVM does.
"""

from __future__ import annotations

import functools
import inspect
import threading

from irlab.errors import IrlabError
from irlab.ir.module import IRModule


class PassInfo:
    """Name, minimum opt level and required passes of a pass."""

    __slots__ = ("opt_level", "name", "required")

    def __init__(self, opt_level, name, required=None):
        self.opt_level = int(opt_level)
        self.name = str(name)
        self.required = list(required or [])

    def __repr__(self):
        return (f"The meta data of the pass - pass name: {self.name}, opt_level: "
                f"{self.opt_level}, required passes: {self.required}")


# Registered config keys and their types (TVM_REGISTER_PASS_CONFIG_OPTION).
_CONFIG_OPTIONS: dict[str, str] = {}


def register_config(name: str, type_name: str):
    """Make ``name`` a valid ``PassContext(config={...})`` key."""
    _CONFIG_OPTIONS[name] = type_name


for _key, _type in [
    ("relay.FuseOps.max_depth", "IntImm"), ("relay.FuseOps.link_params", "Bool"),
    ("relay.backend.use_auto_scheduler", "IntImm"), ("relay.backend.use_meta_schedule", "IntImm"),
    ("relay.fallback_device_type", "IntImm"), ("tir.disable_vectorize", "Bool"),
    ("tir.noalias", "Bool"), ("testing.immutable_module", "Bool"),
    ("relay.x86.conv2d_NCHWc", "Bool"),
    ("relay.x86.conv2d_winograd", "Bool"),
]:
    register_config(_key, _type)


class _ContextStack(threading.local):
    def __init__(self):
        self.stack = []


_STACK = _ContextStack()


class PassContext:
    """The settings passes run under: opt level, required/disabled passes, instruments, config."""

    def __init__(self, opt_level=2, required_pass=None, disabled_pass=None, instruments=None,
                 config=None):
        self.opt_level = int(opt_level)
        self.required_pass = list(required_pass or [])
        self.disabled_pass = list(disabled_pass or [])
        self.instruments = list(instruments or [])
        config = dict(config or {})
        for key in config:
            if key not in _CONFIG_OPTIONS:
                candidates = ", ".join(sorted(_CONFIG_OPTIONS))
                raise AttributeError(f"Invalid config option '{key}' candidates are: {candidates}")
        self.config = config
        self.custom_passes: dict = {}  # name -> function, see add_custom_pass

    @staticmethod
    def current() -> "PassContext":
        if _STACK.stack:
            return _STACK.stack[-1]
        default = getattr(_STACK, "default", None)
        if default is None:
            default = _STACK.default = PassContext()
        return default

    @staticmethod
    def list_configs() -> dict:
        return {name: {"type": t} for name, t in sorted(_CONFIG_OPTIONS.items())}

    def __enter__(self):
        _enter_instruments(self)
        _STACK.stack.append(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        _STACK.stack.pop()
        _exit_instruments(self)
        return False

    def add_custom_pass(self, pass_func, name):
        """Register ``pass_func`` under ``name`` (seed 000's spelling; for TIR,
        ``pass_func(stmt) -> stmt`` run by ``tir.transform.ApplyCustomPass``). A pass
        registered again under the same name replaces the first (a re-run notebook cell)."""
        if not callable(pass_func):
            raise IrlabError(f"add_custom_pass: {name!r} must be given a function, got "
                             f"{type(pass_func).__name__}")
        if not isinstance(name, str) or not name:
            raise IrlabError(f"add_custom_pass: the name must be a non-empty string, got "
                             f"{name!r}")
        self.custom_passes[name] = pass_func

    @staticmethod
    def visible_custom_passes() -> dict:
        """The custom passes in force: the default context's, then those of every entered
        context, outermost first (an inner registration shadows an outer one of that name)."""
        found: dict = {}
        default = getattr(_STACK, "default", None)
        for ctx in ([default] if default is not None else []) + list(_STACK.stack):
            found.update(ctx.custom_passes)
        return found

    def override_instruments(self, instruments):
        """Exit the current instruments, replace them, enter the new ones."""
        _exit_instruments(self)
        self.instruments = list(instruments or [])
        _enter_instruments(self)

    def pass_enabled(self, info: PassInfo) -> bool:
        """TVM's PassEnabled: disabled -> off; required -> on; else opt level decides."""
        if info.name in self.disabled_pass:
            return False
        if info.name in self.required_pass:
            return True
        return self.opt_level >= info.opt_level

    # -- instrument protocol ------------------------------------------------------------------
    def _instrument_before(self, mod, info) -> bool:
        """TVM's InstrumentBeforePass: all should_run ANDed (skipped for required passes), then
        every run_before_pass. Returns whether the pass runs."""
        if not self.instruments:
            return True
        should_run = True
        if info.name not in self.required_pass:
            for instrument in self.instruments:
                fn = getattr(instrument, "should_run", None)
                if fn is not None:
                    should_run &= bool(_guarded(fn, f"should_run of {_name(instrument)}",
                                                mod, info))
        if should_run:
            for instrument in self.instruments:
                fn = getattr(instrument, "run_before_pass", None)
                if fn is not None:
                    _guarded(fn, f"run_before_pass of {_name(instrument)}", mod, info)
        return should_run

    def _instrument_after(self, mod, info):
        for instrument in self.instruments:
            fn = getattr(instrument, "run_after_pass", None)
            if fn is not None:
                _guarded(fn, f"run_after_pass of {_name(instrument)}", mod, info)


def _name(instrument) -> str:
    return getattr(instrument, "name", type(instrument).__name__)


def _guarded(fn, what, *args):
    """Call ``fn``; any non-irlab exception comes out as an IrlabError (TVM's TVMError) that
    says where it happened and keeps the original as its cause."""
    try:
        return fn(*args)
    except IrlabError:
        raise
    except Exception as err:
        raise IrlabError(f"{what} raised {type(err).__name__}: {err}") from err


def _enter_instruments(ctx):
    entered = []
    for instrument in ctx.instruments:
        fn = getattr(instrument, "enter_pass_ctx", None)
        try:
            if fn is not None:
                _guarded(fn, f"enter_pass_ctx of {_name(instrument)}")
        except IrlabError:
            # TVM: drop the instruments, exit only those whose enter succeeded, re-raise.
            ctx.instruments = []
            for done in entered:
                exit_fn = getattr(done, "exit_pass_ctx", None)
                if exit_fn is not None:
                    _guarded(exit_fn, f"exit_pass_ctx of {_name(done)}")
            raise
        entered.append(instrument)


def _exit_instruments(ctx):
    for instrument in ctx.instruments:
        fn = getattr(instrument, "exit_pass_ctx", None)
        if fn is None:
            continue
        try:
            _guarded(fn, f"exit_pass_ctx of {_name(instrument)}")
        except IrlabError:
            ctx.instruments = []  # later instruments get no exit, as in TVM
            raise


class Pass:
    """Base of passes: ``mod = pass_(mod)`` runs it under the current PassContext."""

    info: PassInfo

    def __call__(self, mod: IRModule) -> IRModule:
        if not isinstance(mod, IRModule):
            raise IrlabError(f"pass {self.info.name} expects an IRModule, got "
                             f"{type(mod).__name__}")
        ctx = PassContext.current()
        if not ctx._instrument_before(mod, self.info):
            return mod
        result = _guarded(self.transform_module, f"pass {self.info.name}", mod, ctx)
        ctx._instrument_after(result, self.info)
        return result

    def transform_module(self, mod, ctx):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}({self.info.name})"


class ModulePass(Pass):
    """A pass given by a function ``f(mod, ctx) -> mod``."""

    def __init__(self, pass_func, info: PassInfo):
        self.pass_func = pass_func
        self.info = info

    def transform_module(self, mod, ctx):
        result = self.pass_func(mod, ctx)
        if not isinstance(result, IRModule):
            raise IrlabError(f"pass {self.info.name} returned {type(result).__name__}, "
                             f"not an IRModule")
        return result


def get_pass(name: str) -> Pass:
    """Look up a pass by its PassInfo name, as Sequential does for ``required`` lists.

    Passes register a factory under their name (``register_pass_factory``); IR layers that
    load their pass modules lazily (Relay) register a finder that loads them on demand."""
    factory = _PASS_FACTORIES.get(name)
    for finder in _PASS_FINDERS:
        if factory is not None:
            break
        factory = finder(name) or _PASS_FACTORIES.get(name)
    if factory is None:
        raise IrlabError(f"cannot find a pass named {name!r}")
    return factory()


_PASS_FACTORIES: dict = {}
_PASS_FINDERS: list = []


def register_pass_factory(name, factory):
    _PASS_FACTORIES[name] = factory


def register_pass_finder(finder):
    """``finder(name)`` returns a pass factory or None (it may also register factories)."""
    _PASS_FINDERS.append(finder)


class Sequential(Pass):
    """Runs passes in order; each is gated by the context (disabled/required/opt_level) and has
    its ``required`` passes run first."""

    def __init__(self, passes=None, opt_level=0, name="sequential", required=None):
        self.passes = list(passes or [])
        for p in self.passes:
            if not isinstance(p, Pass):
                raise IrlabError(f"Sequential takes passes, got {type(p).__name__}")
        self.info = PassInfo(opt_level, name, required)

    def transform_module(self, mod, ctx):
        for p in self.passes:
            if not ctx.pass_enabled(p.info):
                continue
            for required in p.info.required:
                mod = get_pass(required)(mod)
            mod = p(mod)
        return mod


def _wrap_pass(pass_arg, opt_level, name, required, make):
    if opt_level is None:
        raise ValueError("Please provide opt_level for the pass.")
    if required is not None and not isinstance(required, (list, tuple)):
        raise TypeError("Required is expected to be the type of list/tuple.")

    def create(pass_arg):
        pass_name = name or pass_arg.__name__
        info = PassInfo(opt_level, pass_name, required)
        if inspect.isclass(pass_arg):
            return _class_pass(pass_arg, info, make)
        if not callable(pass_arg):
            raise TypeError("pass_func must be a callable for a pass")
        return make(pass_arg, info)

    return create(pass_arg) if pass_arg is not None else create


def _class_pass(cls, info, make):
    """Decorating a class: calling it builds a pass from an instance's transform method."""

    class PyPass(Pass):
        def __init__(self, *args, **kwargs):
            self._inst = cls(*args, **kwargs)
            inner = make(self._method, info)
            self._inner = inner
            self.info = info

        def _method(self, *args):
            name = "transform_function" if len(args) == 3 else "transform_module"
            return getattr(self._inst, name)(*args)

        def transform_module(self, mod, ctx):
            return self._inner.transform_module(mod, ctx)

        def __getattr__(self, name):
            return getattr(self._inst, name)

    functools.update_wrapper(PyPass.__init__, cls.__init__)
    PyPass.__name__ = cls.__name__
    PyPass.__doc__ = cls.__doc__
    return PyPass


def module_pass(pass_func=None, opt_level=None, name=None, required=None):
    """Decorate ``f(mod, ctx) -> mod`` (or a class with ``transform_module``) into a pass."""
    return _wrap_pass(pass_func, opt_level, name, required, ModulePass)


class PrintIR(Pass):
    """Prints the module (``PrintIR(header):`` then the text) and returns it unchanged."""

    def __init__(self, header="", show_meta_data=False):
        self.header = header
        self.show_meta_data = show_meta_data
        self.info = PassInfo(0, "PrintIR")

    def transform_module(self, mod, ctx):
        print(f"PrintIR({self.header}):\n{mod.astext(show_meta_data=self.show_meta_data)}")
        return mod


__all__ = ["PassInfo", "PassContext", "Pass", "ModulePass", "Sequential", "module_pass",
           "PrintIR", "register_config", "get_pass"]
