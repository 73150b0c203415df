"""``relay.ext.ccompiler``: TVM's reference external codegen. Each partitioned function
becomes a C function (elementwise loops; composite regions inline) in a ``CSourceModule``,
compiled by the system C compiler when ``relay.build`` builds the library."""

from __future__ import annotations

from irlab.relay.backend.contrib.codegen_c import CodegenC, CSourceModuleCodegenBase


class CCompilerCodegen(CSourceModuleCodegenBase):
    """The ``ccompiler`` external codegen (TVM's ``CSourceCodegen``)."""

    compiler = "ccompiler"
    codegen_class = CodegenC


CCompilerCodegen.register(override=False)

__all__ = ["CCompilerCodegen"]
