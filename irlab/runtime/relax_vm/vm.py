"""``VirtualMachine``: runs a Relax ``VMExecutable``'s bytecode (TVM's ``relax.VirtualMachine``).

Each call of a VM function gets a fresh register file; ``Call`` instructions run packed
functions (the executable's kernels, then the global registry: ``vm.builtin.*`` and anything
registered) or other VM functions. Nothing is kept between calls except what ``set_input`` /
``invoke_stateful`` store, so a failed call leaves the VM usable.
"""

from __future__ import annotations

import enum
import time

import numpy as np

from irlab.errors import IrlabError, VMError, VMValueError
from irlab.runtime.benchmark import time_evaluator
from irlab.runtime.container import ShapeTuple
from irlab.runtime.ndarray import Device, array, cpu
from irlab.runtime.packed_func import PackedFunc
from irlab.runtime.registry import get_global_func
from irlab.runtime.relax_vm.builtin import VMClosure, read_if_cond
from irlab.runtime.relax_vm.bytecode import (ArgKind, Call, Goto, If, Ret, SpecialReg,
                                             VMFuncKind)
from irlab.runtime.relax_vm.executable import VMExecutable
from irlab.runtime.relax_vm.profiling import ProfileReport


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
        self._decoded_code: dict = {}

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
        return PackedFunc(lambda *args: self._invoke(index, [_convert(a) for a in args]), name)

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

    # -- the interpreter ---------------------------------------------------------------------
    # Bytecode is decoded once per function into tuples: an argument becomes (True, register)
    # or (False, value) with constants, immediates, the VM and function values resolved.
    def _decoded(self, name):
        code = self._decoded_code.get(name)
        if code is None:
            code = self._decoded_code[name] = [self._decode(i) for i in self.module.code[name]]
        return code

    def _decode(self, instr):
        if type(instr) is Call:
            dst = instr.dst.value
            return (_CALL, instr.func_idx, tuple(self._decode_arg(a) for a in instr.args),
                    None if dst == SpecialReg.VOID_ARG else dst)
        if type(instr) is Ret:
            return (_RET, self._decode_arg(instr.result))
        if type(instr) is Goto:
            return (_GOTO, instr.offset)
        if type(instr) is If:
            return (_IF, self._decode_arg(instr.cond), instr.false_offset)
        raise VMError(f"unknown instruction {instr!r}")

    def _decode_arg(self, arg):
        kind = arg.kind
        if kind == ArgKind.REGISTER:
            if arg.value == SpecialReg.VM_STATE:
                return (False, self)
            if arg.value == SpecialReg.VOID_ARG:
                return (False, None)
            return (True, arg.value)
        if kind == ArgKind.IMMEDIATE:
            return (False, arg.value)
        if kind == ArgKind.CONST_IDX:
            return (False, self.module.constants[arg.value])
        return (False, self._function_value(arg.value))

    def _invoke(self, index, args):
        info = self.module.func_table[index]
        if info.kind != VMFuncKind.VM_FUNC:
            return self._callees[index](*args)
        if len(args) != info.num_args:
            names = ", ".join(info.param_names) or f"{info.num_args} arguments"
            raise VMError(f"{info.name} takes {info.num_args} arguments ({names}), "
                          f"got {len(args)}")
        registers = list(args) + [None] * (info.register_file_size - len(args))
        code = self._decoded(info.name)
        callees = self._callees
        observed = self._profile is not None or self._instrument is not None
        pc = 0
        try:
            while True:
                instr = code[pc]
                op = instr[0]
                if op is _CALL:
                    values = [registers[v] if is_reg else v for is_reg, v in instr[2]]
                    callee = callees[instr[1]]
                    if callee is None or observed:
                        result = self._call(info.name, pc, instr[1], values)
                    else:
                        result = callee(*values)
                    if instr[3] is not None:
                        registers[instr[3]] = result
                    pc += 1
                elif op is _RET:
                    is_reg, value = instr[1]
                    return registers[value] if is_reg else value
                elif op is _GOTO:
                    pc += instr[1]
                else:
                    is_reg, value = instr[1]
                    cond = registers[value] if is_reg else value
                    pc += 1 if read_if_cond(cond) else instr[2]
        except IrlabError:
            raise
        except Exception as err:
            callee = self.module.func_table[code[pc][1]].name if code[pc][0] is _CALL else "?"
            raise VMError(f"{info.name}, instruction {pc} (call {callee}): "
                          f"{type(err).__name__}: {err}") from err

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
        result = callee(*values) if callee is not None else self._invoke(index, values)
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


_CALL, _RET, _GOTO, _IF = "call", "ret", "goto", "if"

__all__ = ["VirtualMachine", "VMInstrumentReturnKind"]
