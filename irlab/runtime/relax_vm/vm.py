"""``VirtualMachine``: runs a Relax ``VMExecutable``'s bytecode (TVM's ``relax.VirtualMachine``).

Each call of a VM function gets a fresh register file; ``Call`` instructions run packed
functions (the executable's kernels, then the global registry: ``vm.builtin.*`` and anything
registered) or other VM functions. Each function is resolved once into closures
(``resolve``); the storage StaticPlanBlockMemory planned is kept for the next call when
nothing holds it any more (returned tensors are the caller's own). A failed call leaves the
VM usable.
"""

from __future__ import annotations

import enum
import time

import numpy as np

from irlab.errors import IrlabError, VMError, VMValueError
from irlab.runtime.benchmark import time_evaluator
from irlab.runtime.container import ShapeTuple
from irlab.runtime.ndarray import Device, NDArray, array, cpu
from irlab.runtime.packed_func import PackedFunc
from irlab.runtime.registry import get_global_func
from irlab.runtime.relax_vm.builtin import VMClosure
from irlab.runtime.relax_vm.bytecode import ArgKind, SpecialReg, VMFuncKind
from irlab.runtime.relax_vm.executable import VMExecutable
from irlab.runtime.relax_vm.profiling import ProfileReport
from irlab.runtime.relax_vm.resolve import ResolvedFunction


class VMInstrumentReturnKind(enum.IntEnum):
    """What an instrument returns before a call: go on, or skip the call."""

    NO_OP = 0
    SKIP_RUN = 1


