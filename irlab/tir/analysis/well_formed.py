"""``verify_well_formed``: a PrimFunc is well formed and memory safe (TVM's
``tir.analysis.verify_well_formed``, plus the memory-safety checks irlab adds).

What is checked, for every PrimFunc:

* every variable is defined before it is used (params, buffer_map shapes, loops, lets, block
  iter vars, allocations, thread axes);
* every block binding stays inside its iter var's domain (``vi = T.axis.spatial(16, i)`` with
  ``i`` in ``[0, 32)`` is refused);
* every buffer access (load and store) stays inside the buffer's shape, given the loop ranges
  and the guards on the way (``if``, ``T.where``, ``T.if_then_else``; see
  ``irlab.tir.analysis.bounds``). An access shown to leave the buffer (an affine index of
  loop variables, reached unconditionally: ``for i in range(17): B[i] = ...`` into 16
  elements) is refused; one that can be neither proven nor refuted (a data-dependent index,
  a loop bound given at run time) is listed by ``memory_safety_checks``, and ``tvm.build``
  guards it with a run-time check (``tir.transform.InsertBoundsChecks``) -- compiled code
  never reads or writes outside a buffer;
* every ``BufferStore`` stores a value of the buffer's dtype (with the lanes of its index):
  an ``int32`` stored into a ``float32`` buffer needs an explicit cast (the TVMScript parser
  inserts it, as TVM's does).

A failure raises ``WellFormedError`` naming the PrimFunc, the block, the buffer and the
index, with the TVMScript line where the function came from TVMScript.
"""

from __future__ import annotations

import contextlib
from typing import NamedTuple

from irlab.errors import TIRError
from irlab.runtime.lru import LRUCache
from irlab.runtime.dtype import parse_dtype
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.tir import stmt as S
from irlab.tir.analysis.bounds import BoundProver, facts_of, negated_facts, same_dtype
from irlab.tir.functor import expr_children


_ZERO = E.IntImm("int32", 0)
_CONSTANTS = (E.IntImm, E.FloatImm, E.StringImm)


class WellFormedError(TIRError):
    """A PrimFunc is not well formed or not provably memory safe; ``node`` is the statement or
    expression at fault."""


def verify_well_formed(func_or_mod, assert_mode: bool = True) -> bool:
    """True when every PrimFunc of ``func_or_mod`` passes the checks (see the module doc);
    otherwise raise ``WellFormedError`` (``assert_mode``) or return False."""
    from irlab.tir.function import PrimFunc

    if isinstance(func_or_mod, PrimFunc):
        funcs = [(_name_of(func_or_mod, None), func_or_mod)]
    else:
        funcs = [(_name_of(f, gv.name_hint), f) for gv, f in func_or_mod.functions.items()
                 if isinstance(f, PrimFunc)]
    try:
        for name, func in funcs:
            memory_safety_checks(func, name)
    except WellFormedError:
        if assert_mode:
            raise
        return False
    return True


class RuntimeCheck(NamedTuple):
    """An access not proven in bounds: ``stmt`` must only run when ``condition`` holds
    (else fail with ``message``)."""

    stmt: object
    condition: object
    message: str


def memory_safety_checks(func, name=None) -> list:
    """Verify ``func`` (raising ``WellFormedError`` as ``verify_well_formed`` does) and return
    the ``RuntimeCheck`` of each access that could be neither proven in bounds nor refuted."""
    verifier = _Verifier(name or _name_of(func, None))
    verifier.run(func)
    return verifier.runtime_checks


def _name_of(func, default):
    attrs = func.attrs
    if attrs is not None and "global_symbol" in attrs:
        return str(attrs["global_symbol"])
    return default or "main"


def _text(node) -> str:
    from irlab.tir.text import expr_to_text

    try:
        return expr_to_text(node)
    except Exception:  # noqa: BLE001 - a message must never fail to print
        return repr(node)


class _BlockFrame:
    """What a block being verified reads from outside: the function-level variables
    (``uses``), or an outer loop or iter var (then its result depends on their ranges and
    is not remembered)."""

    __slots__ = ("uses", "cacheable")

    def __init__(self):
        self.uses = set()
        self.cacheable = True


# Blocks verified on their own: id -> (block, the function-level variables they read); the
# newest thousand, shared by the threads that build (LRUCache is locked).
_verified_blocks = LRUCache(1024)


