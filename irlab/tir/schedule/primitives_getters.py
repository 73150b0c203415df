"""Getters and the tree helpers every primitive uses: find blocks and loops, their paths,
child blocks, producers/consumers, and copy-on-write replacement of one statement."""

from __future__ import annotations

from irlab.runtime.lru import LRUCache
from irlab.tir import stmt as S
from irlab.tir.functor import post_order_visit
from irlab.tir import expr as E
from irlab.tir.schedule.errors import ScheduleError

_REMOVED = object()


# Fields that never hold a statement: expressions, buffers, regions, names (by annotation),
# and the tuples of those. Skipping them makes the tree walks below (every primitive walks the
# whole function a few times) several times cheaper.
_NOT_STMT_TYPES = {"PrimExpr", "Var", "Buffer", "str", "int", "bool", "ForKind", "IterVar",
                   "Range"}
_NOT_STMT_FIELDS = {"span", "indices", "extents", "iter_vars", "reads", "writes",
                    "alloc_buffers", "match_buffers", "iter_values", "annotations"}
_STMT_FIELDS: dict = {}


def _stmt_fields(cls):
    """The fields of node class ``cls`` that may hold statements (directly or in a tuple)."""
    fields = _STMT_FIELDS.get(cls)
    if fields is None:
        annotations = {}
        for klass in reversed(cls.__mro__):
            annotations.update(klass.__dict__.get("__annotations__", {}))
        fields = tuple(f for f in cls._fields if f not in _NOT_STMT_FIELDS
                       and str(annotations.get(f, "")) not in _NOT_STMT_TYPES)
        _STMT_FIELDS[cls] = fields
    return fields


def stmt_children(node):
    """(field, index, child) for each statement directly under ``node``."""
    for name in _stmt_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, S.Stmt):
            yield name, None, value
        elif isinstance(value, tuple):
            for i, v in enumerate(value):
                if isinstance(v, S.Stmt):
                    yield name, i, v


def _child_stmts(node):
    """The statements directly under ``node``, in order (``stmt_children`` without names)."""
    out = []
    for name in _stmt_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, S.Stmt):
            out.append(value)
        elif isinstance(value, tuple):
            out.extend(v for v in value if isinstance(v, S.Stmt))
    return out


def walk(node, path=()):
    """Pre-order (stmt, ancestors) pairs of every statement under ``node``."""
    stack = [(node, path)]  # iterative: nested generators cost O(depth) per statement
    while stack:
        node, path = stack.pop()
        yield node, path
        children = _child_stmts(node)
        if children:
            below = path + (node,)
            stack.extend((child, below) for child in reversed(children))


class _Index:
    """Where every statement of one function body is: paths, loops by variable, blocks by
    name (first occurrence in pre-order, as a walk finds them)."""

    def __init__(self, body):
        self.body = body  # kept alive: the ids below stay unique
        self.paths, self.loops, self.blocks = {}, {}, {}
        for node, path in walk(body):
            self.paths.setdefault(id(node), path)
            if isinstance(node, S.For):
                self.loops.setdefault(node.loop_var, node)
            elif isinstance(node, S.BlockRealize):
                self.blocks.setdefault(node.block.name_hint, []).append(node)


# Function bodies are immutable, and a schedule looks the same body up many times between two
# primitives (handles to blocks and loops are names and variables): one walk per body.
_INDEXES = LRUCache(8)


def _index(func) -> _Index:
    body = func.body
    index = _INDEXES.get(id(body))
    if index is None or index.body is not body:
        index = _INDEXES[id(body)] = _Index(body)
    return index


def find_path(func, target):
    """The ancestors of ``target`` (outermost first), or None when it is not in ``func``."""
    return _index(func).paths.get(id(target))


def find_block(func, name):
    """The BlockRealize of the block called ``name``."""
    index = _index(func)
    found = index.blocks.get(name, ())
    if not found:
        names = sorted(index.blocks)
        raise ScheduleError(f"cannot find a block named {name!r}; blocks: {', '.join(names)}")
    if len(found) > 1:
        raise ScheduleError(f"{len(found)} blocks are named {name!r}")
    return found[0]


def find_loop(func, var):
    """The For node whose loop variable is ``var``."""
    loop = _index(func).loops.get(var)
    if loop is None:
        raise ScheduleError(f"loop {var.name_hint} is not in the function any more "
                            "(a later primitive replaced it)")
    return loop


