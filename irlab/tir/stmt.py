"""TIR statements: stores, loops, blocks, scopes. Statements hash and compare by identity."""

from __future__ import annotations

import enum

import numpy as np

from irlab.errors import TIRError
from irlab.runtime.dtype import normalize_dtype, to_numpy_dtype
from irlab.ir.node import Node
from irlab.tir.buffer import Buffer, BufferRegion, MatchBufferRegion, Range
from irlab.tir.expr import PrimExpr, Var, convert, _check_bool


class Stmt(Node):
    """Base of statements."""

    _non_structural = ("span",)

    def astext(self) -> str:
        from irlab.tir.text import stmt_to_text

        return stmt_to_text(self)


def _dict(value):
    return dict(value or {})


class Annotations(tuple):
    """Annotations: a sorted tuple of (key, value) pairs (hashable, comparable) that is also
    read by key, as TVM's Map: ``loop.annotations["pragma_unroll"]``."""

    def __getitem__(self, key):
        if isinstance(key, str):
            for k, v in self:
                if k == key:
                    return v
            raise KeyError(key)
        return tuple.__getitem__(self, key)

    def __contains__(self, key):
        if isinstance(key, str):
            return any(k == key for k, _ in self)
        return tuple.__contains__(self, key)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def keys(self):
        return [k for k, _ in self]

    def items(self):
        return list(self)


def _freeze(annotations):
    """Annotations are stored as a sorted tuple of (key, value) pairs (hashable, comparable)."""
    if not annotations:
        return ()
    items = annotations.items() if isinstance(annotations, dict) else annotations
    return Annotations(sorted(items, key=lambda kv: kv[0]))


class BufferStore(Stmt):
    """``buffer[indices] = value``; the value's dtype must be the loaded dtype."""

    buffer: Buffer
    value: PrimExpr
    indices: tuple
    span: object

    def __init__(self, buffer, value, indices, span=None):
        indices = tuple(convert(i) for i in indices)
        if len(indices) != len(buffer.shape):
            raise TIRError(f"store to {buffer.name} has {len(indices)} indices for "
                           f"{len(buffer.shape)} dimensions")
        value = convert(value, buffer.dtype if not isinstance(value, PrimExpr) else None)
        super().__init__(buffer, value, indices, span)


class ForKind(enum.IntEnum):
    """How a loop runs: all kinds mean the same iterations in sequence to the interpreter."""

    SERIAL = 0
    PARALLEL = 1
    VECTORIZED = 2
    UNROLLED = 3
    THREAD_BINDING = 4


class IterVar(Node):
    """An iteration variable: ``var`` ranges over ``dom``; ``iter_type`` is one of the
    constants below (block iter vars are DataPar or CommReduce); ``thread_tag`` names a GPU
    thread axis."""

    DataPar = 0
    ThreadIndex = 1
    CommReduce = 2
    Ordered = 3
    DimInfo = 4
    Unrolled = 5
    Vectorized = 6
    Parallelized = 7
    Tensorized = 8

    _non_structural = ("span",)
    # An IterVar defines its variable (a thread-bound loop's thread var is bound here).
    _bind_fields = ("var",)
    dom: Range
    var: Var
    iter_type: int
    thread_tag: str
    span: object

    def __init__(self, dom, var, iter_type, thread_tag="", span=None):
        if dom is not None and not isinstance(dom, Range):
            dom = Range(*dom) if isinstance(dom, (tuple, list)) else Range(dom)
        if isinstance(var, str):
            var = Var(var, dom.extent.dtype if dom is not None else "int32")
        super().__init__(dom, var, int(iter_type), thread_tag, span)

    __hash__ = object.__hash__  # identity, in C

    def __eq__(self, other):
        return self is other



def _forward_to_var(name):
    def method(self, *args):
        return getattr(self.var, name)(*args)
    method.__name__ = name
    return method


# In expressions an IterVar stands for its variable (TVM's IterVar mixes in ExprOp), so
# ``k + 1`` or ``te.floormod(k, 2)`` work on a reduce axis. Equality stays identity.
for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__pow__", "__rpow__", "__neg__", "__lshift__", "__rlshift__",
              "__rshift__", "__rrshift__", "__and__", "__rand__", "__or__", "__ror__",
              "__xor__", "__rxor__", "__invert__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(IterVar, _name, _forward_to_var(_name))

