"""``FuseOps`` and its inverse ``DefuseOps`` (TVM's ``src/relay/transforms/fuse_ops.cc`` and
``defuse_ops.cc``), plus the kernel names a fused function gets when lowered.

FuseOps groups operators (see ``graph_partitioner``) and turns each group into a
``Primitive=1`` function called in place. Before::

    fn (%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(16, 16, 3, 3), float32]) {
      %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
      %1 = add(%0, 1f);
      nn.relu(%1)
    }

after ``FuseOps(fuse_opt_level=2)``::

    fn (%x: ..., %w: ...) {
      %2 = fn (%p0: Tensor[(1, 16, 8, 8), float32], %p1: Tensor[(16, 16, 3, 3), float32],
               Primitive=1) {
        %0 = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1]);
        %1 = add(%0, 1f);
        nn.relu(%1)
      };
      %2(%x, %w)
    }

Parameters are named ``p0, p1, ...`` in the order the group's inputs are met in post-order.
Scalar constants of simple dtypes stay inline; other constants become parameters. Functions
already marked ``Primitive`` are left alone. ``DefuseOps`` inlines such calls back.
"""

from __future__ import annotations

import numbers

from irlab.errors import DiagnosticError, IrlabError
from irlab.ir.attrs import DictAttrs
from irlab.ir.op import Op
from irlab.ir.type import TensorType
from irlab.relay.expr import Call, Constant, Tuple, TupleGetItem, Var
from irlab.relay.expr_functor import ExprMutator, post_order
from irlab.relay.function import Function, is_primitive
from irlab.relay.transform.graph_partitioner import (MAX_FUSED_OPS, FusionError,
                                                     GraphPartitioner, IndexedForwardGraph)

_STOP_FUSION = "annotation.stop_fusion"
_MAX_KERNEL_NAME = 80


def _is_external(func) -> bool:
    return func.attrs is not None and "Compiler" in func.attrs


def _is_reshape_op(op) -> bool:
    """Only reshapes its data (TVM's ``TReshapeOp``, set where the op is defined): a fused
    group of such ops is marked ``relay.reshape_only``."""
    return isinstance(op, Op) and bool(op.get_attr("TReshapeOp", False))


def _body_traits(body):
    """``(has_call, reshape_only)`` of a fused body, as TVM's CheckReshapeOnly visitor."""
    has_call = False
    reshape_only = True
    for node in post_order(body):
        if isinstance(node, Call):
            has_call = True
            if not _is_reshape_op(node.op):
                reshape_only = False
        elif isinstance(node, Var) and not isinstance(node.type_annotation, TensorType):
            reshape_only = False
    return has_call, reshape_only


class _GroupInfo:
    """The parameters of one fused function and the outer expressions passed for them."""

    def __init__(self):
        self.params: list[Var] = []
        self.arguments: list = []
        self._by_arg: dict = {}

    def param_for(self, arg, ty) -> Var:
        param = self._by_arg.get(arg)
        if param is None:
            param = Var(f"p{len(self.params)}", ty)
            self._by_arg[arg] = param
            self.params.append(param)
            self.arguments.append(arg)
        return param


