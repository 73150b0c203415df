"""Relax: TVM Unity's graph IR (dataflow blocks, symbolic shapes, call_tir into TIR, a VM).

``from irlab import relax`` mirrors ``tvm.relax`` as in TVM v0.13-v0.20 and the MLC course.
"""

# --- IR, StructInfo, BlockBuilder, ops (relax-ir) ---


# --- VM: ExecBuilder, Executable, VirtualMachine, build (relax-vm) ---
from irlab.relax.exec_builder import ExecBuilder
from irlab.runtime.relax_vm import VirtualMachine, VMExecutable as Executable
