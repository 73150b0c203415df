"""The Relax VM's bytecode: instruction arguments, the four instructions and function records.

A VM function is a list of instructions over a register file. ``Call`` runs a function from the
executable's function table (a packed function, or another VM function) on its arguments and
writes the result to a register; ``Ret`` returns a register; ``Goto`` jumps by an offset; ``If``
falls through when its condition holds and jumps by ``false_offset`` otherwise.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ArgKind(enum.IntEnum):
    """What an instruction argument's value means."""

    REGISTER = 0
    IMMEDIATE = 1
    CONST_IDX = 2
    FUNC_IDX = 3


class SpecialReg(enum.IntEnum):
    """Registers with a fixed meaning (TVM's magic numbers): no destination, the VM itself."""

    VOID_ARG = (1 << 54) + 0
    VM_STATE = (1 << 54) + 1


class VMFuncKind(enum.IntEnum):
    """A function-table entry is a packed function (kernel or builtin) or VM bytecode."""

    PACKED_FUNC = 0
    VM_FUNC = 1


@dataclass(frozen=True, slots=True)
class Arg:
    """One instruction argument: a register, an immediate integer, a constant-pool index or a
    function-table index."""

    kind: ArgKind
    value: int

    @property
    def is_register(self) -> bool:
        return self.kind == ArgKind.REGISTER

    def text(self, func_names=None, constants=None) -> str:
        """The argument as ``as_text`` prints it (``%2``, ``i-3``, ``c[0]``, ``f[main]``)."""
        if self.kind == ArgKind.REGISTER:
            special = {SpecialReg.VOID_ARG: "%void", SpecialReg.VM_STATE: "%vm"}
            return special.get(self.value, f"%{self.value}")
        if self.kind == ArgKind.IMMEDIATE:
            return f"i{self.value}"
        if self.kind == ArgKind.CONST_IDX:
            return f"c[{self.value}]"
        name = func_names[self.value] if func_names else self.value
        return f"f[{name}]"

    def python(self) -> str:
        """The ``ExecBuilder`` expression that makes this argument."""
        if self.kind == ArgKind.REGISTER:
            if self.value == SpecialReg.VOID_ARG:
                return "ib.void_arg()"
            if self.value == SpecialReg.VM_STATE:
                return "ib.vm_state()"
            return f"ib.r({self.value})"
        if self.kind == ArgKind.IMMEDIATE:
            return f"ib.imm({self.value})"
        if self.kind == ArgKind.CONST_IDX:
            return f"ib.c({self.value})"
        return f"ib.f({self.value!r})"

    def __repr__(self):
        return self.text()


@dataclass(frozen=True, slots=True)
class Call:
    """``dst = func_table[func_idx](*args)``; ``dst`` may be ``%void`` (result dropped)."""

    func_idx: int
    args: tuple
    dst: Arg

    def registers_read(self):
        return [a.value for a in self.args if a.is_register]


@dataclass(frozen=True, slots=True)
class Ret:
    """Return the value of register ``result``."""

    result: Arg

    def registers_read(self):
        return [self.result.value]


@dataclass(frozen=True, slots=True)
class Goto:
    """Jump to ``pc + offset``."""

    offset: int

    def registers_read(self):
        return []


@dataclass(frozen=True, slots=True)
class If:
    """Fall through to ``pc + 1`` when register ``cond`` is true, else jump to
    ``pc + false_offset``."""

    cond: Arg
    false_offset: int

    def registers_read(self):
        return [self.cond.value]


@dataclass(frozen=True, slots=True)
class VMFuncInfo:
    """A function-table entry: its kind, name, and (for bytecode) arity, parameter names and
    register-file size."""

    kind: VMFuncKind
    name: str
    num_args: int = 0
    register_file_size: int = 0
    param_names: tuple = ()


def is_special(register: int) -> bool:
    return register >= SpecialReg.VOID_ARG


__all__ = ["ArgKind", "SpecialReg", "VMFuncKind", "Arg", "Call", "Ret", "Goto", "If",
           "VMFuncInfo", "is_special"]
