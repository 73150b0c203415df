"""A Relax module built once for the explorer's "Lowering" and "Run" tabs: the executable of
``relax.build`` and, per PrimFunc of the lowered module, what ``LoweringExplorer`` shows
(the Relax bindings that call it, its TIR as written or legalized, as scheduled and lowered,
then LLVM IR and assembly from the kernel library).

``RelaxBuild`` quacks like the ``relay.build`` result the lowering explorer takes: ``lowered``
(one ``RelaxKernel`` per kernel), ``get_lib()`` (the kernel library), ``target`` and
``kernel_view`` (the view class, whose first pane is titled "Relax").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from irlab.ir.module import IRModule
from irlab.widgets.lowering_data import KernelView


@dataclass
class RelaxKernel:
    """One PrimFunc of the built module, as ``KernelView`` reads it."""

    name: str
    prim_func: object
    relay_func: str  # the Relax text calling the kernel (the lowering's first level)
    tir_from_te: object = None  # the PrimFunc as the input module (or LegalizeOps) made it
    anchor: object = None


class RelaxKernelView(KernelView):
    """A kernel of a Relax build: the first level is the Relax code calling it."""

    def pane_title(self, pane: str, default: str) -> str:
        return {"relay": "Relax (call sites)", "te": "TIR (input / legalized)"}.get(pane,
                                                                                  default)


def _prim_funcs(mod) -> dict:
    return {gv.name_hint: f for gv, f in mod.functions.items()
            if type(f).__name__ == "PrimFunc"}


def call_sites(mod, name: str) -> str:
    """The lines of ``mod``'s Relax functions that call kernel ``name``, with their function
    headers ("" when no line names it)."""
    lines = mod.script().split("\n")
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    out, header, in_relax = [], None, False
    for i, line in enumerate(lines):
        if line.strip().startswith("def "):
            in_relax = i > 0 and lines[i - 1].strip().startswith("@R.function")
            header = line if in_relax else None
        elif in_relax and pattern.search(line):
            if header is not None:
                out.append(header)
                header = None
            out.append(line)
    return "\n".join(out)


class RelaxBuild:
    """``relax.build`` of ``lowered`` (a module the Relax pipeline already ran on, e.g. a
    ``PassTrace``'s output) or of ``mod`` run through the zero and default_build pipelines."""

    kernel_view = RelaxKernelView

    def __init__(self, mod: IRModule, target="llvm", lowered: IRModule | None = None):
        from irlab import relax
        from irlab.viz.pass_trace import relax_pipeline

        if lowered is None:
            lowered = mod
            for pass_ in relax_pipeline():
                lowered = pass_(lowered)
        # no fallback to an unfused build: an error here is a bug, shown by the explorer
        self.executable = relax.build(lowered, target, pipeline=None)
        self.input = mod
        self.ir_mod = lowered
        self.target = target
        before = _prim_funcs(mod)
        self.lowered = [
            RelaxKernel(name, func, self._sites(name), before.get(name))
            for name, func in _prim_funcs(lowered).items()]

    def _sites(self, name) -> str:
        """Where the input module calls kernel ``name`` (its call_tir), else the lowered one
        (kernels the pipeline made: fused functions, shape functions)."""
        return call_sites(self.input, name) or call_sites(self.ir_mod, name) or \
            f"# no Relax function calls {name} by name"

    def get_lib(self):
        """The kernel library the executable imports (LLVM IR, assembly, lowered TIR)."""
        libs = self.executable.imported_modules
        return libs[0] if libs else self.executable

    def vm(self):
        """A fresh ``relax.VirtualMachine`` of the executable on the CPU."""
        from irlab import relax
        from irlab.runtime.ndarray import cpu

        return relax.VirtualMachine(self.executable, cpu())

    def __repr__(self):
        return f"RelaxBuild({len(self.lowered)} kernels, target={self.target!r})"
