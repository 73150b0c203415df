"""``Database``: workloads and their tuning records, queried for the best schedule.

``MemoryDatabase`` keeps them in memory; ``JSONDatabase`` (json_database.py) also appends
them to files. ``with database:`` makes a database current, which ``relay.build`` and
``compile_tir`` consult (TVM's ``Database.current()``).
"""

from __future__ import annotations

import threading

from irlab.errors import IrlabError
from irlab.ir import structural_equal, structural_hash
from irlab.meta_schedule.database.verified import (VERIFIED_ORIGINS, choose_verified,
                                                   latest_verification)
from irlab.meta_schedule.database.workload import (TuningRecord, Workload, computation_of,
                                                  normalize_mod)
from irlab.runtime.registry import register_func

_scopes = threading.local()


class Database:
    """Workloads keyed by structural hash (then structural equality) and their records."""

    def __init__(self):
        self._workloads = {}      # shash -> [Workload]
        self._order = []          # workloads in commit order
        self._records = {}        # id(workload) -> [TuningRecord]
        self._measured_order = []  # every record, in the order it was committed / loaded
        self.task_scheduler = None  # set by tune_tasks: its tasks' statistics and history

    # -- workloads -------------------------------------------------------------------
    def _find(self, mod):
        mod = normalize_mod(mod)
        key = computation_of(mod)
        for workload in self._workloads.get(structural_hash(key), []):
            if structural_equal(workload.computation, key):
                return workload, mod
        return None, mod

    def has_workload(self, mod) -> bool:
        return self._find(mod)[0] is not None

    def commit_workload(self, mod) -> Workload:
        """The database's workload for ``mod``, added (and persisted) if new."""
        workload, mod = self._find(mod)
        if workload is None:
            workload = self._add_workload(Workload(mod))
            self._persist_workload(workload)
        return workload

    def _add_workload(self, workload):
        self._workloads.setdefault(workload.shash, []).append(workload)
        self._order.append(workload)
        self._records[id(workload)] = []
        return workload

    # -- records ---------------------------------------------------------------------
    def commit_tuning_record(self, record: TuningRecord) -> None:
        """Add ``record`` (its workload is committed first if needed)."""
        if not isinstance(record, TuningRecord):
            raise IrlabError(f"commit_tuning_record: expected a TuningRecord, got "
                             f"{type(record).__name__}")
        if id(record.workload) not in self._records:
            record.workload = self.commit_workload(record.workload.mod)
        self._records[id(record.workload)].append(record)
        self._measured_order.append(record)
        self._persist_record(record)

    def get_top_k(self, workload, top_k: int) -> list:
        """The ``top_k`` fastest successful records of ``workload``, fastest first. The final
        verification's records are left out: they re-time tuned records (and TOPI's) another
        way, a time per round, and only ``query_tuning_record`` weighs them."""
        if top_k < 0:
            raise IrlabError(f"get_top_k: top_k must be >= 0, got {top_k}")
        if not isinstance(workload, Workload):
            workload = self._find(workload)[0]
        if workload is None:
            return []
        valid = [r for r in self._records.get(id(workload), [])
                 if r.is_valid and r.origin not in VERIFIED_ORIGINS]
        return sorted(valid, key=lambda r: r.mean_secs)[:top_k]

    def get_all_tuning_records(self) -> list:
        return [r for w in self._order for r in self._records[id(w)]]

    def records_in_measured_order(self) -> list:
        """Every record in the order it was committed (a JSON database: its file's order),
        which for a tuning run is the order the candidates were measured."""
        return list(self._measured_order)

    def __len__(self):
        return sum(len(v) for v in self._records.values())

    # -- queries (TVM's names) ---------------------------------------------------------
    def query_tuning_record(self, mod, target=None, workload_name=None):
        """The best record of ``mod`` (for ``target`` when given), or None: the choice of
        its latest verification when it was verified (``database/verified.py``: a tuned
        record only when it beat TOPI's by more than the margin; the latest verification on
        ``target``'s thread count when there is one, see ``verify_best``), else the
        fastest."""
        workload = self._find(mod)[0]
        if workload is None:
            return None
        records = [r for r in self._records[id(workload)] if target is None
                   or r.target is None or _same_target(r.target, target)]
        group = []
        if target is not None:
            from irlab.target import as_target

            cores = as_target(target).num_cores
            group = latest_verification([r for r in records if r.target is not None
                                         and as_target(r.target).num_cores == cores])
        group = group or latest_verification(records)
        chosen = choose_verified(group) if group else None
        if chosen is not None:
            return chosen
        valid = [r for r in records if r.is_valid]
        return min(valid, key=lambda r: r.mean_secs, default=None)

    def verified_workloads(self) -> int:
        """How many workloads have a verification group (any target)."""
        return sum(bool(latest_verification(self._records[id(w)])) for w in self._order)

    def query_schedule(self, mod, target=None, workload_name=None):
        """The best ``tir.Schedule`` of ``mod``, or None. Its module is named as ``mod``'s."""
        record = self.query_tuning_record(mod, target, workload_name)
        return None if record is None else record.schedule()

    def query_ir_module(self, mod, target=None, workload_name=None):
        """The best scheduled IRModule of ``mod``, or None."""
        sch = self.query_schedule(mod, target, workload_name)
        return None if sch is None else sch.mod

    # -- persistence hooks (JSONDatabase writes files) --------------------------------------
    def _persist_workload(self, workload):
        pass

    def _persist_record(self, record):
        pass

    # -- scope -------------------------------------------------------------------------
    @staticmethod
    def current():
        """The database of the innermost ``with database:``, or None."""
        stack = getattr(_scopes, "stack", [])
        return stack[-1] if stack else None

    def __enter__(self):
        if not hasattr(_scopes, "stack"):
            _scopes.stack = []
        _scopes.stack.append(self)
        return self

    def __exit__(self, *exc):
        _scopes.stack.pop()

    def __repr__(self):
        verified = self.verified_workloads()
        return (f"{type(self).__name__}({len(self._order)} workloads, "
                f"{len(self)} records{f', {verified} verified' if verified else ''})")


def _same_target(a, b) -> bool:
    from irlab.target import as_target

    a, b = as_target(a), as_target(b)
    return a.kind == b.kind and a.mcpu == b.mcpu


class MemoryDatabase(Database):
    """A database kept in memory only (TVM's ``ms.database.MemoryDatabase``)."""

    def __init__(self, module_equality="structural"):
        if module_equality != "structural":
            raise IrlabError(f"MemoryDatabase: only module_equality='structural' is "
                             f"supported, got {module_equality!r}")
        super().__init__()


def _query_tuned_prim_func(prim_func, target):
    """relay's LowerTE hook: the best tuned ``tir.Schedule`` of ``prim_func`` from the
    database in scope (its trace, with the sampled decisions, is what the lowering explorer
    shows), None when there is none or when TOPI's schedule measured fastest (TOPI's
    schedule is used then)."""
    from irlab.meta_schedule.default_schedule import is_default_schedule

    database = Database.current()
    if database is None:
        return None
    record = database.query_tuning_record(prim_func, target)
    if record is None or is_default_schedule(record):  # TOPI's measured fastest: TOPI's own
        return None
    return record.schedule()


def _database_in_scope():
    return Database.current() is not None


register_func("relay.backend.meta_schedule.query_tuned_prim_func", _query_tuned_prim_func,
              override=True)
register_func("relay.backend.meta_schedule.database_in_scope", _database_in_scope,
              override=True)
