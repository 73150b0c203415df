"""TIR: the loop-level IR (expressions, statements, buffers, PrimFunc) and its interpreter."""

from irlab.tir.expr import (PrimExpr, Var, SizeVar, IntImm, FloatImm, StringImm, Cast, Add, Sub,
                            Mul, Div, Mod, FloorDiv, FloorMod, Min, Max, EQ, NE, LT, LE, GT, GE,
                            And, Or, Not, Select, BufferLoad, Ramp, Broadcast, Shuffle, Let, Call,
                            EqualOp, NotEqualOp, convert, Any)
from irlab.tir.buffer import Buffer, BufferRegion, MatchBufferRegion, Range, decl_buffer
from irlab.tir.stmt import (Stmt, BufferStore, ForKind, IterVar, For, While, IfThenElse, SeqStmt,
                            LetStmt, Allocate, AllocateConst, DeclBuffer, AttrStmt, AssertStmt,
                            Evaluate, Block, BlockRealize, stmt_seq)
from irlab.tir.function import PrimFunc, BufferMap
from irlab.tir import op as _op
from irlab.tir.op import (const, cast, abs, power, max_value, min_value, if_then_else, all, any,
                          call_intrin, call_extern, call_packed, truncdiv, truncmod, floordiv,
                          floormod, indexdiv, indexmod, div, min, max, infinity, logical_and,
                          logical_or, logical_not, register_intrinsic)
from irlab.tir.functor import (ExprFunctor, ExprVisitor, ExprMutator, StmtFunctor,
                               StmtExprVisitor, StmtExprMutator, post_order_visit, substitute)
from irlab.tir.interpreter import TIRInterpreter, run
from irlab.tir.schedule import Schedule, ScheduleError

# ``tir.exp``, ``tir.atan2``, ``tir.popcount``...: the builders of the intrinsic records
globals().update(_op.intrinsic_builders())


def __getattr__(name):
    """``tir.<name>`` of an intrinsic registered after ``irlab.tir`` was imported."""
    return _op.__getattr__(name)
