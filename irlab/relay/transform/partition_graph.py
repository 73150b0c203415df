"""Bring-your-own-codegen partitioning: ``MergeComposite``, ``AnnotateTarget``,
``MergeCompilerRegions`` and ``PartitionGraph`` (TVM's BYOC flow, Relay rewriting only).

The flow offloads the parts of a program an external compiler supports::

    mod = MergeComposite(pattern_table)(mod)       # fused groups -> fn(..., Composite="t.x")
    mod = AnnotateTarget(["test_target"])(mod)     # compiler_begin/compiler_end around ops
    mod = MergeCompilerRegions()(mod)              # adjacent regions of a target merge
    mod = PartitionGraph()(mod)                    # regions -> @tvmgen_default_test_target_main_0

A *region* is a connected set of nodes entered through ``compiler_begin`` annotations and
left through ``compiler_end`` ones (``AnnotatedRegionSet``). ``PartitionGraph`` outlines every
region into a global function with ``Compiler``, ``global_symbol``, ``Primitive=1`` and
``Inline=1`` attributes and calls it in place; constants feeding a region are bound into it.
"""

from __future__ import annotations

import warnings

from irlab.errors import IrlabError
from irlab.ir.expr import GlobalVar
from irlab.ir.module import IRModule
from irlab.ir.op import Op
from irlab.relay.dataflow_pattern.pattern import DFPattern
from irlab.relay.dataflow_pattern.post_order import PostOrderRewriter
from irlab.relay.dataflow_pattern.rewrite import partition
from irlab.relay.expr import Call, Constant, If, Let, Tuple, TupleGetItem, Var, bind
from irlab.relay.expr_functor import post_order
from irlab.relay.function import Function
from irlab.relay.op.annotation import CompilerAttrs
from irlab.relay.op.contrib import is_supported
from irlab.relay.transform import (FunctionPass, InferType, PassInfo, Sequential, function_pass,
                                   module_pass)
from irlab.relay.transform.annotated_region_set import (
    COMPILER_BEGIN as _BEGIN, COMPILER_END as _END, DEFAULT_TARGET, AnnotatedRegion,
    AnnotatedRegionSet, MixedModeVisitor, is_compiler_begin as _is_begin,
    is_compiler_end as _is_end, is_region_annotation as _is_annotation)


def _typed_like(new, old):
    """``new`` carrying ``old``'s inferred type (TVM copies ``checked_type_`` by hand)."""
    if old.has_checked_type():
        new._set_checked_type(old.checked_type)
    return new


def _annotate(expr, target, op):
    return _typed_like(Call(op, [expr], CompilerAttrs(compiler=target)), expr)


# ---------------------------------------------------------------------------------------------
# MergeComposite
def _pattern_entries(pattern_table):
    entries = []
    for entry in pattern_table or ():
        if not isinstance(entry, (tuple, list)) or len(entry) not in (2, 3):
            raise IrlabError(f"a pattern table entry is (name, pattern) or (name, pattern, "
                             f"check), got {entry!r}")
        name, pattern = entry[0], entry[1]
        check = entry[2] if len(entry) == 3 else (lambda expr: True)
        if not isinstance(pattern, DFPattern):
            raise IrlabError(f"pattern {name!r} is a {type(pattern).__name__}, not a DFPattern "
                             f"(build it with is_op/wildcard/...)")
        if not callable(check):
            raise IrlabError(f"the check of pattern {name!r} is not callable")
        entries.append((str(name), pattern, check))
    return entries


class UnmatchedPatternWarning(UserWarning):
    """A pattern table entry that made no composite function (filter it to silence)."""


class _MergeCompositePass(FunctionPass):
    """MergeComposite over every function, then one warning naming the entries that made no
    composite anywhere in the module (a typo'd op name would otherwise be silently ignored)."""

    def __init__(self, entries):
        self.entries, self.found, self.accepted = entries, {}, set()
        super().__init__(self._merge, PassInfo(0, "MergeComposite"))

    def _recording(self, name, check):
        def recorded(expr):
            self.found[name] = self.found.get(name, 0) + 1
            ok = check(expr)
            if ok:
                self.accepted.add(name)
            return ok
        return recorded

    def _merge(self, func, mod, ctx):
        from irlab.relay.ty_infer import infer_expr

        merged = func
        for name, pattern, check in self.entries:
            merged = partition(pattern, merged, {"Composite": name},
                               self._recording(name, check))
            # Typed again after each pattern, so the next checks can read checked_type.
            merged = infer_expr(merged, mod)
        return merged

    def transform_module(self, mod, ctx):
        self.found, self.accepted = {}, set()
        result = super().transform_module(mod, ctx)
        unused = [f"{name!r} ({_why_unused(self.found.get(name, 0))})"
                  for name, _, _ in self.entries if name not in self.accepted]
        if unused:
            warnings.warn(f"MergeComposite: {len(unused)} of {len(self.entries)} pattern table "
                          f"entries made no composite function: {', '.join(unused)}",
                          UnmatchedPatternWarning, stacklevel=2)
        return result