class _FuseMutator(ExprMutator):
    """Rewrites a typed expression given the node -> group assignment of the partitioner.

    Children are always visited before their parent (TVM's MixedModeMutator order), which
    fixes the order in which a group's parameters are created.
    """

    def __init__(self, gmap: dict, link_params: bool = False):
        super().__init__()
        self.gmap = gmap
        self.link_params = link_params
        self.ginfo: dict = {}

    def _root_group(self, expr):
        group = self.gmap.get(expr)
        if group is None:
            raise FusionError(f"FuseOps found no group for a {type(expr).__name__} node")
        return group.find_root()

    def _info(self, group) -> _GroupInfo:
        info = self.ginfo.get(group)
        if info is None:
            info = self.ginfo[group] = _GroupInfo()
        return info

    def _new_arguments(self, args, group) -> list:
        """Mutated ``args``; those computed outside ``group`` become its parameters."""
        out = []
        for arg in args:
            new_arg = self.visit(arg)
            arg_group = self.gmap.get(arg)
            # Functions and global vars used as values have no group: pass them in too,
            # so that fused functions stay closed.
            if arg_group is None or arg_group.find_root() is not group:
                # With linked params, constants are embedded in the kernel instead.
                if not (self.link_params and isinstance(new_arg, Constant)):
                    new_arg = self._info(group).param_for(new_arg, arg.checked_type)
            out.append(new_arg)
        return out

    def _make_function(self, group, ret_type, body):
        info = self._info(group)
        has_call, reshape_only = _body_traits(body)
        attrs = {"Primitive": int(has_call)}
        if has_call and reshape_only:
            attrs["relay.reshape_only"] = 1
        func = Function(info.params, body, ret_type, None, DictAttrs(attrs))
        return Call(func, info.arguments)

    def visit_function(self, fn):
        if is_primitive(fn) or _is_external(fn):
            return fn
        return super().visit_function(fn)

    def visit_call(self, call):
        op = call.op
        if not isinstance(op, Op):
            return super().visit_call(call)
        if op.get_attr("TNonComputational", False) and not op.has_attr("FTVMQnnCanonicalize"):
            return super().visit_call(call)
        for arg in call.args:
            self.visit(arg)
        if op.name == _STOP_FUSION:
            return self.visit(call.args[0])
        group = self._root_group(call)
        new_call = Call(op, self._new_arguments(call.args, group), call.attrs, call.type_args,
                        call.span)
        if group.root_ref is call:
            return self._make_function(group, call.checked_type, new_call)
        return new_call

    def visit_tuple(self, tup):
        group = self._root_group(tup)
        if group.root_ref is tup:
            # A tuple never roots a fused function: it stays outside, as the output tuple.
            return super().visit_tuple(tup)
        for field in tup.fields:
            self.visit(field)
        fields = self._new_arguments(tup.fields, group)
        if all(a is b for a, b in zip(fields, tup.fields)):
            return tup
        return Tuple(fields, tup.span)

    def visit_tuple_getitem(self, item):
        self.visit(item.tuple_value)
        group = self._root_group(item)
        new_tuple = self._new_arguments([item.tuple_value], group)[0]
        new_item = TupleGetItem(new_tuple, item.index, item.span)
        if group.root_ref is not item:
            return new_item
        tuple_group = self.gmap.get(item.tuple_value)
        if tuple_group is None or tuple_group.find_root() is not group:
            # Isolated: the tuple comes from an opaque op; leave the projection outside.
            return super().visit_tuple_getitem(item)
        return self._make_function(group, item.checked_type, new_item)


def fuse_expr(expr, opt_level: int = 2, max_fuse_depth: int = MAX_FUSED_OPS,
              link_params: bool = False):
    """Fuse a typed expression or function (what the ``FuseOps`` pass does to each function).

    A function already marked ``Primitive`` is returned unchanged. ``link_params`` keeps
    tensor constants inside the fused functions instead of passing them as parameters.
    """
    if isinstance(expr, Function) and (is_primitive(expr) or _is_external(expr)):
        return expr
    graph = IndexedForwardGraph.create(expr)
    groups = GraphPartitioner(opt_level, max_fuse_depth).partition(graph)
    gmap = {node.ref: group for node, group in zip(graph.post_dfs_order, groups)}
    return _FuseMutator(gmap, link_params).visit(expr)


def _ensure_typed(func, mod):
    """TVM requires typed input (InferType is a required pass); run it when it was not."""
    if func.body.has_checked_type():
        return func
    from irlab.relay.ty_infer import infer_expr

    return infer_expr(func, mod)


def _integer(value, what) -> int:
    inner = getattr(value, "value", value)  # tir.IntImm as given by TVM-style configs
    if isinstance(inner, bool) or not isinstance(inner, numbers.Integral):
        raise IrlabError(f"{what} must be an integer, got {value!r}")
    return int(inner)


def FuseOps(fuse_opt_level=-1):
    """Fuse operators into ``Primitive=1`` functions (function pass, opt level 0).

    ``fuse_opt_level=-1`` takes the opt level of the current ``PassContext``; at level 0 every
    op still becomes its own primitive function. PassContext config options:
    ``relay.FuseOps.max_depth`` (default 256) bounds the number of nodes per fused function;
    ``relay.FuseOps.link_params`` (default False) keeps tensor constants inside them.
    """
    from irlab.relay.transform import function_pass

    level = _integer(fuse_opt_level, "fuse_opt_level")

    def transform(func, mod, ctx):
        opt_level = ctx.opt_level if level == -1 else level
        max_depth = _integer(ctx.config.get("relay.FuseOps.max_depth", MAX_FUSED_OPS),
                             "relay.FuseOps.max_depth")
        link_params = bool(ctx.config.get("relay.FuseOps.link_params", False))
        return fuse_expr(_ensure_typed(func, mod), opt_level, max_depth, link_params)

    return function_pass(transform, opt_level=0, name="FuseOps", required=["InferType"])


# -- DefuseOps --------------------------------------------------------------------------------
class _ByNameSubstituter(ExprMutator):
    """Replaces variables by the argument bound to a parameter of the same name."""

    def __init__(self, by_name: dict):
        super().__init__()
        self.by_name = by_name

    def visit_var(self, var):
        return self.by_name.get(var.name_hint, var)


