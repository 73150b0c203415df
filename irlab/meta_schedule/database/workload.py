"""``Workload`` and ``TuningRecord``: what a tuning database stores, in TVM's JSON shapes.

A workload line is ``[shash, module]`` and a record line is ``[workload_index, [trace,
run_secs, target, args_info]]``, as TVM writes them; irlab stores the module as TVMScript
text (TVM stores its node JSON) and the target as its string.
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir import IRModule, structural_hash

# A run that failed is stored with this time, as TVM does (``1e10`` seconds).
MAX_RUN_SECS = 1e10

# Where a record comes from (``TuningRecord.origin``): a tuner's candidate (None), TOPI's
# schedule timed as a baseline, and the two kinds a final verification commits.
ORIGINS = (None, "default", "verified-default", "verified")


def normalize_mod(mod) -> IRModule:
    """``mod`` as a one-function module whose function is ``main``: a workload is keyed by its
    computation, not by the name LowerTE or the user gave it."""
    from irlab.meta_schedule.arg_info import entry_func
    from irlab.tir import PrimFunc

    if isinstance(mod, PrimFunc):
        func = mod
    elif isinstance(mod, IRModule):
        func = entry_func(mod)
    else:
        raise IrlabError(f"MetaSchedule: expected an IRModule or a PrimFunc, got "
                         f"{type(mod).__name__}")
    if not isinstance(func, PrimFunc):
        raise IrlabError(f"MetaSchedule tunes PrimFuncs, got a {type(func).__name__}")
    func = func.with_attr("global_symbol", "main")
    return IRModule({"main": func})


# Function attributes that hint how to schedule, not what is computed: a workload is the
# same with or without them (a database tuned before TOPI marked its weights still applies).
HINT_ATTRS = ("layout_free_buffers",)


def computation_of(mod) -> IRModule:
    """``normalize_mod(mod)`` without the scheduling hints (``HINT_ATTRS``): what a
    workload is keyed and compared by."""
    mod = normalize_mod(mod)
    func = mod["main"]
    if not any(key in (func.attrs or {}) for key in HINT_ATTRS):
        return mod
    for key in HINT_ATTRS:
        func = func.without_attr(key)
    return IRModule({"main": func})


class Workload:
    """A module being tuned; ``shash`` is the structural hash of its computation (in this
    process; ``computation_of``)."""

    def __init__(self, mod):
        self.mod = normalize_mod(mod)
        self.computation = computation_of(self.mod)
        self.shash = structural_hash(self.computation)

    def as_json(self):
        return [hex(self.shash & (2 ** 64 - 1)), self.mod.script()]

    @staticmethod
    def from_json(json_obj) -> "Workload":
        """Parse a workload line; the hash is recomputed (Python's hash is per process)."""
        from irlab.script.parser import from_source

        if not (isinstance(json_obj, list) and len(json_obj) == 2
                and isinstance(json_obj[1], str)):
            raise IrlabError(f"not a workload: expected [shash, module text], got "
                             f"{str(json_obj)[:80]}")
        return Workload(from_source(json_obj[1]))

    def __repr__(self):
        name = self.mod["main"].attrs.get("global_symbol", "main")
        return f"Workload({name}, shash={self.shash & 0xFFFFFFFF:08x})"


class TuningRecord:
    """One measured (or to-be-measured) schedule of a workload.

    ``run_secs`` is a list of seconds (None: not measured; ``[1e10]``: failed). The trace is
    replayed from its JSON on first use when the record was read from a file. ``origin``
    (``ORIGINS``): None for a tuner's candidate, ``"default"`` for the schedule an untuned
    build uses (TOPI's, timed as a baseline), ``"verified-default"`` / ``"verified"`` for
    TOPI's schedule / a tuned one re-timed in a final verification, interleaved with each
    other (``meta_schedule/verification.py``: ``run_secs`` holds one time per round). Only a
    record with an origin writes it, as a fifth JSON field, so older files still load.
    """

    def __init__(self, trace, workload, run_secs=None, target=None, args_info=None,
                 *, trace_json=None, origin=None):
        from irlab.target import as_target

        if trace is None and trace_json is None:
            raise IrlabError("TuningRecord needs a trace")
        self._trace = trace
        self._trace_json = trace_json
        self.workload = workload
        self.run_secs = None if run_secs is None else [float(s) for s in run_secs]
        self.target = None if target is None else as_target(target)
        self.args_info = list(args_info) if args_info is not None else None
        if origin not in ORIGINS:
            raise IrlabError(f"TuningRecord: origin must be one of {ORIGINS}, got {origin!r}")
        self.origin = origin

    @property
    def trace(self):
        if self._trace is None:
            self._trace = replay_trace_json(self._trace_json, self.workload.mod).trace
        return self._trace

    @property
    def trace_json(self):
        if self._trace_json is None:
            self._trace_json = self._trace.as_json()
        return self._trace_json

    @property
    def is_valid(self) -> bool:
        """Measured and successful: has run times, none of them the failure marker."""
        return bool(self.run_secs) and all(s < MAX_RUN_SECS for s in self.run_secs)

    @property
    def mean_secs(self) -> float:
        return sum(self.run_secs) / len(self.run_secs) if self.is_valid else MAX_RUN_SECS

    def as_measure_candidate(self):
        from irlab.meta_schedule.search_strategy import MeasureCandidate

        return MeasureCandidate(self.schedule(), self.args_info)

    def schedule(self):
        """A ``tir.Schedule`` of the workload with this record's trace applied."""
        return replay_trace_json(self.trace_json, self.workload.mod)

    def as_json(self):
        out = [self.trace_json, self.run_secs,
               None if self.target is None else str(self.target),
               None if self.args_info is None else [a.as_json() for a in self.args_info]]
        return out if self.origin is None else out + [self.origin]

    @staticmethod
    def from_json(json_obj, workload) -> "TuningRecord":
        from irlab.meta_schedule.arg_info import ArgInfo

        if not (isinstance(json_obj, list) and len(json_obj) in (4, 5)):
            raise IrlabError(f"not a tuning record: expected [trace, run_secs, target, "
                             f"args_info(, origin)], got {str(json_obj)[:80]}")
        trace, run_secs, target, args = json_obj[:4]
        origin = json_obj[4] if len(json_obj) == 5 else None
        if run_secs is not None and not all(isinstance(s, (int, float)) for s in run_secs):
            raise IrlabError(f"tuning record: run_secs must be numbers, got {run_secs!r}")
        args_info = None if args is None else [ArgInfo.from_json(a) for a in args]
        return TuningRecord(None, workload, run_secs, target, args_info, trace_json=trace,
                            origin=origin)

    def __repr__(self):
        secs = "unmeasured" if self.run_secs is None else \
            ("failed" if not self.is_valid else f"{self.mean_secs * 1e3:.4f} ms")
        return f"TuningRecord({self.workload!r}, {secs}, target={self.target})"


def replay_trace_json(trace_json, mod):
    """A new ``tir.Schedule`` of ``mod`` with the JSON trace (and its decisions) applied."""
    from irlab.tir.schedule import Schedule, Trace

    sch = Schedule(mod)
    Trace.apply_json_to_schedule(trace_json, sch)
    return sch
