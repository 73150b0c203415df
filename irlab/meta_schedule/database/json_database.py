"""``JSONDatabase``: a database in TVM's two append-only files of JSON lines.

``database_workload.json`` holds one workload per line and ``database_tuning_record.json``
one record per line, naming its workload by line index. Each commit appends a line and
flushes it (and fsyncs), so a tuner killed mid-run loses no record it measured, and a new
``JSONDatabase`` on the same files resumes from them. A line that does not parse is skipped
with a warning naming the file and the line; the rest still loads.
"""

from __future__ import annotations

import json
import os
import warnings

from irlab.errors import IrlabError
from irlab.meta_schedule.database.database import Database
from irlab.meta_schedule.database.workload import TuningRecord, Workload

WORKLOAD_FILE = "database_workload.json"
RECORD_FILE = "database_tuning_record.json"


class DatabaseWarning(UserWarning):
    """A database line was skipped (it names the file and the line)."""


class JSONDatabase(Database):
    """Workloads and records read from, and appended to, two JSON-lines files.

    Give ``work_dir`` (the files get TVM's names inside it) or both paths.
    """

    def __init__(self, path_workload=None, path_tuning_record=None, *, work_dir=None,
                 allow_missing=True, module_equality="structural"):
        super().__init__()
        if work_dir is not None:
            os.makedirs(work_dir, exist_ok=True)
            path_workload = path_workload or os.path.join(work_dir, WORKLOAD_FILE)
            path_tuning_record = path_tuning_record or os.path.join(work_dir, RECORD_FILE)
        if path_workload is None or path_tuning_record is None:
            raise IrlabError("JSONDatabase: give work_dir=, or both path_workload= and "
                             "path_tuning_record=")
        if module_equality != "structural":
            raise IrlabError(f"JSONDatabase: only module_equality='structural' is supported, "
                             f"got {module_equality!r}")
        self.path_workload = os.fspath(path_workload)
        self.path_tuning_record = os.fspath(path_tuning_record)
        for path in (self.path_workload, self.path_tuning_record):
            if not os.path.exists(path) and not allow_missing:
                raise IrlabError(f"JSONDatabase: {path} does not exist (allow_missing=False)")
        self._index = {}            # id(workload) -> line index in the workload file
        self._by_line = []          # line index -> Workload (None for a skipped line)
        self._loading = True
        self._load()
        self._loading = False
        for path in (self.path_workload, self.path_tuning_record):
            _end_with_newline(path)

    # -- reading ---------------------------------------------------------------------
    def _load(self):
        for lineno, obj in _json_lines(self.path_workload):
            try:
                workload = Workload.from_json(obj)
            except Exception as err:  # a bad line must not lose the rest
                _warn_line(self.path_workload, lineno, err)
                self._by_line.append(None)
                continue
            known, _ = self._find(workload.mod)
            target = known or self._add_workload(workload)
            self._index.setdefault(id(target), len(self._by_line))
            self._by_line.append(target)
        for lineno, obj in _json_lines(self.path_tuning_record):
            try:
                record = self._record_from_line(obj)
            except Exception as err:
                _warn_line(self.path_tuning_record, lineno, err)
                continue
            self._records[id(record.workload)].append(record)
            self._measured_order.append(record)

    def _record_from_line(self, obj):
        if not (isinstance(obj, list) and len(obj) == 2 and isinstance(obj[0], int)):
            raise IrlabError(f"expected [workload_index, record], got {str(obj)[:80]}")
        index, body = obj
        if not 0 <= index < len(self._by_line) or self._by_line[index] is None:
            raise IrlabError(f"workload index {index} names no workload line that loaded")
        return TuningRecord.from_json(body, self._by_line[index])

    # -- writing ---------------------------------------------------------------------
    def _persist_workload(self, workload):
        self._index[id(workload)] = len(self._by_line)
        self._by_line.append(workload)
        _append_line(self.path_workload, workload.as_json())

    def _persist_record(self, record):
        if self._loading:
            return
        _append_line(self.path_tuning_record, [self._index[id(record.workload)],
                                               record.as_json()])

    def __repr__(self):
        verified = self.verified_workloads()
        return (f"JSONDatabase({self.path_workload!r}, {len(self._order)} workloads, "
                f"{len(self)} records{f', {verified} verified' if verified else ''})")


def _json_lines(path):
    """``(line number, parsed JSON)`` for each non-blank line; a line that is not JSON is
    yielded as the exception, so the caller warns about it."""
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as err:
                _warn_line(path, lineno, err)


def _warn_line(path, lineno, err):
    warnings.warn(f"{path}:{lineno}: skipped a database line that does not load "
                  f"({type(err).__name__}: {err})", DatabaseWarning, stacklevel=4)


def _end_with_newline(path):
    """A line cut short by a killed writer is closed, so the next append starts afresh."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return
    with open(path, "rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) != b"\n":
            f.write(b"\n")


def _append_line(path, obj):
    """Append one JSON line and make it durable before returning."""
    text = json.dumps(obj, separators=(",", ":")) + "\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