def _why_unused(matches: int) -> str:
    if matches == 0:
        return "the pattern matched nothing"
    return f"its check rejected all {matches} match{'es' if matches > 1 else ''}"


def MergeComposite(pattern_table):
    """Wrap every match of each ``(name, pattern[, check])`` into a ``Composite=name``
    function called in place; earlier entries win over later ones. Entries that make no
    composite in the module are named in an ``UnmatchedPatternWarning``."""
    return _MergeCompositePass(_pattern_entries(pattern_table))


# ---------------------------------------------------------------------------------------------
# AnnotateTarget
class _AnnotateTargetRewriter(PostOrderRewriter):
    """Puts every supported call in a one-op region of its target (unsupported ones in a
    ``default`` region) and annotates tuples, getitems and lets with their inputs' target."""

    def __init__(self, targets):
        super().__init__()
        self.targets = targets
        self.target_of: dict = {}  # rewritten expr -> the target it was assigned

    def rewrite(self, pre, post):
        if isinstance(pre, Call):
            return self._call(pre, post)
        if isinstance(pre, Tuple):
            return self._tuple(post)
        if isinstance(pre, TupleGetItem):
            return self._tuple_getitem(post)
        if isinstance(pre, Function):
            return self._function(pre, post)
        if isinstance(pre, Let):
            return self._let(post)
        if isinstance(pre, If):
            return self._if(post)
        return post

    def annotate_args(self, args, target=""):
        """End each argument's region and begin the op's; returns (op target, new args)."""
        ref_target = ""
        begins, ends = [], []
        for arg in args:
            arg_target = DEFAULT_TARGET
            if _is_begin(arg):
                # Annotated by an earlier run: keep a real target's begin, redo a default one.
                if arg.attrs.compiler != DEFAULT_TARGET:
                    begins.append(arg)
                else:
                    ends.append(arg.args[0])
                if _is_end(arg.args[0]):
                    arg_target = arg.args[0].attrs.compiler
            elif arg in self.target_of:
                arg_target = self.target_of[arg]
                # A call without arguments (zeros...) is an input of the region, not an output.
                if isinstance(arg, Call) and not arg.args:
                    ends.append(arg)
                else:
                    ends.append(_annotate(arg, arg_target, _END))
            else:
                ends.append(arg)  # a graph input (var, constant...)
            if ref_target == "":
                ref_target = arg_target
            elif ref_target != arg_target:
                ref_target = DEFAULT_TARGET
        op_target = ref_target if target == "" else target
        if ref_target == "":
            return op_target, list(args)
        return op_target, begins + [_annotate(e, op_target, _BEGIN) for e in ends]

    def insert_end(self, expr):
        """Close the region ``expr`` belongs to (a function body, a branch, a let body)."""
        if expr in self.target_of:
            if (isinstance(expr, TupleGetItem) or (isinstance(expr, Tuple) and expr.fields)
                    or (isinstance(expr, Call) and expr.args)):
                target = self.target_of[expr]
                expr = _annotate(expr, target, _END)
                self.target_of[expr] = target
        elif _is_end(expr) and expr.attrs.compiler == DEFAULT_TARGET:
            inner = expr.args[0]
            target = self.target_of.get(inner, "")
            expr = _annotate(inner, target, _END)
            self.target_of[expr] = target
        return expr

    def _supported_targets(self, pre):
        supported = []
        op = pre.op
        if isinstance(op, Op):
            supported = [t for t in self.targets if is_supported(op, t, pre)]
        elif isinstance(op, Function):
            composite = op.get_attr("Composite")
            if isinstance(composite, str) and "." in composite:
                prefix = composite.split(".", 1)[0]
                if prefix in self.targets:
                    supported.append(prefix)
        return supported + [DEFAULT_TARGET]

    def _call(self, pre, post):
        if pre.op is _BEGIN:
            return post
        if pre.op is _END:
            inner = post.args[0]
            self.target_of.setdefault(inner, post.attrs.compiler)
            return post
        if pre.args and _is_begin(pre.args[0]) and pre.args[0].attrs.compiler != DEFAULT_TARGET:
            return post  # annotated for another target by an earlier run
        target = self._supported_targets(pre)[0]
        if isinstance(pre.op, Var):
            new_call = self.rewrite_var_call(pre, post)
            if new_call is not None:
                return new_call
        _, args = self.annotate_args(post.args, target)
        new_call = _typed_like(Call(post.op, args, post.attrs), pre)
        self.target_of[new_call] = target
        return new_call

    def rewrite_var_call(self, pre, post):
        return None

    def _tuple(self, post):
        target, fields = self.annotate_args(post.fields)
        new = Tuple(fields)
        self.target_of[new] = target
        return new

    def _tuple_getitem(self, post):
        target, args = self.annotate_args([post.tuple_value])
        new = TupleGetItem(args[0], post.index)
        self.target_of[new] = target
        return new

    def _function(self, pre, post):
        if pre.get_attr("Composite") is not None:  # a composite is opaque: keep it as it is
            func, body = pre, pre.body
        else:
            func, body = post, self.insert_end(post.body)
        return Function(func.params, body, func.ret_type, func.type_params, func.attrs)

    def _let(self, post):
        body = self.insert_end(post.body)
        if isinstance(post.value, Function):
            return Let(post.var, post.value, body)
        _, args = self.annotate_args([post.value])
        return Let(post.var, args[0], body)

    def _if(self, post):
        return If(self.insert_end(post.cond), self.insert_end(post.true_branch),
                  self.insert_end(post.false_branch))