class For(Stmt):
    """``for loop_var in range(min, min + extent)``; ``loop_var`` is bound here."""

    _bind_fields = ("loop_var",)
    loop_var: Var
    min: PrimExpr
    extent: PrimExpr
    kind: ForKind
    body: Stmt
    thread_binding: IterVar
    annotations: tuple
    span: object

    def __init__(self, loop_var, min, extent, kind=ForKind.SERIAL, body=None,  # noqa: A002
                 thread_binding=None, annotations=None, span=None):
        if body is None:
            raise TIRError("For needs a body")
        super().__init__(loop_var, convert(min, loop_var.dtype), convert(extent, loop_var.dtype),
                         ForKind(kind), body, thread_binding, _freeze(annotations), span)


class While(Stmt):
    """``while condition: body``."""

    condition: PrimExpr
    body: Stmt
    span: object

    def __init__(self, condition, body, span=None):
        super().__init__(_check_bool(condition, "While"), body, span)


class IfThenElse(Stmt):
    """``if condition: then_case else: else_case`` (else_case may be None)."""

    condition: PrimExpr
    then_case: Stmt
    else_case: Stmt
    span: object

    def __init__(self, condition, then_case, else_case=None, span=None):
        super().__init__(_check_bool(condition, "IfThenElse"), then_case, else_case, span)


class SeqStmt(Stmt):
    """Statements in sequence. Nested SeqStmts are flattened on construction."""

    seq: tuple
    span: object

    def __init__(self, seq, span=None):
        flat = []
        for s in seq:
            if isinstance(s, SeqStmt):
                flat.extend(s.seq)
            elif s is not None:
                flat.append(s)
        super().__init__(tuple(flat), span)

    def __len__(self):
        return len(self.seq)

    def __getitem__(self, i):
        return self.seq[i]

    @staticmethod
    def flatten(*stmts):
        """One statement for the given ones: the single one itself, else a SeqStmt."""
        seq = SeqStmt(stmts)
        return seq.seq[0] if len(seq.seq) == 1 else seq


class LetStmt(Stmt):
    """``var = value`` in scope of ``body``; ``var`` is bound here."""

    _bind_fields = ("var",)
    var: Var
    value: PrimExpr
    body: Stmt
    span: object

    def __init__(self, var, value, body, span=None):
        value = convert(value, var.dtype if not isinstance(value, PrimExpr) else None)
        if value.dtype != var.dtype:
            raise TIRError(f"LetStmt binds {var.name_hint}: {var.dtype} to a {value.dtype}")
        super().__init__(var, value, body, span)


class Allocate(Stmt):
    """Fresh storage of ``extents`` elements of ``dtype`` pointed to by ``buffer_var`` (bound
    here) in scope of ``body``; allocated only when ``condition`` holds."""

    _bind_fields = ("buffer_var",)
    buffer_var: Var
    dtype: str
    extents: tuple
    condition: PrimExpr
    body: Stmt
    annotations: tuple
    span: object

    def __init__(self, buffer_var, dtype, extents, condition=True, body=None, annotations=None,
                 span=None):
        super().__init__(buffer_var, normalize_dtype(dtype), tuple(convert(e) for e in extents),
                         convert(condition), body, _freeze(annotations), span)


class AllocateConst(Stmt):
    """Storage of ``extents`` elements of ``dtype`` holding the constants ``data`` (a flat
    tuple of Python numbers, row-major), pointed to by ``buffer_var`` (bound here) in scope
    of ``body`` (``T.allocate_const``)."""

    _bind_fields = ("buffer_var",)
    buffer_var: Var
    dtype: str
    extents: tuple
    data: tuple
    body: Stmt
    annotations: tuple
    span: object

    def __init__(self, buffer_var, dtype, extents, data, body=None, annotations=None,
                 span=None):
        dtype = normalize_dtype(dtype)
        extents = tuple(convert(e) for e in extents)
        values = np.asarray(data.numpy() if hasattr(data, "numpy") else data,
                            dtype=to_numpy_dtype(dtype)).reshape(-1)
        size = 1
        for e in extents:
            size *= int(e.value) if hasattr(e, "value") else 0
        if values.size != size:
            raise TIRError(f"T.allocate_const of extents {[str(e) for e in extents]} holds "
                           f"{size} elements, but {values.size} constants are given")
        super().__init__(buffer_var, dtype, extents, tuple(values.tolist()), body,
                         _freeze(annotations), span)


