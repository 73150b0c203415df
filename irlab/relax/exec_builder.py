"""``relax.ExecBuilder``: emit Relax VM bytecode by hand, function by function (what VMCodeGen
uses, and how TVM's VM tests write programs)::

    ib = relax.ExecBuilder()
    with ib.function("func0", num_inputs=2):
        ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    vm = relax.VirtualMachine(ib.get(), tvm.cpu())
"""

from __future__ import annotations

import contextlib

import numpy as np

from irlab.errors import IrlabError
from irlab.runtime.container import ShapeTuple
from irlab.runtime.dtype import DataType
from irlab.runtime.ndarray import Device, NDArray, array
from irlab.runtime.relax_vm import (Arg, ArgKind, Call, Goto, If, Ret, SpecialReg, VMExecutable,
                                    VMFuncInfo, VMFuncKind)
from irlab.runtime.relax_vm.bytecode import is_special


class ExecBuilder:
    """Builds a ``VMExecutable``: a function table, bytecode per VM function and a constant
    pool (equal constants are stored once)."""

    def __init__(self):
        self._table: list = []  # VMFuncInfo, in declaration order
        self._index: dict = {}
        self._code: dict = {}
        self._constants: list = []
        self._const_index: dict = {}
        self._current: str | None = None

    # -- arguments ---------------------------------------------------------------------------
    def r(self, idx: int) -> Arg:
        """Register ``idx`` as an argument or destination."""
        return Arg(ArgKind.REGISTER, int(idx))

    def imm(self, value: int) -> Arg:
        """An immediate integer argument."""
        return Arg(ArgKind.IMMEDIATE, int(value))

    def c(self, idx: int) -> Arg:
        """Constant ``idx`` of the pool."""
        return Arg(ArgKind.CONST_IDX, int(idx))

    def f(self, name: str) -> Arg:
        """Function ``name`` as a value (declared as a packed function if not yet known)."""
        return Arg(ArgKind.FUNC_IDX, self._declare(name, VMFuncKind.PACKED_FUNC))

    def void_arg(self) -> Arg:
        return self.r(SpecialReg.VOID_ARG)

    def vm_state(self) -> Arg:
        """The VM itself (builtins that allocate take it first)."""
        return self.r(SpecialReg.VM_STATE)

    def convert_constant(self, value) -> Arg:
        """``value`` in the constant pool (stored once per distinct value)."""
        value, key = _constant_key(value)
        index = self._const_index.get(key)
        if index is None:
            index = self._const_index[key] = len(self._constants)
            self._constants.append(value)
        return self.c(index)

    # -- functions ---------------------------------------------------------------------------
    def declare_function(self, func_name: str, kind=VMFuncKind.PACKED_FUNC) -> None:
        self._declare(func_name, VMFuncKind(kind))

    def _declare(self, name, kind) -> int:
        if not isinstance(name, str) or not name:
            raise IrlabError(f"ExecBuilder: a function name must be a string, got {name!r}")
        index = self._index.get(name)
        if index is None:
            index = self._index[name] = len(self._table)
            self._table.append(VMFuncInfo(kind, name))
        elif kind == VMFuncKind.VM_FUNC and self._table[index].kind != kind:
            self._table[index] = VMFuncInfo(kind, name)
        return index

    @contextlib.contextmanager
    def function(self, func_name: str, num_inputs: int = 0, param_names=None):
        """Emit the body of VM function ``func_name`` inside the ``with`` block."""
        if self._current is not None:
            raise IrlabError(f"ExecBuilder: function {func_name!r} begins inside "
                             f"{self._current!r}; VM functions do not nest")
        if func_name in self._code:
            raise IrlabError(f"ExecBuilder: function {func_name!r} is already defined")
        names = tuple(param_names or ())
        if names and len(names) != num_inputs:
            raise IrlabError(f"ExecBuilder: {func_name} has {num_inputs} inputs but "
                             f"{len(names)} parameter names")
        declared = self._index.get(func_name)
        before = self._table[declared] if declared is not None else None
        table_size = len(self._table)
        index = self._declare(func_name, VMFuncKind.VM_FUNC)
        self._table[index] = VMFuncInfo(VMFuncKind.VM_FUNC, func_name, int(num_inputs), 0,
                                        names)
        self._code[func_name] = []
        self._current = func_name
        try:
            yield self
        except BaseException:
            # a failed body leaves no half-written function behind
            del self._code[func_name]
            for info in self._table[table_size:]:  # names first declared by this body
                del self._index[info.name]
            del self._table[table_size:]
            if before is not None:
                self._table[index] = before
            raise
        finally:
            self._current = None

    def _emit(self, instr):
        if self._current is None:
            raise IrlabError("ExecBuilder: emit inside `with ib.function(...)`")
        self._code[self._current].append(instr)

    def emit_call(self, name: str, args=None, dst=None) -> None:
        """``dst = name(*args)``; arguments that are not ``Arg``s (arrays, shapes, dtypes,
        strings, numbers) go to the constant pool."""
        dst = self.void_arg() if dst is None else dst
        if not isinstance(dst, Arg) or not dst.is_register:
            raise IrlabError(f"emit_call {name}: dst must be a register (ib.r(k)), got {dst!r}")
        converted = tuple(a if isinstance(a, Arg) else self.convert_constant(a)
                          for a in (args or ()))
        self._emit(Call(self._declare(name, VMFuncKind.PACKED_FUNC), converted, dst))

    def emit_ret(self, result) -> None:
        self._emit(Ret(_register(result, "emit_ret")))

    def emit_goto(self, pc_offset: int) -> None:
        """Jump by ``pc_offset`` instructions (0 would loop forever)."""
        if int(pc_offset) == 0:
            raise IrlabError("emit_goto: an offset of 0 jumps to itself forever")
        self._emit(Goto(int(pc_offset)))

    def emit_if(self, cond, false_offset: int) -> None:
        """Fall through when register ``cond`` is true, else jump by ``false_offset``."""
        self._emit(If(_register(cond, "emit_if"), int(false_offset)))

    def num_instructions(self) -> int:
        """How many instructions the open function has (the pc of the next one)."""
        if self._current is None:
            raise IrlabError("ExecBuilder: no function is open")
        return len(self._code[self._current])

    def set_jump_offset(self, pc: int, offset: int) -> None:
        """Set the offset of the Goto or If at ``pc`` of the open function (code generators
        emit a jump before they know how far it goes)."""
        code = self._code[self._current] if self._current is not None else None
        instr = code[pc] if code is not None and 0 <= pc < len(code) else None
        if isinstance(instr, Goto):
            code[pc] = Goto(int(offset))
        elif isinstance(instr, If):
            code[pc] = If(instr.cond, int(offset))
        else:
            raise IrlabError(f"ExecBuilder: instruction {pc} is not a Goto or an If")

    # -- result ------------------------------------------------------------------------------
    def get(self) -> VMExecutable:
        """The executable: each function checked (registers defined before use, jumps inside
        the function, calls of VM functions with the right arity) and its registers
        renumbered densely."""
        if self._current is not None:
            raise IrlabError(f"ExecBuilder.get: function {self._current!r} is still open")
        table, code = list(self._table), {}
        for name, instrs in self._code.items():
            info = table[self._index[name]]
            self._check(info, instrs)
            code[name], size = _formalize(info.num_args, instrs)
            table[self._index[name]] = VMFuncInfo(info.kind, name, info.num_args, size,
                                                  info.param_names)
        return VMExecutable(table, code, self._constants)

    def _check(self, info, instrs):
        where = f"VM function {info.name!r}"
        if not instrs or not isinstance(instrs[-1], (Ret, Goto)):
            raise IrlabError(f"{where} must end with emit_ret (or a goto)")
        defined = set(range(info.num_args))
        for pc, instr in enumerate(instrs):
            for reg in instr.registers_read():
                if not is_special(reg) and reg not in defined:
                    raise IrlabError(f"{where}, instruction {pc}: register %{reg} is read "
                                     f"before it is written (inputs are %0..%"
                                     f"{info.num_args - 1})")
            if isinstance(instr, Call):
                self._check_call(where, pc, instr)
                if not is_special(instr.dst.value):
                    defined.add(instr.dst.value)
            if not isinstance(instr, (Goto, If)):
                continue
            offset = instr.offset if isinstance(instr, Goto) else instr.false_offset
            if not 0 <= pc + offset < len(instrs):
                raise IrlabError(f"{where}, instruction {pc}: jump by {offset} leaves the "
                                 f"function ({len(instrs)} instructions)")

    def _check_call(self, where, pc, instr):
        callee = self._table[instr.func_idx]
        if callee.name in self._code:
            arity = self._table[self._index[callee.name]].num_args
            if arity != len(instr.args):
                raise IrlabError(f"{where}, instruction {pc}: {callee.name} takes {arity} "
                                 f"arguments, got {len(instr.args)}")
        for arg in instr.args:
            if arg.kind == ArgKind.CONST_IDX and not 0 <= arg.value < len(self._constants):
                raise IrlabError(f"{where}, instruction {pc}: no constant c[{arg.value}]")
            if arg.kind == ArgKind.FUNC_IDX and not 0 <= arg.value < len(self._table):
                raise IrlabError(f"{where}, instruction {pc}: no function f[{arg.value}]")

    def __repr__(self):
        return (f"ExecBuilder(functions={list(self._code)}, constants={len(self._constants)})")


