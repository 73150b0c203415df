"""Relax: TVM Unity's graph IR (dataflow blocks, symbolic shapes, call_tir into TIR, a VM).

``from irlab import relax`` mirrors ``tvm.relax`` as in TVM v0.13-v0.20 and the MLC course.
"""

# --- IR, StructInfo, BlockBuilder, ops (relax-ir) ---
from irlab.ir.expr import GlobalVar
from irlab.ir.span import Span
from irlab.relax.struct_info import (StructInfo, ObjectStructInfo, PrimStructInfo,
                                     ShapeStructInfo, TensorStructInfo, TupleStructInfo,
                                     FuncStructInfo)
from irlab.relax.expr import (Expr, Var, DataflowVar, Call, Tuple, TupleGetItem, ShapeExpr,
                              PrimValue, StringImm, DataTypeImm, Constant, If, SeqExpr, Binding,
                              VarBinding, MatchCast, BindingBlock, DataflowBlock, Function,
                              ExternFunc, const, extern, get_shape_of)
from irlab.relax.block_builder import BlockBuilder
from irlab.relax.op.base import call_tir, call_dps_packed, call_pure_packed
from irlab.relax.expr_functor import ExprFunctor, PyExprVisitor, PyExprMutator
from irlab.relax import op, struct_info, expr, block_builder, text, expr_functor, analysis
from irlab.relax import transform

# --- TVMScript: @R.function parser and printer (relax-script) ---
from irlab.relax import script


# --- VM: ExecBuilder, Executable, VirtualMachine, build (relax-vm) ---
from irlab.relax.exec_builder import ExecBuilder
from irlab.runtime.relax_vm import VirtualMachine, VMInstrumentReturnKind
from irlab.relax.vm_build import build, Executable
from irlab.relax.pipeline import get_pipeline
from irlab.relax import transform, backend, testing, frontend
