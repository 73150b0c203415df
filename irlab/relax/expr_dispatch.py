"""Which method visits which Relax node (TVM's ``visit_<kind>_`` names) and the cached
lookup every Relax walker dispatches with: the functors, the normalizer, the printer."""

from __future__ import annotations

from irlab.errors import DiagnosticError
from irlab.ir.expr import GlobalVar
from irlab.ir.functor import class_method_table, mro_method_name
from irlab.ir.op import Op
from irlab.relax import expr as rx

# node class -> the method visiting it; a subclass of a node class uses its base's entry
VISIT_METHOD = {
    rx.Constant: "visit_constant_", rx.Tuple: "visit_tuple_", rx.Var: "visit_var_",
    rx.DataflowVar: "visit_dataflow_var_", rx.ShapeExpr: "visit_shape_expr_",
    rx.ExternFunc: "visit_extern_func_", GlobalVar: "visit_global_var_",
    rx.Function: "visit_function_", rx.Call: "visit_call_", rx.SeqExpr: "visit_seq_expr_",
    rx.If: "visit_if_", Op: "visit_op_", rx.TupleGetItem: "visit_tuple_getitem_",
    rx.PrimValue: "visit_prim_value_", rx.StringImm: "visit_string_imm_",
    rx.DataTypeImm: "visit_data_type_imm_",
}
_NAME_OF = mro_method_name(VISIT_METHOD)


def visit_method(visitor_cls, node_cls):
    """The ``visit_<kind>_`` function ``visitor_cls`` handles ``node_cls`` with (found through
    the node class's bases), or None: looked up once per pair and cached on the visitor class
    (``ir.functor.MethodTable``, the dispatch of Relay's and TIR's walkers too)."""
    return class_method_table(visitor_cls, _NAME_OF, "_dispatch_table")[node_cls]


def method_of(visitor_cls, node, what="visit"):
    """``visit_method`` for the node ``node``; a clear error when it is no Relax expression."""
    method = visit_method(visitor_cls, type(node))
    if method is None:
        raise DiagnosticError(f"cannot {what} a {type(node).__name__}: not a Relax expression",
                              node)
    return method