class _Verifier:
    """One walk over a PrimFunc: the defined variables, the ranges and guards in scope, and
    where the walk is (block, statement with a span) for the messages."""

    def __init__(self, func_name):
        self.func_name = func_name
        self.prover = BoundProver()
        self.defined = {}  # Var -> how many blocks enclose its definition
        self.frames = []  # one _BlockFrame per block the walk is in
        self.function_vars = set()  # params and what the buffer_map defines
        self.facts = ()
        self.blocks = []
        self.spans = []
        self.stmts = []
        self.loop_vars = set()  # loop variables of constant ranges (block iter vars are not)
        self.conditional = 0  # enclosing branches: an access there may never run
        self.guards = ()  # conditions of the Select branches the expression walk is in
        self.runtime_checks = []
        # functions, not bound methods: a table of bound methods is a cycle through self
        # that would keep each verifier's state alive until the cyclic collector runs
        kind = type(self)
        self.stmt_table = {
            S.For: kind.visit_for, S.While: kind.visit_while, S.IfThenElse: kind.visit_if,
            S.SeqStmt: kind.visit_seq, S.LetStmt: kind.visit_let, S.Allocate: kind.visit_allocate,
            S.AllocateConst: kind.visit_allocate_const,
            S.DeclBuffer: kind.visit_decl_buffer, S.AttrStmt: kind.visit_attr,
            S.AssertStmt: kind.visit_assert, S.Evaluate: kind.visit_evaluate,
            S.BufferStore: kind.visit_store, S.BlockRealize: kind.visit_block_realize,
        }

    # -- messages ---------------------------------------------------------------------------
    def fail(self, message, node=None):
        where = f"PrimFunc {self.func_name}"
        if self.blocks:
            where += f", block {self.blocks[-1]}"
        span = next((s for s in reversed(self.spans) if s is not None), None)
        if span is not None:
            where += f" ({span})"
        raise WellFormedError(f"verify_well_formed: {where}: {message}", node)

    # -- definitions ------------------------------------------------------------------------
    def define(self, var):
        self.defined[var] = len(self.frames)

    def use(self, var, node):
        """``var`` is read here: it must be defined; the blocks it comes from outside of
        depend on it."""
        level = self.defined.get(var)
        if level is None:
            self.fail(f"variable {var.name_hint} is used where it is not defined", node)
        for frame in self.frames[level:]:
            if var in self.function_vars:
                frame.uses.add(var)
            else:  # an outer loop, let or iter var: the block's proofs depend on its range
                frame.cacheable = False

    def define_buffer(self, buffer):
        self.define(buffer.data)
        for e in (*buffer.shape, *buffer.strides, buffer.elem_offset):
            if isinstance(e, E.Var):
                self.define(e)

    def run(self, func):
        for p in func.params:
            self.define(p)
        for _, buffer in func.buffer_map.items():
            self.define_buffer(buffer)
        self.function_vars = set(self.defined)
        self.visit_stmt(func.body)

    # -- statements -------------------------------------------------------------------------
    def visit_stmt(self, s):
        if s is None:
            return
        handler = self.stmt_table.get(type(s))
        if handler is None:
            for cls, method in self.stmt_table.items():
                if isinstance(s, cls):
                    handler = method
                    break
            else:
                self.fail(f"unknown statement {type(s).__name__}", s)
        self.spans.append(getattr(s, "span", None))
        self.stmts.append(s)
        try:
            handler(self, s)
        finally:
            self.spans.pop()
            self.stmts.pop()

    @contextlib.contextmanager
    def guarded(self, facts):
        saved = self.facts
        self.facts = saved + tuple(facts)
        self.conditional += 1
        try:
            yield
        finally:
            self.facts = saved
            self.conditional -= 1

    def visit_for(self, s):
        self.visit_expr(s.min)
        self.visit_expr(s.extent)
        self.define(s.loop_var)
        if s.thread_binding is not None:
            self.define(s.thread_binding.var)
        exact = isinstance(s.min, E.IntImm) and isinstance(s.extent, E.IntImm) \
            and s.extent.value >= 1
        if exact:
            self.loop_vars.add(s.loop_var)
        self.prover.bind_range(s.loop_var, s.min, s.extent)
        try:
            self.visit_stmt(s.body)
        finally:
            self.loop_vars.discard(s.loop_var)
            self.defined.pop(s.loop_var, None)

    def visit_while(self, s):
        self.visit_expr(s.condition)
        with self.guarded(()):
            self.visit_stmt(s.body)

    def visit_if(self, s):
        self.visit_expr(s.condition)
        with self.guarded(facts_of(s.condition)):
            self.visit_stmt(s.then_case)
        with self.guarded(negated_facts(s.condition)):
            self.visit_stmt(s.else_case)

    def visit_seq(self, s):
        for child in s.seq:
            self.visit_stmt(child)

    def visit_let(self, s):
        self.visit_expr(s.value)
        self.define(s.var)
        self.prover.bind_value(s.var, s.value)
        self.visit_stmt(s.body)
        self.defined.pop(s.var, None)

    def visit_allocate(self, s):
        for e in (*s.extents, s.condition):
            self.visit_expr(e)
        self.define(s.buffer_var)
        self.visit_stmt(s.body)
        self.defined.pop(s.buffer_var, None)

    def visit_allocate_const(self, s):
        self.define(s.buffer_var)
        self.visit_stmt(s.body)
        self.defined.pop(s.buffer_var, None)

    def visit_decl_buffer(self, s):
        self.check_buffer_defined(s.buffer, s)
        for e in (*s.buffer.shape, *s.buffer.strides, s.buffer.elem_offset):
            self.visit_expr(e)
        self.visit_stmt(s.body)

    def visit_attr(self, s):
        self.visit_expr(s.value)
        node = s.node
        if s.attr_key == "thread_extent" and isinstance(node, S.IterVar):
            self.define(node.var)
            self.prover.bind_range(node.var, E.IntImm(s.value.dtype, 0), s.value)
            self.visit_stmt(s.body)
            return
        if isinstance(node, E.PrimExpr):
            self.visit_expr(node)
        self.visit_stmt(s.body)

    def visit_assert(self, s):
        self.visit_expr(s.condition)
        with self.guarded(facts_of(s.condition)):
            self.visit_stmt(s.body)

    def visit_evaluate(self, s):
        self.visit_expr(s.value)

    def visit_store(self, s):
        self.check_buffer_defined(s.buffer, s)
        lanes = max(parse_dtype(i.dtype).lanes for i in s.indices) if s.indices else 1
        base = parse_dtype(s.buffer.dtype)
        expected = str(base.with_lanes(base.lanes * lanes))
        if s.value.dtype != expected:
            self.fail(f"{s.buffer.name}[{', '.join(_text(i) for i in s.indices)}] = "
                      f"{_text(s.value)} stores a {s.value.dtype} value into a {expected} "
                      f"buffer element; cast it explicitly (T.Cast(\"{expected}\", ...))", s)
        self.visit_expr(s.value)
        for i in s.indices:
            self.visit_expr(i)
        self.check_access(s.buffer, s.indices, "store to", s)

    def visit_block_realize(self, s):
        for e in (*s.iter_values, s.predicate):
            self.visit_expr(e)
        block = s.block
        self.blocks.append(block.name_hint)
        self.spans.append(block.span)
        try:
            with self.guarded(facts_of(s.predicate)):
                self.check_bindings(s)
            predicated = not (isinstance(s.predicate, E.IntImm) and s.predicate.value)
            with contextlib.ExitStack() as scopes:
                if predicated:
                    scopes.enter_context(self.guarded(()))
                self.visit_block_once(block)
        finally:
            self.blocks.pop()
            self.spans.pop()

    def visit_block_once(self, block):
        """Visit ``block`` unless the same block was verified before and depends on nothing
        but the function's parameters (then only check that its buffers are defined here):
        a schedule primitive leaves most blocks of its input as they were."""
        cached = _verified_blocks.get(id(block)) if not self.facts else None
        if cached is not None and cached[0] is block:
            if all(var in self.defined for var in cached[1]):
                for var in cached[1]:
                    self.mark_used(var)
                return
        frame = _BlockFrame()
        self.frames.append(frame)
        checks = len(self.runtime_checks)
        try:
            for iv in block.iter_vars:
                self.define(iv.var)
                self.prover.bind_range(iv.var, iv.dom.min, iv.dom.extent)
            self.visit_block(block)
            for iv in block.iter_vars:
                self.defined.pop(iv.var, None)
        finally:
            self.frames.pop()
        if frame.cacheable and not self.facts and len(self.runtime_checks) == checks:
            _verified_blocks[id(block)] = (block, frozenset(frame.uses))

    def visit_block(self, block):
        for buffer in block.alloc_buffers:
            self.define_buffer(buffer)
        for match in block.match_buffers:
            self.check_match_buffer(match)
            self.define_buffer(match.buffer)
        # reads/writes are not executed: what they name is left to the schedule primitives
        # (a region may use a Let variable of the body, as TOPI's resize does)
        self.visit_stmt(block.init)
        self.visit_stmt(block.body)

    # -- checks -----------------------------------------------------------------------------
    def check_bindings(self, realize):
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            lo, ext = iv.dom.min, iv.dom.extent
            if self.within(value, lo, ext):
                continue
            end = O.add(lo, ext)
            if (self.prover.prove_le(lo, value, self.facts)
                    and self.prover.prove_lt(value, end, self.facts)):
                continue
            self.fail(f"iter var {iv.var.name_hint} is bound to {_text(value)}, which may "
                      f"leave its domain [{_text(lo)}, {_text(end)})"
                      f"{self.range_note(value)}; fix the domain or the loops, or guard "
                      "the block with T.where", realize)

    def check_match_buffer(self, match):
        region = match.source
        self.check_buffer_defined(region.buffer, match)
        for k, (r, extent) in enumerate(zip(region.region, region.buffer.shape)):
            last = O.subtract(O.add(r.min, r.extent), 1)
            if (self.prover.prove_le(0, r.min, self.facts)
                    and self.prover.prove_lt(last, extent, self.facts)):
                continue
            self.fail(f"match_buffer {match.buffer.name} views {region.buffer.name} at "
                      f"[{_text(r.min)}, {_text(r.min)} + {_text(r.extent)}) in dimension "
                      f"{k}, which may leave [0, {_text(extent)})", match)

    def check_buffer_defined(self, buffer, node):
        if buffer.data not in self.defined:
            self.fail(f"buffer {buffer.name} is used where it is not defined (its data "
                      f"{buffer.data.name_hint} is not a parameter, allocation or block "
                      "buffer in scope)", node)
        self.mark_used(buffer.data)

    def mark_used(self, var):
        """The blocks ``var`` (a parameter or a buffer's data) comes from outside of need it
        defined wherever they are."""
        for frame in self.frames[self.defined[var]:]:
            frame.uses.add(var)

    def within(self, index, lo, extent) -> bool:
        """The quick proof of ``lo <= index < lo + extent``: constant bounds, no
        simplification (what almost every access of a schedule's result needs)."""
        if not (isinstance(lo, E.IntImm) and isinstance(extent, E.IntImm)):
            return False
        bound = self.prover.analyzer.const_int_bound(index)
        return lo.value <= bound.min_value and bound.max_value < lo.value + extent.value

    def check_access(self, buffer, indices, what, node):
        for k, (index, extent) in enumerate(zip(indices, buffer.shape)):
            if parse_dtype(index.dtype).lanes == 1 and self.within(index, _ZERO, extent):
                continue
            for lo, hi in _lane_extremes(index):
                if (self.prover.prove_le(0, lo, self.facts)
                        and self.prover.prove_lt(hi, extent, self.facts)):
                    continue
                access = f"{what} {buffer.name}[{', '.join(_text(i) for i in indices)}]"
                if self.leaves_buffer(lo, hi, extent):
                    self.fail(f"{access}: index {_text(index)} of dimension {k} leaves [0, "
                              f"{_text(extent)}){self.range_note(index)}; guard the access "
                              "(if / T.where / T.if_then_else) or fix the loop bounds", node)
                self.add_runtime_check(access, lo, hi, extent)

    def leaves_buffer(self, lo, hi, extent) -> bool:
        """The access is reached unconditionally and its index, an affine function of loop
        variables of constant ranges (each once), takes a value outside ``[0, extent)``:
        then the interval of the index is exact and the access provably goes out."""
        if self.conditional or self.guards or lo is not hi or not isinstance(extent, E.IntImm):
            return False
        if not _is_affine_once(self.prover.analyzer.simplify(lo), self.loop_vars):
            return False
        bound = self.prover.analyzer.const_int_bound(lo)
        return bound.min_value < 0 or bound.max_value >= extent.value

    def add_runtime_check(self, access, lo, hi, extent):
        in_bounds = O.logical_and(O.less_equal(E.IntImm(lo.dtype, 0), lo),
                                  O.less(*same_dtype(hi, extent)))
        if self.guards:  # only where the Select branch holding the access is taken
            taken = self.guards[0]
            for cond in self.guards[1:]:
                taken = O.logical_and(taken, cond)
            in_bounds = O.logical_or(O.logical_not(taken), in_bounds)
        where = f"PrimFunc {self.func_name}"
        if self.blocks:
            where += f", block {self.blocks[-1]}"
        span = next((s for s in reversed(self.spans) if s is not None), None)
        if span is not None:
            where += f" ({span})"
        message = f"{where}: {access}: index out of bounds"
        self.runtime_checks.append(RuntimeCheck(self.stmts[-1], in_bounds, message))

    def range_note(self, index):
        if parse_dtype(index.dtype).lanes != 1:
            return ""
        bound = self.prover.analyzer.const_int_bound(index)
        if abs(bound.min_value) >= 1 << 62 or abs(bound.max_value) >= 1 << 62:
            return ""
        return f" (it ranges over [{bound.min_value}, {bound.max_value}])"

    # -- expressions ------------------------------------------------------------------------
    def visit_expr(self, root):
        """Checks every variable use and buffer load under ``root``, each with the guards
        that hold there (iterative: expression depth is unbounded)."""
        if isinstance(root, _CONSTANTS):
            return
        seen = {}
        stack = [(root, self.facts, ())]
        while stack:
            e, facts, guards = stack.pop()
            key = (id(e), id(facts), id(guards))
            if key in seen:
                continue
            seen[key] = (facts, guards)  # keeps them alive: their ids stay theirs
            stack += self.expr_children(e, facts, guards)

    def expr_children(self, e, facts, guards):
        if isinstance(e, _CONSTANTS):
            return []
        if isinstance(e, E.Var):
            self.use(e, e)
            return []
        if isinstance(e, E.BufferLoad):
            self.check_buffer_defined(e.buffer, e)
            saved = self.facts, self.guards
            self.facts, self.guards = facts, guards
            try:
                self.check_access(e.buffer, e.indices, "load from", e)
            finally:
                self.facts, self.guards = saved
            return [(i, facts, guards) for i in e.indices]
        cond = branches = None
        if isinstance(e, E.Select):
            cond, branches = e.condition, (e.true_value, e.false_value)
        elif isinstance(e, E.Call) and e.op == "tir.if_then_else":
            cond, branches = e.args[0], e.args[1:]
        if cond is not None and parse_dtype(cond.dtype).lanes == 1:
            return [(cond, facts, guards),
                    (branches[0], facts + tuple(facts_of(cond)), guards + (cond,)),
                    (branches[1], facts + tuple(negated_facts(cond)),
                     guards + (O.logical_not(cond),))]
        if isinstance(e, E.Let):
            self.define(e.var)
            self.prover.bind_value(e.var, e.value)
        return [(c, facts, guards) for c in expr_children(e) if isinstance(c, E.PrimExpr)]


