"""Relax passes (``tvm.relax.transform``): each an ordinary module pass, so instruments and the
PassStepper see them."""

# --- graph-level passes: LegalizeOps, FuseOps, FuseTIR, DCE, CanonicalizeBindings, FoldConstant ---
from irlab.relax.transform.legalize_ops import LegalizeOps


# --- lowering to the VM: ToNonDataflow, CallTIRRewrite, StaticPlanBlockMemory, VMShapeLower, ... ---
