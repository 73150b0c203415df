"""``relay.ext.dnnl``: the oneDNN external codegen (C calling oneDNN's primitives, linked
against ``libdnnl``), and where oneDNN is found."""

from irlab.relay.backend.contrib.dnnl.codegen import DnnlCodegen, DnnlModuleCodegen
from irlab.relay.backend.contrib.dnnl.library import DnnlLibrary, find_dnnl, missing_reason

__all__ = ["DnnlCodegen", "DnnlModuleCodegen", "DnnlLibrary", "find_dnnl", "missing_reason"]