def _register(arg, what) -> Arg:
    if not isinstance(arg, Arg) or not arg.is_register:
        raise IrlabError(f"{what}: expected a register (ib.r(k)), got {arg!r}")
    return arg


def _formalize(num_args, instrs):
    """Registers renumbered in order of first use (inputs keep 0..num_args-1), and the size
    of the register file."""
    mapping = {k: k for k in range(num_args)}

    def remap(arg):
        if not arg.is_register or is_special(arg.value):
            return arg
        if arg.value not in mapping:
            mapping[arg.value] = len(mapping)
        return Arg(ArgKind.REGISTER, mapping[arg.value])

    out = []
    for instr in instrs:
        if isinstance(instr, Call):
            out.append(Call(instr.func_idx, tuple(remap(a) for a in instr.args),
                            remap(instr.dst)))
        elif isinstance(instr, Ret):
            out.append(Ret(remap(instr.result)))
        elif isinstance(instr, If):
            out.append(If(remap(instr.cond), instr.false_offset))
        else:
            out.append(instr)
    return out, max(len(mapping), num_args)


def _constant_key(value):
    """(the value as stored, a hashable key equal for equal constants)."""
    if isinstance(value, NDArray):
        data = value.numpy()
        return value, ("ndarray", value.dtype, data.shape, data.tobytes())
    if isinstance(value, np.ndarray):
        return _constant_key(array(value))
    if isinstance(value, DataType):
        return value, ("dtype", str(value))
    if isinstance(value, ShapeTuple):
        return value, ("shape", tuple(value))
    if isinstance(value, (tuple, list)):
        if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
            return _constant_key(ShapeTuple(value))
        items = [_constant_key(v) for v in value]
        return tuple(v for v, _ in items), ("tuple", tuple(k for _, k in items))
    if isinstance(value, Device):
        return value, ("device", value.device_type, value.device_id)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value, (type(value).__name__, value)
    if isinstance(value, np.generic):
        return _constant_key(value.item())
    raise IrlabError(f"ExecBuilder: cannot make a constant of {type(value).__name__} "
                     f"({value!r})")


__all__ = ["ExecBuilder"]