class DeclBuffer(Stmt):
    """Declares ``buffer`` (over storage allocated elsewhere) in scope of ``body``."""

    buffer: Buffer
    body: Stmt
    span: object


class AttrStmt(Stmt):
    """An attribute ``attr_key`` = ``value`` of ``node`` holding over ``body``
    (``thread_extent``, ``pragma_*``...)."""

    node: object
    attr_key: str
    value: PrimExpr
    body: Stmt
    span: object

    def __init__(self, node, attr_key, value, body, span=None):
        super().__init__(node, str(attr_key), convert(value), body, span)


class AssertStmt(Stmt):
    """Fails with ``message`` unless ``condition`` holds, then runs ``body``."""

    condition: PrimExpr
    message: PrimExpr
    body: Stmt
    span: object

    def __init__(self, condition, message, body, span=None):
        from irlab.tir.expr import StringImm

        if isinstance(message, str):
            message = StringImm(message)
        super().__init__(_check_bool(condition, "AssertStmt"), message, body, span)


class Evaluate(Stmt):
    """Evaluates ``value`` for its effect (a call)."""

    value: PrimExpr
    span: object

    def __init__(self, value, span=None):
        super().__init__(convert(value), span)


class Block(Stmt):
    """A unit of computation with its own iteration space.

    ``iter_vars`` (bound here, with their domains and DataPar/CommReduce kinds) are given
    values by the enclosing BlockRealize. ``reads``/``writes`` are BufferRegions; ``init``
    runs before the first step of a reduction (when every CommReduce iter var is at its
    domain's min); ``alloc_buffers`` and ``match_buffers`` define buffers local to the block.
    """

    iter_vars: tuple
    reads: tuple
    writes: tuple
    name_hint: str
    body: Stmt
    init: Stmt
    alloc_buffers: tuple
    match_buffers: tuple
    annotations: tuple
    span: object

    _bind_fields = ("defined_vars",)
    # As in TVM, a block's name is a label, not structure: renamed blocks compare equal.
    _non_structural = ("name_hint", "span")

    def __init__(self, iter_vars, reads, writes, name_hint, body, init=None, alloc_buffers=(),
                 match_buffers=(), annotations=None, span=None):
        super().__init__(tuple(iter_vars), tuple(reads), tuple(writes), str(name_hint), body,
                         init, tuple(alloc_buffers), tuple(match_buffers or ()),
                         _freeze(annotations), span)

    @property
    def defined_vars(self) -> tuple:
        """Variables this block defines: iter vars and the data of its local buffers."""
        out = [iv.var for iv in self.iter_vars]
        out += [b.data for b in self.alloc_buffers]
        out += [m.buffer.data for m in self.match_buffers]
        return tuple(out)


class BlockRealize(Stmt):
    """Runs ``block`` with its iter vars bound to ``iter_values`` when ``predicate`` holds."""

    iter_values: tuple
    predicate: PrimExpr
    block: Block
    span: object

    def __init__(self, iter_values, predicate, block, span=None):
        iter_values = tuple(convert(v) for v in iter_values)
        if len(iter_values) != len(block.iter_vars):
            raise TIRError(f"block {block.name_hint} has {len(block.iter_vars)} iter vars, "
                           f"realized with {len(iter_values)} values")
        super().__init__(iter_values, _check_bool(predicate, "BlockRealize"), block, span)


def stmt_seq(*stmts):
    """A single statement for a list of statements (SeqStmt when more than one)."""
    return SeqStmt.flatten(*stmts)


__all__ = ["Stmt", "BufferStore", "ForKind", "IterVar", "For", "While", "IfThenElse", "SeqStmt",
           "LetStmt", "Allocate", "DeclBuffer", "AttrStmt", "AssertStmt", "Evaluate", "Block",
           "BlockRealize", "MatchBufferRegion", "BufferRegion", "Range", "stmt_seq"]