def loops_of(func, realize):
    """The loops between ``realize`` and its scope block, outermost first."""
    path = find_path(func, realize)
    loops = []
    for node in reversed(path):
        if isinstance(node, S.Block):
            break
        if isinstance(node, S.For):
            loops.append(node)
    return loops[::-1]


def scope_of(func, node):
    """The innermost Block above ``node`` (None: the function body is the scope)."""
    for anc in reversed(find_path(func, node)):
        if isinstance(anc, S.Block):
            return anc
    return None


def child_realizes(node):
    """BlockRealizes under ``node`` with no other block in between, in program order."""
    out = []

    def visit(n):
        for child in _child_stmts(n):
            if isinstance(child, S.BlockRealize):
                out.append(child)
            elif not isinstance(child, S.Block):
                visit(child)

    if isinstance(node, S.BlockRealize):
        node = node.block
    visit(node)
    del visit  # a recursive closure is a cycle (function -> cell -> function)
    return out


def scope_realizes(func, realize):
    """Every block realize in the same scope as ``realize``."""
    scope = scope_of(func, realize)
    return child_realizes(scope if scope is not None else _FakeRoot(func.body))


class _FakeRoot:
    _fields = ("body",)

    def __init__(self, body):
        self.body = body


def _buffers(regions):
    return [r.buffer for r in regions]


def producers(func, realize):
    """Blocks of the same scope writing a buffer ``realize`` reads."""
    reads = _buffers(realize.block.reads)
    return [r for r in scope_realizes(func, realize) if r is not realize
            and any(b is w.buffer for b in reads for w in r.block.writes)]


def consumers(func, realize):
    """Blocks of the same scope reading a buffer ``realize`` writes."""
    writes = _buffers(realize.block.writes)
    return [r for r in scope_realizes(func, realize) if r is not realize
            and any(b is rd.buffer for b in writes for rd in r.block.reads)]


def check_sole_writer(func, realize, action):
    """Raise unless ``realize`` is the only block of its scope writing each buffer it writes
    (TVM's "dominant" block). Moving or inlining a block with another writer (a decomposed
    reduction's init or update, an overwrite) would reorder the writes."""
    name = realize.block.name_hint
    written = {id(w.buffer) for w in realize.block.writes}
    for other in scope_realizes(func, realize):
        if other is realize:
            continue
        for w in other.block.writes:
            if id(w.buffer) in written:
                raise ScheduleError(f"block {other.block.name_hint} also writes "
                                    f"{w.buffer.name}: block {name} is not its only writer "
                                    f"and cannot be {action} (it is not a complete block)")


def _rebuild(node, old, new):
    if node is old:
        return _REMOVED if new is None else new
    changes = {}
    for name in _stmt_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, S.Stmt):
            got = _rebuild(value, old, new)
            if got is not value:
                changes[name] = got
        elif isinstance(value, tuple) and any(isinstance(v, S.Stmt) for v in value):
            items = [_rebuild(v, old, new) if isinstance(v, S.Stmt) else v for v in value]
            if any(a is not b for a, b in zip(items, value)):
                changes[name] = tuple(v for v in items if v is not _REMOVED)
    if not changes:
        return node
    if isinstance(node, S.SeqStmt):
        seq = changes["seq"]
        if not seq:
            return _REMOVED
        return seq[0] if len(seq) == 1 else S.SeqStmt(seq)
    for name, value in changes.items():
        if value is _REMOVED:
            if isinstance(node, S.Block) and name == "init":
                changes[name] = None
            elif name in ("body", "then_case", "block"):
                return _REMOVED  # an emptied loop (or scope) disappears with its content
            else:
                changes[name] = None
    return node.with_fields(**changes)


def replace(func, old, new):
    """``func`` with statement ``old`` replaced by ``new`` (None removes it, and any loops
    left empty by the removal)."""
    body = _rebuild(func.body, old, new)
    if body is _REMOVED:
        raise ScheduleError("the transformation would leave the function empty")
    return func.with_fields(body=body)


def uses_var(node, var):
    """Whether ``var`` occurs in ``node``."""
    found = []

    def check(n):
        if n is var:
            found.append(n)

    post_order_visit(node, check)
    return bool(found)


def is_const(e, value=None):
    return isinstance(e, E.IntImm) and (value is None or e.value == value)
