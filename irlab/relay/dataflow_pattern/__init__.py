"""The Relay dataflow pattern language (TVM's ``relay.dataflow_pattern``).

Describe a subgraph, then match, rewrite or partition it::

    from irlab.relay.dataflow_pattern import is_op, wildcard, is_constant, rewrite

    conv = is_op("nn.conv2d")(wildcard(), is_constant())
    pat = is_op("nn.relu")(is_op("nn.bias_add")(conv, wildcard()))
    pat.match(expr)                                  # True / False
    pat.partition(expr, {"Composite": "conv_bias_relu"})

Modules: ``pattern`` (the pattern nodes and ``is_op``/``wildcard``/... constructors),
``matcher`` (matching), ``graph`` (users and post-dominators of an expression), ``rewrite``
(grouping matches, ``rewrite`` with ``DFPatternCallback``, ``partition``) and ``post_order``
(the post-order rewriter the passes share).
"""

from irlab.relay.dataflow_pattern.pattern import (
    AltPattern, AttrPattern, CallPattern, ConstantPattern, DataTypePattern, DFPattern,
    DominatorPattern, ExprPattern, FunctionPattern, IfPattern, LetPattern, ShapePattern,
    TupleGetItemPattern, TuplePattern, TypePattern, VarPattern, WildcardPattern, dominates,
    has_attr, has_dtype, has_shape, has_type, is_constant, is_expr, is_if, is_let, is_op,
    is_tuple, is_tuple_get_item, is_var, wildcard)
from irlab.relay.dataflow_pattern.matcher import DFPatternMatcher, match
from irlab.relay.dataflow_pattern.rewrite import DFPatternCallback, partition, rewrite

__all__ = [
    "DFPattern", "ExprPattern", "VarPattern", "ConstantPattern", "WildcardPattern",
    "CallPattern", "FunctionPattern", "TuplePattern", "TupleGetItemPattern", "IfPattern",
    "LetPattern", "AltPattern", "TypePattern", "DataTypePattern", "ShapePattern", "AttrPattern",
    "DominatorPattern", "is_var", "is_constant", "is_expr", "is_op", "is_tuple",
    "is_tuple_get_item", "is_if", "is_let", "wildcard", "has_type", "has_dtype", "has_shape",
    "has_attr", "dominates", "match", "rewrite", "partition", "DFPatternCallback",
    "DFPatternMatcher",
]