class _DefuseMutator(ExprMutator):
    def visit_call(self, call):
        new = super().visit_call(call)
        func = new.op if isinstance(new, Call) else None
        if not isinstance(func, Function) or not isinstance(func.body, Call):
            return new
        if len(func.params) != len(new.args):
            raise DiagnosticError(f"DefuseOps: a function of {len(func.params)} parameters is "
                                  f"called with {len(new.args)} arguments", call)
        by_name = {}
        for param, arg in zip(func.params, new.args):
            if param.name_hint in by_name:
                raise DiagnosticError(
                    f"Found multiple parameters share the same variable name "
                    f"`{param.name_hint}` which introduces uncertainty in DefuseOps pass", call)
            by_name[param.name_hint] = arg
        return _ByNameSubstituter(by_name).visit(func.body)


def defuse_expr(expr):
    """Inline every call of a function literal whose body is a call (``DefuseOps``)."""
    return _DefuseMutator().visit(expr)


def DefuseOps():
    """The inverse of ``FuseOps``: ``DefuseOps()(FuseOps()(m))`` gives ``m`` back (function
    pass, opt level 3).

    Before: ``%0 = fn (%p0, Primitive=1) { exp(%p0) }; %0(%x)``; after: ``exp(%x)``. As in
    TVM, only functions whose body is a call are inlined (a fused group rooted at a
    ``TupleGetItem`` stays), parameters are matched by name, and any called function literal
    qualifies, ``Primitive`` or not.
    """
    from irlab.relay.transform import function_pass

    def transform(func, mod, ctx):
        return defuse_expr(func)

    return function_pass(transform, opt_level=3, name="DefuseOps", required=["InferType"])


# -- kernel names -----------------------------------------------------------------------------
def _op_names(func) -> list[str]:
    """Op names of the calls in a primitive function's body, args before their consumer."""
    if not isinstance(func, Function):
        raise DiagnosticError(f"expected a relay.Function, got {type(func).__name__}")
    names = []
    for node in post_order(func.body):
        if isinstance(node, Function):
            raise DiagnosticError("Primitive Functions can not contain nested functions.", node)
        if isinstance(node, Call):
            if not isinstance(node.op, Op):
                raise DiagnosticError("Primitive function only allows call into primitive ops",
                                      node)
            names.append(node.op.name)
    return names


def _candidate_name(func) -> str:
    return "".join(["fused", *("_" + name for name in _op_names(func))])


def fused_function_name(func) -> str:
    """``fused_<op>_<op>...`` for a primitive function, e.g. ``fused_nn_conv2d_add_nn_relu``:
    op names in post-order of the calls (as TVM's lowering builds it), ``.`` -> ``_``."""
    return _candidate_name(func).replace(".", "_")


def _std_hash(text: str) -> int:
    """``std::hash<std::string>`` of libstdc++ on 64-bit targets (``_Hash_bytes``, a
    MurmurHash2 variant with seed 0xc70f6907), used by TVM to shorten long kernel names."""
    mask = (1 << 64) - 1
    mul = (0xC6A4A793 << 32) + 0x5BD1E995
    data = text.encode("utf-8")
    size = len(data)
    aligned = size & ~7
    value = 0xC70F6907 ^ ((size * mul) & mask)
    for i in range(0, aligned, 8):
        word = (int.from_bytes(data[i:i + 8], "little") * mul) & mask
        value ^= ((word ^ (word >> 47)) * mul) & mask
        value = (value * mul) & mask
    if size & 7:
        value ^= int.from_bytes(data[aligned:], "little")
        value = (value * mul) & mask
    value = ((value ^ (value >> 47)) * mul) & mask
    return value ^ (value >> 47)


def kernel_name(func, mod_name: str = "default", name_map: dict | None = None) -> str:
    """The global symbol LowerTE gives a primitive function, e.g.
    ``tvmgen_default_fused_nn_conv2d_add_nn_relu``.

    Names longer than 80 characters keep their first 80 and get ``_<hex std::hash>_``
    appended (te_compiler_cache.cc). Pass the same ``name_map`` dict for every function of a
    module to get TVM's de-duplication (``fused_add``, ``fused_add_1``...).
    """
    candidate = _candidate_name(func)
    if len(candidate) > _MAX_KERNEL_NAME:
        candidate = f"{candidate[:_MAX_KERNEL_NAME]}_{_std_hash(candidate):x}_"
    name = f"tvmgen_{mod_name}_{candidate}".replace(".", "_")
    if name_map is None:
        return name
    if name not in name_map:
        name_map[name] = 0
        return name
    unique = name
    while unique in name_map:
        name_map[name] += 1
        unique = f"{name}_{name_map[name]}"
    name_map[unique] = 0
    return unique


__all__ = ["FuseOps", "DefuseOps", "fuse_expr", "defuse_expr", "fused_function_name",
           "kernel_name"]
