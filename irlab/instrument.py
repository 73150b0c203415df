"""Pass instruments (``tvm.instrument``): observers called around every pass.

The protocol (see ``PassContext``): ``enter_pass_ctx`` / ``exit_pass_ctx`` when a context with
the instrument is entered/left; for each pass ``should_run`` (all instruments asked, results
ANDed), then ``run_before_pass``, the pass, ``run_after_pass``. Nested passes (a Sequential's
members, required passes, the InferType closing every function pass) get nested calls.

Built-ins as TVM's: ``PassTimingInstrument``, ``PrintBeforeAll``, ``PrintAfterAll``,
``PassPrintingInstrument``. Ours: ``IRSnapshot`` (every pass's module before/after, timing,
structural change, counts: the engine of the pass stepper) and ``VerifyAfterEach``.
"""

from __future__ import annotations

import inspect
import time
from collections import Counter
from dataclasses import dataclass, field

from irlab.errors import DiagnosticError, IrlabError
from irlab.ir.module import IRModule


class PassInstrument:
    """Base class of instruments. A subclass defines any of these callbacks; the ones it does
    not define are not called (so mixing in a class that defines them works, as in TVM):

    - ``enter_pass_ctx(self)`` / ``exit_pass_ctx(self)``: a PassContext holding it is
      entered / left;
    - ``should_run(self, mod, info) -> bool``: False skips the pass (unless the context
      requires it);
    - ``run_before_pass(self, mod, info)`` / ``run_after_pass(self, mod, info)``: the input /
      output module around each pass.
    """

    def __init__(self):
        pass

    @property
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return self.name


def pass_instrument(pi_cls=None):
    """Class decorator: make a plain class with some of the callbacks a ``PassInstrument``."""

    def create(cls):
        if not inspect.isclass(cls):
            raise TypeError("pi_cls must be a class")
        if issubclass(cls, PassInstrument):
            return cls
        wrapped = type(cls.__name__, (cls, PassInstrument), {"__doc__": cls.__doc__,
                                                             "__module__": cls.__module__})
        return wrapped

    return create(pi_cls) if pi_cls is not None else create


# ---------------------------------------------------------------------------------------------
# TVM's built-ins
class _Profile:
    __slots__ = ("name", "start", "duration", "children")

    def __init__(self, name):
        self.name = name
        self.start = time.perf_counter()
        self.duration = 0.0
        self.children = []


class PassTimingInstrument(PassInstrument):
    """Times every pass (nested ones under their parent). Call ``render()`` inside the context."""

    def __init__(self):
        super().__init__()
        self._root = _Profile("root")
        self._stack = [self._root]

    def run_before_pass(self, mod, info):
        profile = _Profile(info.name)
        self._stack[-1].children.append(profile)
        self._stack.append(profile)

    def run_after_pass(self, mod, info):
        profile = self._stack.pop()
        profile.duration = time.perf_counter() - profile.start

    def exit_pass_ctx(self):
        self._root.children.clear()
        del self._stack[1:]

    def render(self) -> str:
        """TVM's format: ``\\t*depth name: <total>us [<self>us] (<% of all>%; <% of parent>%)``."""
        if len(self._stack) > 1:
            raise IrlabError("cannot print pass profile while still in a pass!")
        top = self._root.children
        if not top:
            import warnings

            warnings.warn("no passes have been profiled, did you enable pass profiling?")
            return ""
        total = sum(p.duration for p in top) or 1e-12
        lines = []
        stack = [(0, total, p) for p in reversed(top)]
        while stack:
            depth, parent, profile = stack.pop()
            own = profile.duration - sum(c.duration for c in profile.children)
            for child in reversed(profile.children):
                stack.append((depth + 1, profile.duration or 1e-12, child))
            lines.append(f"{chr(9) * depth}{profile.name}: {profile.duration * 1e6:.0f}us "
                         f"[{own * 1e6:.0f}us] ({profile.duration / total * 100:.2f}%; "
                         f"{profile.duration / parent * 100:.2f}%)\n")
        return "".join(lines)


class PrintBeforeAll(PassInstrument):
    """Prints the module before every pass."""

    def run_before_pass(self, mod, info):
        print(f"Before Running Pass: {info}")
        print(mod)


class PrintAfterAll(PassInstrument):
    """Prints the module after every pass."""

    def run_after_pass(self, mod, info):
        print(f"After Running Pass: {info}")
        print(mod)


class PassPrintingInstrument(PassInstrument):
    """Prints the module before/after the passes named in the two lists."""

    def __init__(self, print_before_pass_names=(), print_after_pass_names=()):
        super().__init__()
        self.print_before_pass_names = list(print_before_pass_names or ())
        self.print_after_pass_names = list(print_after_pass_names or ())

    def run_before_pass(self, mod, info):
        if info.name in self.print_before_pass_names:
            print(f"Print IR before: {info.name}\n{mod}\n\n")

    def run_after_pass(self, mod, info):
        if info.name in self.print_after_pass_names:
            print(f"Print IR after: {info.name}\n{mod}\n\n")


# ---------------------------------------------------------------------------------------------
# ours
# What the IR layers (above this one) tell the instruments about their functions: a node
# counter per function class, and module verifiers. Relay and TIR register theirs on import.
_NODE_COUNTERS: dict = {}
_MODULE_VERIFIERS: list = []


