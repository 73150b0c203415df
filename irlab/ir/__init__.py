"""The IR core shared by every dialect: nodes, types, modules, operators, structural equality."""

from irlab.ir.node import Node
from irlab.runtime.dtype import DataType, parse_dtype, normalize_dtype, to_numpy_dtype
from irlab.ir.span import Span, SourceName
from irlab.ir.type import (Type, PrimType, TensorType, TupleType, FuncType, IncompleteType,
                           scalar_type, type_to_text, TypeVar, GlobalTypeVar, TypeCall,
                           TypeKind, RelayRefType)
from irlab.ir.adt import Constructor, TypeData
from irlab.ir.attrs import (Attrs, DictAttrs, get_attrs_type, make_node,
                            normalize_attr_value)
from irlab.ir.expr import BaseExpr, RelayExpr, GlobalVar
from irlab.ir.op import Op, OpPattern, TOpPattern, register_op
from irlab.ir.module import IRModule
from irlab.ir.structural import (structural_equal, structural_hash, assert_structural_equal)
from irlab.errors import IrlabError, TVMError


__all__ = [
    "Node", "DataType", "parse_dtype", "normalize_dtype", "to_numpy_dtype", "Span", "SourceName",
    "Type", "PrimType", "TensorType", "TupleType", "FuncType", "IncompleteType", "scalar_type",
    "type_to_text", "TypeVar", "GlobalTypeVar", "TypeCall", "TypeKind", "RelayRefType",
    "Constructor", "TypeData", "Attrs", "DictAttrs", "get_attrs_type", "normalize_attr_value",
    "BaseExpr",
    "RelayExpr", "GlobalVar", "Op", "OpPattern", "TOpPattern", "register_op", "IRModule",
    "structural_equal", "structural_hash", "assert_structural_equal", "IrlabError", "TVMError",
]
