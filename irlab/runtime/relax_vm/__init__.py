"""The Relax virtual machine (TVM's ``runtime.relax_vm``): bytecode, executable, builtins, VM."""

from irlab.runtime.relax_vm.bytecode import (Arg, ArgKind, Call, Goto, If, Ret, SpecialReg,
                                             VMFuncInfo, VMFuncKind)
from irlab.runtime.relax_vm.executable import VMExecutable, load_archive, ARCHIVE_KIND
from irlab.runtime.relax_vm.memory import Storage
from irlab.runtime.relax_vm.builtin import MatchShapeCode, MakeShapeCode, VMClosure
from irlab.runtime.relax_vm.profiling import ProfileReport
from irlab.runtime.relax_vm.vm import VirtualMachine, VMInstrumentReturnKind
from irlab.runtime.registry import register_func as _register_func

_register_func(f"runtime.module.load_archive.{ARCHIVE_KIND}", load_archive, override=True)

__all__ = ["Arg", "ArgKind", "Call", "Goto", "If", "Ret", "SpecialReg", "VMFuncInfo",
           "VMFuncKind", "VMExecutable", "Storage", "MatchShapeCode", "MakeShapeCode",
           "VMClosure", "ProfileReport", "VirtualMachine", "VMInstrumentReturnKind"]