class VirtualMachine:
    """Runs ``rt_mod`` (an executable from ``relax.build`` or ``ExecBuilder.get()``, or one
    read by ``runtime.load_module``) on ``device``: ``vm["main"](*args)``."""

    def __init__(self, rt_mod, device=None, memory_cfg=None, profile=False):
        exe = getattr(rt_mod, "mod", rt_mod)
        if not isinstance(exe, VMExecutable):
            raise IrlabError(f"VirtualMachine takes a Relax executable (relax.build / "
                             f"ExecBuilder.get()), got {type(rt_mod).__name__}")
        devices = device if isinstance(device, (list, tuple)) else [device or cpu(0)]
        if not all(isinstance(d, Device) for d in devices):
            raise IrlabError(f"VirtualMachine: expected devices such as tvm.cpu(), got {device}")
        if memory_cfg not in (None, "naive", "pooled") and not isinstance(memory_cfg, dict):
            raise IrlabError(f"VirtualMachine: unknown memory_cfg {memory_cfg!r}")
        self.module = exe
        self.devices = list(devices)
        self.profile_enabled = profile
        self._callees = [self._resolve(info) for info in exe.func_table]
        self._saved: dict = {}
        self._inputs: dict = {}
        self._outputs: dict = {}
        self._profile: list | None = None
        self._instrument = None
        self._names = [info.name for info in exe.func_table]
        self._callee_values = [self._vm_function(k) if callee is None else callee
                               for k, callee in enumerate(self._callees)]
        self._fast_code: dict = {}
        self._observed_code: dict = {}

    def _resolve(self, info):
        """What a function-table entry calls: VM bytecode, a kernel, or a global function."""
        if info.kind == VMFuncKind.VM_FUNC:
            if info.name not in self.module.code:
                raise VMError(f"VM function {info.name!r} is declared but has no bytecode")
            return None
        for lib in self.module.imported_modules:
            if lib.implements_function(info.name, query_imports=True):
                return lib.get_function(info.name, query_imports=True)
        func = get_global_func(info.name, allow_missing=True)
        if func is None:
            raise VMError(f"cannot find packed function {info.name!r} in the executable's "
                          f"kernel library nor in the global function registry")
        return func

    # -- calling -----------------------------------------------------------------------------
    def __getitem__(self, name):
        if name in self._saved:
            return self._saved[name]
        if name not in self.module.code:
            raise VMError(f"the executable has no function {name!r}; it has "
                          f"{self.module.get_func_names()}")
        index = self.module.func_map[name]
        invoke = self._invoke

        def call(*args):
            return invoke(index, [a if type(a) is NDArray else _convert(a) for a in args])
        return PackedFunc(call, name)

    def _vm_function(self, index):
        """What a Call of VM function ``index`` calls."""
        return lambda *args: self._invoke(index, args)

    def invoke_closure(self, closure, *args):
        """Call a closure a VM function returned."""
        if not callable(closure):
            raise VMError(f"invoke_closure: expected a closure, got {type(closure).__name__}")
        return closure(*[_convert(a) for a in args])

    def save_function(self, func_name, saved_name, *args, include_return=True, **kwargs):
        """Make ``vm[saved_name]()`` call ``func_name`` on these arguments (for timing without
        the cost of passing them)."""
        args = self._named_args(func_name, args, kwargs)
        func = self[func_name]

        def saved():
            result = func(*args)
            return result if include_return else None

        self._saved[saved_name] = PackedFunc(saved, saved_name)

    def set_input(self, func_name, *args, **kwargs):
        """Store the inputs of ``func_name`` for ``invoke_stateful`` (by position or name)."""
        self._inputs[func_name] = self._named_args(func_name, args, kwargs)

    def invoke_stateful(self, func_name):
        """Run ``func_name`` on the inputs ``set_input`` stored; read them with
        ``get_outputs``."""
        if func_name not in self._inputs:
            raise VMValueError(f"invoke_stateful: call set_input({func_name!r}, ...) first")
        self._outputs[func_name] = self[func_name](*self._inputs[func_name])

    def get_outputs(self, func_name):
        """The result of the last ``invoke_stateful(func_name)``."""
        if func_name not in self._outputs:
            raise VMValueError(f"get_outputs: {func_name!r} has not been run with "
                               f"invoke_stateful")
        return self._outputs[func_name]

    def set_instrument(self, instrument):
        """Call ``instrument(func, func_symbol, before_run, ret_value, *args)`` before and
        after each Call instruction (``ret_value`` is None before). Returning
        ``VMInstrumentReturnKind.SKIP_RUN`` before a call skips it (its result is None)."""
        self._instrument = instrument

    def _named_args(self, func_name, args, kwargs):
        if func_name not in self.module.code:
            raise VMError(f"the executable has no function {func_name!r}")
        if not kwargs:
            return [_convert(a) for a in args]
        info = self.module.func_table[self.module.func_map[func_name]]
        names = list(info.param_names)
        values = list(args) + [None] * (len(names) - len(args))
        for key, value in kwargs.items():
            if key not in names:
                raise VMError(f"{func_name} has no parameter {key!r}; it has {names}")
            values[names.index(key)] = value
        missing = [n for n, v in zip(names, values) if v is None]
        if missing:
            raise VMError(f"{func_name}: missing inputs {missing}")
        return [_convert(v) for v in values]

    # -- timing and profiling -----------------------------------------------------------------
    def time_evaluator(self, func_name, dev=None, number=10, repeat=1, min_repeat_ms=0,
                       cooldown_interval_ms=0, repeats_to_cooldown=1, f_preproc=""):
        """A callable timing ``func_name``: with arguments it runs on them; without, on the
        inputs of ``set_input``. ``time_evaluator("invoke_stateful", dev)("main")`` times
        ``invoke_stateful("main")``."""
        if func_name == "invoke_stateful":  # TVM's spelling: time the stateful call of args[0]
            def run(name):
                return self.invoke_stateful(name)
        else:
            func = self[func_name]

            def run(*args):
                if args:
                    return func(*args)
                return func(*self._inputs.get(func_name, ()))

        return time_evaluator(run, number=number, repeat=repeat, min_repeat_ms=min_repeat_ms,
                              cooldown_interval_ms=cooldown_interval_ms,
                              repeats_to_cooldown=repeats_to_cooldown,
                              f_preproc=f_preproc or None)

    def profile(self, func_name, *args) -> ProfileReport:
        """Run ``func_name`` once and report the time of every Call instruction."""
        self._profile = []
        start = time.perf_counter()
        try:
            self[func_name](*args)
        finally:
            total = time.perf_counter() - start
            records, self._profile = self._profile, None
        return ProfileReport(records, total)

    # -- running ------------------------------------------------------------------------------
    # Each VM function is resolved once into closures (``resolve.ResolvedFunction``): one form
    # for plain calls (fast paths, kernels bound, planned storage kept across calls), one for
    # observed calls (profile, instrument: every instruction runs and is seen as written).
    def _resolved(self, index, observed):
        table = self._observed_code if observed else self._fast_code
        function = table.get(index)
        if function is None:
            info = self.module.func_table[index]
            observe = self._observer(info.name) if observed else None
            function = table[index] = ResolvedFunction(
                info, self.module.code[info.name], self._callee_values, self._names,
                self._constant, observe)
        return function

    def _invoke(self, index, args):
        info = self.module.func_table[index]
        if info.kind != VMFuncKind.VM_FUNC:
            return self._callees[index](*args)
        observed = self._profile is not None or self._instrument is not None
        return self._resolved(index, observed).run(args)

    def _constant(self, arg):
        """The value of a non-register instruction argument."""
        if arg.kind == ArgKind.REGISTER:
            return self if arg.value == SpecialReg.VM_STATE else None
        if arg.kind == ArgKind.IMMEDIATE:
            return arg.value
        if arg.kind == ArgKind.CONST_IDX:
            return self.module.constants[arg.value]
        return self._function_value(arg.value)

    def _observer(self, func_name):
        """Wraps each Call of ``func_name`` so the profiler and the instrument see it."""
        def observe(pc, index, callee):
            return lambda *values: self._call(func_name, pc, index, values)
        return observe

    def _function_value(self, index):
        """A function-table entry as a value (``f[name]``): callable, e.g. by make_closure."""
        info = self.module.func_table[index]
        return VMClosure(info.name, lambda *args: self._invoke(index, list(args)))

    def _call(self, func_name, pc, index, values):
        """A Call observed by the profiler or an instrument, or of a VM function."""
        callee = self._callees[index]
        instrument = self._instrument
        if instrument is not None:
            func = callee if callee is not None else self._function_value(index)
            symbol = self.module.func_table[index].name
            if instrument(func, symbol, True, None, *values) == VMInstrumentReturnKind.SKIP_RUN:
                return None
        start = time.perf_counter() if self._profile is not None else 0.0
        result = callee(*values) if callee is not None else self._invoke(index, list(values))
        if self._profile is not None:
            self._profile.append((func_name, pc, self.module.func_table[index].name,
                                  self.module.func_table[index].kind,
                                  time.perf_counter() - start, values))
        if instrument is not None:
            instrument(func, symbol, False, result, *values)
        return result

    def __repr__(self):
        return f"VirtualMachine({self.module.get_func_names()}, devices={self.devices})"


def _convert(value):
    """A Python argument as a VM value: numpy arrays become NDArrays, lists tuples."""
    if isinstance(value, np.ndarray):
        return array(value)
    if isinstance(value, (list, tuple)) and not isinstance(value, ShapeTuple):
        return tuple(_convert(v) for v in value)
    return value

__all__ = ["VirtualMachine", "VMInstrumentReturnKind"]
