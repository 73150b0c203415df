"""User code generators (seed 000's ``tvm.codegen``): ``build_module.CodeGenBase`` and a
complete example, ``numpy_codegen.NumpyCodeGen`` (TIR to runnable Python/numpy source)."""

from irlab.codegen import build_module
from irlab.codegen.build_module import CodeGenBase

__all__ = ["build_module", "CodeGenBase"]
