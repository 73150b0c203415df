"""External codegens for BYOC, each registered as the global function ``relay.ext.<name>``
(``ccompiler``: C source compiled by the system compiler; ``dnnl``: C calling oneDNN), and
their base classes."""

from irlab.relay.backend.contrib.codegen_c import (CodegenC, CSourceModuleCodegenBase, Output,
                                                   broadcast_index, c_literal, c_type)
from irlab.relay.backend.contrib import ccompiler, dnnl

__all__ = ["CodegenC", "CSourceModuleCodegenBase", "Output", "broadcast_index", "c_literal",
           "c_type", "ccompiler", "dnnl"]