class _CallOpsTargetRewriter(_AnnotateTargetRewriter):
    """``include_non_call_ops=False``: tuples, getitems and calls of variables stay outside
    every region; only the values flowing into them are closed with compiler_end."""

    def rewrite_var_call(self, pre, post):
        args = [self.insert_end(a) for a in post.args]
        return _typed_like(Call(post.op, args, post.attrs), pre)

    def _tuple(self, post):
        return Tuple([self.insert_end(f) for f in post.fields])

    def _tuple_getitem(self, post):
        return TupleGetItem(self.insert_end(post.tuple_value), post.index)


def AnnotateTarget(targets, include_non_call_ops=True):
    """Annotate the calls each target supports (op attr ``target.<name>``, or a composite
    function named ``<name>.*``) with compiler_begin/compiler_end; the first target wins."""
    if isinstance(targets, str):
        targets = [targets]
    if not targets or not all(isinstance(t, str) and t for t in targets):
        raise IrlabError(f"AnnotateTarget takes a target name or a list of them, got "
                         f"{targets!r}")
    targets = list(targets)
    rewriter = _AnnotateTargetRewriter if include_non_call_ops else _CallOpsTargetRewriter

    def annotate_target(func, mod, ctx):
        return rewriter(targets).visit(func)

    func_pass = function_pass(annotate_target, opt_level=0, name="AnnotateTargetFunc",
                              required=["InferType"])
    return Sequential([func_pass, InferType()], opt_level=0, name="AnnotateTarget")