def _is_affine_once(e, loop_vars) -> bool:
    """``e`` is a sum of constant multiples of distinct variables of ``loop_vars``."""
    seen = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, (E.Add, E.Sub)):
            stack += [x.a, x.b]
        elif isinstance(x, E.Mul) and isinstance(x.b, E.IntImm):
            stack.append(x.a)
        elif isinstance(x, E.Mul) and isinstance(x.a, E.IntImm):
            stack.append(x.b)
        elif isinstance(x, E.Var):
            if x not in loop_vars or x in seen:
                return False
            seen.add(x)
        elif not isinstance(x, E.IntImm):
            return False
    return True


def _lane_extremes(index):
    """``[(lowest, highest)]`` scalar index expressions covering every lane of ``index``."""
    if parse_dtype(index.dtype).lanes == 1:
        return [(index, index)]
    if isinstance(index, E.Ramp):
        last = index.base + index.stride * (index.lanes - 1)
        if isinstance(index.stride, E.IntImm) and index.stride.value < 0:
            return [(last, index.base)]
        return [(index.base, last)]
    if isinstance(index, E.Broadcast):
        return [(index.value, index.value)]
    if isinstance(index, (E.Add, E.Sub)):
        pairs = []
        for a_lo, a_hi in _lane_extremes(index.a):
            for b_lo, b_hi in _lane_extremes(index.b):
                pairs.append((a_lo + b_lo, a_hi + b_hi) if isinstance(index, E.Add)
                             else (a_lo - b_hi, a_hi - b_lo))
        return pairs
    raise WellFormedError(f"verify_well_formed: cannot bound the vector index "
                          f"{_text(index)}", index)


__all__ = ["verify_well_formed", "memory_safety_checks", "RuntimeCheck", "WellFormedError"]
