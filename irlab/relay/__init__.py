"""Relay: the graph-level functional IR (expressions, ops, type inference, text format)."""

from irlab.ir.type import (TensorType, TupleType, FuncType, IncompleteType, PrimType,
                           scalar_type, TypeVar, GlobalTypeVar, TypeCall, TypeKind,
                           RelayRefType)
from irlab.ir.expr import GlobalVar
from irlab.ir.module import IRModule
from irlab.relay.expr import (Expr, Var, Constant, Call, Tuple, TupleGetItem, Let, If,
                              TupleWrapper, var, const, bind, RefCreate, RefRead, RefWrite)
from irlab.relay.adt import (Constructor, TypeData, Pattern, PatternWildcard, PatternVar,
                             PatternConstructor, PatternTuple, Clause, Match)
from irlab.relay.function import Function
from irlab.relay import op
from irlab.relay.op import Op, OpPattern
from irlab.relay.op.tensor import *  # noqa: F401,F403 - relay.add, relay.exp, ...
from irlab.relay.op.transform import *  # noqa: F401,F403 - relay.reshape, ...
from irlab.relay.op.reduce import *  # noqa: F401,F403 - relay.sum, ...
from irlab.relay.op import nn, image, annotation
from irlab.relay import analysis, expr_functor, transform
from irlab.relay.expr_functor import ExprFunctor, ExprVisitor, ExprMutator
from irlab.relay.printer import astext, pretty_print
from irlab.relay.parser import fromtext, parse_expr, parse
from irlab.relay.build_module import create_executor, bind_params_by_name, build
from irlab.relay import build_module
from irlab.relay.backend import contrib as _byoc  # noqa: F401 -- registers relay.ext.ccompiler
from irlab.relay.pipeline import optimize
from irlab.relay import frontend
from irlab.relay import qnn
from irlab.relay import dataflow_pattern
from irlab.relay.scope_builder import ScopeBuilder


RefType = RelayRefType
from irlab.tir.expr import Any  # noqa: E402 -- relay.Any(): a dynamic dimension