# ---------------------------------------------------------------------------------------------
# MergeCompilerRegions
class _RegionMerger(MixedModeVisitor):
    """Merges each region into the regions it reads from, unless that would let a region
    depend on itself through another target's region (the *restrictions*)."""

    def __init__(self, regions, let_values):
        super().__init__()
        self.regions = regions
        self.let_values = let_values  # let var -> its value
        self.merged: set = set()
        self.merging: set = set()
        self.restrictions: dict = {}

    def _restrictions(self, region_id) -> set:
        return self.restrictions.setdefault(region_id, set())

    def visit_node(self, node):
        if _is_end(node):
            self._merge(self.regions.get_region(node))
        elif not isinstance(node, (Call, Tuple, TupleGetItem)):
            self.visit_children(node)

    def _upstream_regions(self, expr, found):
        """The regions feeding ``expr`` through nodes outside every region (an ``if``, the
        tuples and getitems left unannotated by ``include_non_call_ops=False``, a let variable
        or a closure: a closure depends on the regions of its body and on those it captures)."""
        stack, seen = [expr], set()
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            region = self.regions.get_region(node)
            if region is not None:
                _add_once(found, region)
            elif isinstance(node, If):
                stack.extend((node.false_branch, node.true_branch, node.cond))
            elif isinstance(node, Tuple):
                stack.extend(reversed(node.fields))
            elif isinstance(node, TupleGetItem):
                stack.append(node.tuple_value)
            elif isinstance(node, Call):
                stack.extend(reversed(node.args))
            elif isinstance(node, Let):
                stack.extend((node.body, node.value))
            elif isinstance(node, Function):
                stack.append(node.body)
            elif isinstance(node, Var) and node in self.let_values:
                stack.append(self.let_values[node])

    def _indirect_parents(self, region):
        """The regions feeding ``region`` through nodes outside every region."""
        indirect = []
        for begin in region.ins:
            if self.regions.get_region(begin.args[0]) is None:
                self._upstream_regions(begin.args[0], indirect)
        # A call of a closure (or of a let-bound one) also reads what the closure captures.
        for node in region.nodes:
            if isinstance(node, Call) and not isinstance(node.op, Op):
                self._upstream_regions(node.op, indirect)
        return indirect

    def _merge(self, region):
        if region.id in self.merged or region.id in self.merging:
            return
        self.merging.add(region.id)
        # Parent regions first, so their restrictions are known.
        for begin in list(region.ins):
            parent = self.regions.get_region(begin.args[0])
            if parent is not None and parent.id not in self.merged:
                self.visit(begin.args[0])
        # Regions behind closures and lets too (a let's region may have no output at all).
        for other in self._indirect_parents(region):
            self._merge(other)
        # Collected again: merging may have moved a region into another one.
        indirect = self._indirect_parents(region)
        parents, correlated = [], []
        for begin in region.ins:
            parent = self.regions.get_region(begin.args[0])
            if parent is not None:
                _add_once(parents, parent)
                _add_once(correlated, parent)
        # A region reading an `if` (or other nodes outside every region) inherits the
        # restrictions of the regions behind it, as TVM does for `if`. Those regions are
        # restrictions themselves too: merging one would route a path out of the merged
        # region and back into it (TVM misses this one and partitions into a cycle).
        restrictions = self._restrictions(region.id)
        for other in correlated + indirect:
            restrictions |= self._restrictions(other.id)
        restrictions |= {other.id for other in indirect if other is not region}
        for parent in parents:
            # A region never spans two scopes: merged with a closure's region, a region of the
            # enclosing function would be computed inside the closure (from its parameters)
            # while still being used outside it.
            # A region without outputs (the value of a let) only collects restrictions: its
            # value leaves it without a compiler_end.
            if (parent.target != region.target or parent.scope is not region.scope
                    or not region.outs):
                restrictions.add(parent.id)
                continue
            if parent.id in restrictions:
                continue
            self.regions.merge_regions(parent, region)
            for other in self.regions:
                others = self._restrictions(other.id)
                if parent.id in others:
                    others.discard(parent.id)
                    others.add(region.id)
        self.merging.discard(region.id)
        self.merged.add(region.id)


def _let_values(expr) -> dict:
    return {node.var: node.value for node in post_order(expr) if isinstance(node, Let)}


def _add_once(items, item):
    if all(item is not other for other in items):
        items.append(item)


class _MergeAnnotations(PostOrderRewriter):
    """Drops a compiler_end -> compiler_begin pair that now sits inside one region."""

    def __init__(self, regions):
        super().__init__()
        self.regions = regions

    def rewrite(self, pre, post):
        if _is_begin(pre) and _is_end(pre.args[0]):
            inner = self.regions.get_region(pre)
            if inner is not None and inner is self.regions.get_region(pre.args[0]):
                return post.args[0].args[0]
        return post


def MergeCompilerRegions():
    """Merge each annotated region with the regions of the same target it reads from, as far
    as that keeps the region graph acyclic and each region in one scope (a closure's regions
    do not merge with those of the function around it)."""

    def merge_compiler_regions(func, mod, ctx):
        regions = AnnotatedRegionSet.create(func)
        _RegionMerger(regions, _let_values(func)).visit(func)
        return _MergeAnnotations(regions).visit(func)

    merged = function_pass(merge_compiler_regions, opt_level=0, name="MergeCompilerRegions")
    return Sequential([merged, InferType()])