def register_node_counter(func_class, counter):
    """``counter(func, ops: Counter) -> int``: the distinct nodes of ``func``; adds what it
    calls or holds (op names; loops, blocks...) to ``ops``."""
    _NODE_COUNTERS[func_class] = counter


def register_module_verifier(verifier):
    """``verifier(mod)`` raises a DiagnosticError naming the node when ``mod`` is invalid."""
    _MODULE_VERIFIERS.append(verifier)


def module_counts(mod: IRModule, cache: dict | None = None):
    """(distinct node count, op call counts) over every function of ``mod``: for a Relay
    function its nodes and op calls; for a PrimFunc its statements and expressions, and its
    loops/blocks/stores/allocates. ``cache`` (a dict kept by the caller) remembers each
    function object's counts, so a function a pass left as it was is not walked again."""
    nodes = 0
    ops = Counter()
    for func in mod.functions.values():
        hit = cache.get(id(func)) if cache is not None else None
        if hit is not None and hit[0] is func:
            nodes += hit[1]
            ops.update(hit[2])
            continue
        counter = next((_NODE_COUNTERS[c] for c in type(func).__mro__ if c in _NODE_COUNTERS),
                       None)
        if counter is None:
            continue
        func_ops = Counter()
        count = counter(func, func_ops)
        if cache is not None:
            cache[id(func)] = (func, count, func_ops)  # func kept: its id stays its own
        nodes += count
        ops.update(func_ops)
    return nodes, ops


def modules_identical(a: IRModule, b: IRModule) -> bool:
    """Same functions under the same names, by identity (a cheap 'nothing changed' test)."""
    if a is b:
        return True
    fa, fb = a.functions, b.functions
    if len(fa) != len(fb):
        return False
    by_name = {gv.name_hint: f for gv, f in fb.items()}
    return all(by_name.get(gv.name_hint) is f for gv, f in fa.items())


@dataclass
class PassRecord:
    """One pass run seen by ``IRSnapshot``."""

    index: int
    name: str
    depth: int
    opt_level: int
    required: list
    parent: int | None
    before: IRModule
    after: IRModule | None = None
    seconds: float = 0.0
    changed: bool = False
    node_count: int = 0
    op_counts: Counter = field(default_factory=Counter)


class IRSnapshot(PassInstrument):
    """Records every pass that runs, nested ones included, in the order they start.

    Each ``PassRecord`` has the name, nesting depth, opt level, the module before and after,
    wall time, whether the program changed structurally, and node/op counts after the pass.
    Modules are immutable values in practice (passes return new modules), so keeping them costs
    little: the record holds references, plus a shallow copy of the input's function table.
    """

    def __init__(self, track_counts=True):
        super().__init__()
        self.track_counts = track_counts
        self.records: list[PassRecord] = []
        self._open: list[tuple[PassRecord, float]] = []
        self._counted: dict = {}  # id(function) -> (function, nodes, op counts)

    def enter_pass_ctx(self):
        self._open.clear()

    def run_before_pass(self, mod, info):
        parent = self._open[-1][0].index if self._open else None
        record = PassRecord(len(self.records), info.name, len(self._open), info.opt_level,
                            list(info.required), parent, mod.copy())
        self.records.append(record)
        self._open.append((record, time.perf_counter()))

    def run_after_pass(self, mod, info):
        record, start = self._open.pop()
        record.seconds = time.perf_counter() - start
        record.after = mod
        if modules_identical(record.before, mod):
            record.changed = False
        else:
            from irlab.ir.structural import structural_equal

            record.changed = not structural_equal(record.before, mod)
        if self.track_counts:
            record.node_count, record.op_counts = module_counts(mod, self._counted)

    def clear(self):
        self.records.clear()
        self._open.clear()

    def top_level(self) -> list:
        return [r for r in self.records if r.depth == 0]

    def children_of(self, record: PassRecord) -> list:
        return [r for r in self.records if r.parent == record.index]

    def changed(self) -> list:
        return [r for r in self.records if r.changed]

    def summary(self) -> str:
        """One line per pass: indentation by depth, time, change mark and op count."""
        lines = []
        for r in self.records:
            mark = "*" if r.changed else " "
            lines.append(f"{'  ' * r.depth}{mark} {r.name} ({r.seconds * 1e3:.2f} ms, "
                         f"{sum(r.op_counts.values())} ops)")
        return "\n".join(lines)

    def __len__(self):
        return len(self.records)

    def __iter__(self):
        return iter(self.records)

    def __getitem__(self, index):
        return self.records[index]


class VerifyAfterEach(PassInstrument):
    """After every pass: the module is well formed and type-checks (the verifiers the IRs
    registered). A failure names the pass and the offending node."""

    def run_after_pass(self, mod, info):
        try:
            for verify in _MODULE_VERIFIERS:
                verify(mod)
        except DiagnosticError as err:
            raise VerificationError(
                f"after pass {info.name}: the module is invalid: {err}", err.node) from err


class VerificationError(DiagnosticError):
    """``VerifyAfterEach`` found an ill-formed or ill-typed module after a pass."""


__all__ = ["PassInstrument", "pass_instrument", "PassTimingInstrument", "PrintBeforeAll",
           "PrintAfterAll", "PassPrintingInstrument", "IRSnapshot", "PassRecord",
           "VerifyAfterEach", "VerificationError", "module_counts", "register_node_counter",
           "register_module_verifier"]
