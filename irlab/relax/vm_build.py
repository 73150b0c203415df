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
from irlab.relax.exec_builder import ExecBuilder
from irlab.relax.pipeline import get_pipeline
from irlab.runtime.relax_vm import VMExecutable
from irlab.target import as_target
from irlab.transform import Pass

Executable = VMExecutable


def build(mod: IRModule, target=None, params=None, pipeline="default_build",
          exec_mode="bytecode", *, system_lib=None) -> VMExecutable:
    """Compile ``mod`` for ``target`` (default ``"llvm"``); run it with
    ``relax.VirtualMachine(ex, tvm.cpu())``."""
    if not isinstance(mod, IRModule):
        raise IrlabError(f"relax.build takes an IRModule, got {type(mod).__name__}")
    if params:  # as TVM: bound into main as constants before the pipeline
        from irlab.relax.transform.bind_params import BindParams

        mod = BindParams("main", params)(mod)
    if pipeline is not None:
        pipeline = get_pipeline(pipeline) if isinstance(pipeline, str) else pipeline
        if not isinstance(pipeline, Pass):
            raise IrlabError(f"relax.build: pipeline must be a name or a Pass, got "
                             f"{type(pipeline).__name__}")
        with as_target(target or "llvm"):  # the passes size kernels for the target
            mod = pipeline(mod)
    builder = ExecBuilder()
    kernels = _vmcodegen(builder, mod, exec_mode)
    return _vmlink(builder, target, kernels)


def _vmcodegen(builder: ExecBuilder, mod: IRModule, exec_mode="bytecode") -> IRModule:
    """Emit the Relax functions of a lowered ``mod`` into ``builder``; the PrimFuncs left for
    the kernel library. (TVM's step of ``build``, which its tests call directly.)

    irlab has one execution mode: ``"compiled"`` (TVM turns Relax functions into TIR) runs
    as bytecode too, with the same results."""
    if exec_mode not in ("bytecode", "compiled"):
        raise IrlabError(f"relax.build: unknown exec_mode {exec_mode!r} (bytecode, compiled)")
    vm_codegen(mod, builder)
    return IRModule({gv: f for gv, f in mod.functions.items()
                     if type(f).__name__ == "PrimFunc"})


def _vmlink(builder: ExecBuilder, target=None, tir_mod=None, ext_libs=None, params=None, *,
            system_lib=None) -> VMExecutable:
    """The executable of ``builder``, importing ``tir_mod`` compiled for ``target`` and any
    ``ext_libs``."""
    if params:
        raise IrlabError("relax.build: params are not supported yet")
    executable = builder.get()
    if tir_mod is not None and len(tir_mod):
        executable.import_module(tir_build(tir_mod, target=target or "llvm"))
    for lib in ext_libs or ():
        executable.import_module(lib)
    return executable


__all__ = ["build", "Executable"]
