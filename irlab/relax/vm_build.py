"""``relax.build``: a Relax IRModule -> a VM executable with its kernel library.

The pipeline (``default_build``) lowers the Relax functions; the PrimFuncs of the module are
compiled together by ``irlab.build`` (TIR -> LLVM) into one library, which the executable
imports; the Relax functions become bytecode (``VMCodeGen``).
"""

from __future__ import annotations

from irlab.build_module import build as tir_build
from irlab.errors import IrlabError
from irlab.ir.module import IRModule
from irlab.relax.backend.vm_codegen import vm_codegen
from irlab.relax.pipeline import get_pipeline
from irlab.runtime.relax_vm import VMExecutable
from irlab.transform import Pass

Executable = VMExecutable


def build(mod: IRModule, target=None, params=None, pipeline="default_build",
          exec_mode="bytecode", *, system_lib=None) -> VMExecutable:
    """Compile ``mod`` for ``target`` (default ``"llvm"``); run it with
    ``relax.VirtualMachine(ex, tvm.cpu())``."""
    if not isinstance(mod, IRModule):
        raise IrlabError(f"relax.build takes an IRModule, got {type(mod).__name__}")
    if exec_mode != "bytecode":
        raise IrlabError(f"relax.build: exec_mode {exec_mode!r} is not supported (only "
                         f"'bytecode')")
    if params:
        raise IrlabError("relax.build: params are not supported yet; bind them into the "
                         "module as constants first")
    if pipeline is not None:
        pipeline = get_pipeline(pipeline) if isinstance(pipeline, str) else pipeline
        if not isinstance(pipeline, Pass):
            raise IrlabError(f"relax.build: pipeline must be a name or a Pass, got "
                             f"{type(pipeline).__name__}")
        mod = pipeline(mod)
    executable = vm_codegen(mod).get()
    kernels = {gv: f for gv, f in mod.functions.items() if type(f).__name__ == "PrimFunc"}
    if kernels:
        executable.import_module(tir_build(IRModule(kernels), target or "llvm"))
    return executable


__all__ = ["build", "Executable"]