# ---------------------------------------------------------------------------------------------
# PartitionGraph
def _rewrite_bodies(mod, make_rewriter):
    """Apply a fresh rewriter to the body of every Relay function, typing after each."""
    mod = mod.copy()
    for gv, func in list(mod.functions.items()):
        if isinstance(func, Function):
            mod[gv] = func.with_fields(body=make_rewriter().visit(func.body))
            mod = InferType()(mod)
    return mod


class _TupleOutFlattener(PostOrderRewriter):
    """``compiler_end((a, b))`` -> ``(compiler_end(a), compiler_end(b))``: a region's outputs
    are then never tuples of tuples."""

    def rewrite(self, pre, post):
        if _is_end(pre) and isinstance(post.args[0], Tuple):
            tup = post.args[0]
            target = pre.attrs.compiler
            return Tuple([Call(_END, [f], CompilerAttrs(compiler=target)) for f in tup.fields],
                         tup.span)
        return post


class _DefaultRemover(PostOrderRewriter):
    def rewrite(self, pre, post):
        if (isinstance(pre, Call) and isinstance(pre.attrs, CompilerAttrs)
                and pre.attrs.compiler == DEFAULT_TARGET):
            return post.args[0]
        return post


class _RegionFunction:
    """What is known of the function being built for one region."""

    __slots__ = ("call", "args", "outputs", "inputs", "building")

    def __init__(self):
        self.call = None
        self.building = False
        self.args: list = []  # (param var, argument expr), in the order they were met
        self.outputs: dict = {}  # region output expr -> its value after the call
        self.inputs: dict = {}  # region input expr -> its param var (one per input)


def _is_constant(expr) -> bool:
    if isinstance(expr, Constant):
        return True
    return isinstance(expr, Tuple) and all(isinstance(f, Constant) for f in expr.fields)


def _fresh_name(mod, name):
    if name not in mod:
        return name
    i = 1
    while f"{name}_{i}" in mod:
        i += 1
    return f"{name}_{i}"


class _Partitioner(PostOrderRewriter):
    """Replaces each region by a call of a new global function holding it."""

    def __init__(self, mod, bind_constants):
        super().__init__()
        self.mod = mod
        self.bind_constants = bind_constants
        self.region_sets = []
        names = set()
        for gv, func in mod.functions.items():
            if not isinstance(func, Function):
                continue
            name = gv.name_hint
            while name in names:
                name += "_a"
            names.add(name)
            regions = AnnotatedRegionSet.create(func, func_name=name)
            # One call computes a region: it must sit in one scope.
            regions.check_scopes()
            self.region_sets.append(regions)
        self.meta: dict = {}

    def region_of(self, expr):
        for regions in self.region_sets:
            region = regions.get_region(expr)
            if region is not None:
                return region
        raise IrlabError(f"no annotated region contains {expr}")

    def _meta(self, region) -> _RegionFunction:
        meta = self.meta.get(region)
        if meta is None:
            meta = self.meta[region] = _RegionFunction()
        return meta

    def rewrite(self, pre, post):
        if not _is_annotation(pre):
            return post
        if pre.op is _BEGIN:
            return self._begin(pre, post)
        if pre.op is not _END:
            raise IrlabError(f"{pre.op.name} carries compiler attrs but is not a region "
                             f"annotation")
        region = self.region_of(pre)
        meta = self._meta(region)
        if meta.call is None:
            self._create_function(region, pre)
        return meta.outputs[pre.args[0]]

    def _begin(self, pre, post):
        region = self.region_of(pre)
        value = post.args[0]
        if not region.outs:
            # A region without outputs computes nothing: keep the value (TVM would leave an
            # unbound parameter here, e.g. for `let x = compiler_begin(..)`).
            return value
        source = pre.args[0]
        while _is_annotation(source) and source.op in (_BEGIN, _END):
            source = source.args[0]
        meta = self._meta(region)
        var = meta.inputs.get(source)
        if var is None:
            index = next(i for i, b in enumerate(region.ins) if b is pre)
            var = Var(f"{pre.attrs.compiler}_{region.id}_i{index}",
                      pre.checked_type if pre.has_checked_type() else None)
            meta.args.append((var, value))
            meta.inputs[source] = var
        return var

    def _create_function(self, region, end):
        meta = self._meta(region)
        if meta.building:  # an output of the region is computed from another of its outputs
            raise IrlabError(f"region {region.id} of {region.target!r} depends on itself: the "
                             f"annotations do not describe an acyclic partition")
        meta.building = True
        outputs = {}  # output expr -> index in the function's result
        fields = []
        for out in region.outs:
            node = out.args[0]
            if node not in outputs:
                outputs[node] = len(fields)
                fields.append(self.visit(node))
        call = self._region_call(region, fields, end)
        if len(outputs) == 1:
            meta.outputs[next(iter(outputs))] = call
        else:
            for node, index in outputs.items():
                meta.outputs[node] = _typed_like(TupleGetItem(call, index), node)

    def _region_call(self, region, fields, end):
        meta = self._meta(region)
        params, call_args, binds = [], [], {}
        for var, value in meta.args:
            params.append(var)
            if self.bind_constants and _is_constant(value):
                binds[var] = value
            else:
                call_args.append(value)
        if len(fields) == 1:
            out = end.args[0]
            ret_type = out.checked_type if out.has_checked_type() else None
            func = Function(params, fields[0], ret_type)
        else:
            func = Function(params, Tuple(fields))
        if binds:
            func = bind(func, binds)
        target = end.attrs.compiler
        name = f"{target}_{region.func_name}_{region.id}"
        func = (func.with_attr("global_symbol", name).with_attr("Primitive", 1)
                .with_attr("Compiler", target).with_attr("Inline", 1))
        gv = GlobalVar(_fresh_name(self.mod, name))
        # Typed once the whole function is partitioned (TVM re-types the module per region).
        self.mod.add(gv, func)
        meta.call = Call(gv, call_args)
        return meta.call

    def partition(self) -> IRModule:
        for gv, func in list(self.mod.functions.items()):
            if isinstance(func, Function):
                self.mod[gv] = func.with_fields(body=self.visit(func.body))
                self.mod = InferType()(self.mod)
        return self.mod


