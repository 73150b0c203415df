"""Relax passes (``tvm.relax.transform``): each an ordinary module pass, so instruments and the
PassStepper see them."""

# --- graph-level passes: LegalizeOps, FuseOps, FuseTIR, DCE, CanonicalizeBindings, FoldConstant ---
from irlab.relax.transform.legalize_ops import LegalizeOps
from irlab.relax.transform.annotate_tir_op_pattern import AnnotateTIROpPattern
from irlab.relax.transform.dead_code_elimination import DeadCodeElimination
from irlab.relax.transform.canonicalize_bindings import CanonicalizeBindings
from irlab.relax.transform.fold_constant import FoldConstant
from irlab.relax.transform.fuse_ops import FuseOps
from irlab.relax.transform.fuse_tir import FuseTIR
from irlab.relax.transform.default_cpu_schedule import DefaultCPUSchedule
from irlab.relax.transform.bind_params import BindParams
from irlab.relax.transform.normalize import Normalize


# --- lowering to the VM: ToNonDataflow, CallTIRRewrite, StaticPlanBlockMemory, VMShapeLower, ... ---
from irlab.relax.transform.to_non_dataflow import ToNonDataflow
from irlab.relax.transform.remove_purity_checking import RemovePurityChecking
from irlab.relax.transform.call_tir_rewrite import CallTIRRewrite
from irlab.relax.transform.static_plan_block_memory import StaticPlanBlockMemory
from irlab.relax.transform.lower_alloc_tensor import LowerAllocTensor
from irlab.relax.transform.vm_builtin_lower import VMBuiltinLower
from irlab.relax.transform.vm_shape_lower import VMShapeLower
from irlab.relax.transform.attach_global_symbol import AttachGlobalSymbol
