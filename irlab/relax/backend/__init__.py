"""Relax backends (``tvm.relax.backend``): the VM code generator."""

from irlab.relax.backend.vm_codegen import vm_codegen

__all__ = ["vm_codegen"]