def _sanitize(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


class _GlobalRenamer(PostOrderRewriter):
    def __init__(self, renamed):
        super().__init__()
        self.renamed = renamed

    def rewrite(self, pre, post):
        if isinstance(post, Call) and isinstance(post.op, GlobalVar):
            new_gv = self.renamed.get(post.op.name_hint)
            if new_gv is not None:
                return Call(new_gv, post.args, post.attrs, post.type_args, post.span)
        return post


def _mangle_names(mod, mod_name):
    """Prefix every external function's name (and global_symbol) with ``mod_name``."""
    renamed = {}
    for gv, func in mod.functions.items():
        if isinstance(func, Function) and func.get_attr("Compiler") is not None:
            renamed[gv.name_hint] = GlobalVar(_sanitize(f"{mod_name}_{gv.name_hint}"))
    new = IRModule(type_definitions=mod.type_definitions, attrs=mod.attrs)
    renamer = _GlobalRenamer(renamed)
    for gv, func in mod.functions.items():
        if not isinstance(func, Function):
            new.add(gv, func)
            continue
        body = renamer.visit(func.body)
        if gv.name_hint in renamed:
            new_gv = renamed[gv.name_hint]
            func = func.with_fields(body=body, attrs=func.attrs.with_attr("global_symbol",
                                                                          new_gv.name_hint))
            new.add(new_gv, func)
        else:
            new.add(gv, func.with_fields(body=body))
    return new


def PartitionGraph(mod_name="default", bind_constants=True):
    """Outline every annotated region into a global function ``@tvmgen_<mod_name>_<target>_
    <function>_<region id>`` with ``Compiler=<target>``, and call it in place."""
    mod_name = f"tvmgen_{mod_name}" if mod_name else "tvmgen"

    def flatten(mod, ctx):
        return _rewrite_bodies(mod, _TupleOutFlattener)

    def remove_defaults(mod, ctx):
        return _rewrite_bodies(mod, _DefaultRemover)

    def partition_graph(mod, ctx):
        return _Partitioner(mod.copy(), bind_constants).partition()

    def mangle(mod, ctx):
        return _mangle_names(mod, mod_name)

    return Sequential([
        module_pass(flatten, opt_level=0, name="FlattenNestedTuples"),
        module_pass(remove_defaults, opt_level=0, name="RemoveDefaultAnnotations"),
        module_pass(partition_graph, opt_level=0, name="PartitionGraph"),
        module_pass(mangle, opt_level=0, name="NameMangleExtFuncs"),
        InferType(),
    ])


__all__ = ["MergeComposite", "UnmatchedPatternWarning", "AnnotateTarget", "MergeCompilerRegions",
           "PartitionGraph",
           "AnnotatedRegion", "AnnotatedRegionSet", "DEFAULT_TARGET"]
