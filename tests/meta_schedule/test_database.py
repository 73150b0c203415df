"""ms.database: JSONDatabase round trip (fresh process), resume, corrupt lines; MemoryDatabase."""

import json
import os
import subprocess
import sys

import pytest

from irlab import meta_schedule as ms
from irlab.errors import IrlabError
from irlab.meta_schedule.arg_info import ArgInfo, TensorInfo
from ms_workloads import gemm_mod

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMPTY_TRACE = [[], []]  # TVM's JSON of a trace with no instructions and no decisions


def _record(db, mod, secs):
    workload = db.commit_workload(mod)
    return ms.database.TuningRecord(None, workload, secs, "llvm",
                                    ArgInfo.from_entry_func(mod), trace_json=EMPTY_TRACE)


def _fill(db):
    small, big = gemm_mod(16), gemm_mod(32)
    for secs in ([3e-3], [1e-3], [1e10], [2e-3]):
        db.commit_tuning_record(_record(db, small, secs))
    db.commit_tuning_record(_record(db, big, [5e-3]))
    return small, big


def test_memory_database_top_k_skips_failed_records():
    db = ms.database.MemoryDatabase()
    small, big = _fill(db)
    assert len(db) == 5 and db.has_workload(small) and not db.has_workload(gemm_mod(8))
    top = db.get_top_k(db.commit_workload(small), 3)
    assert [r.run_secs[0] for r in top] == [1e-3, 2e-3, 3e-3]
    assert db.query_tuning_record(small, "llvm").run_secs == [1e-3]
    assert db.query_tuning_record(gemm_mod(8), "llvm") is None
    with pytest.raises(IrlabError, match="top_k"):
        db.get_top_k(db.commit_workload(small), -1)


def test_workload_is_keyed_by_structure_not_name():
    db = ms.database.MemoryDatabase()
    a = db.commit_workload(gemm_mod(16))
    renamed = gemm_mod(16)
    func = renamed["main"].with_attr("global_symbol", "fused_dense")
    assert db.commit_workload(func) is a


def test_json_database_reloads_in_a_fresh_process(tmp_path):
    db = ms.database.JSONDatabase(work_dir=str(tmp_path))
    _fill(db)
    lines = (tmp_path / "database_tuning_record.json").read_text().splitlines()
    first = json.loads(lines[0])  # TVM's shape: [workload index, [trace, secs, target, args]]
    assert first[0] == 0 and first[1][0] == EMPTY_TRACE and first[1][2] == "llvm"
    assert first[1][3] == [["TENSOR", "float32", [16, 16]]] * 3
    script = (
        "import sys; sys.path.insert(0, %r); sys.path.insert(0, %r)\n"
        "from irlab import meta_schedule as ms\n"
        "from ms_workloads import gemm_mod\n"
        "db = ms.database.JSONDatabase(work_dir=%r)\n"
        "best = db.query_tuning_record(gemm_mod(16), 'llvm')\n"
        "print(len(db), best.run_secs[0], best.args_info[0])\n"
    ) % (ROOT, os.path.join(ROOT, "tests", "meta_schedule"), str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["5", "0.001", "TensorInfo('float32',", "[16,", "16])"]


def test_json_database_resumes_and_appends(tmp_path):
    small, _ = _fill(ms.database.JSONDatabase(work_dir=str(tmp_path)))
    again = ms.database.JSONDatabase(work_dir=str(tmp_path))
    again.commit_tuning_record(_record(again, small, [0.5e-3]))
    third = ms.database.JSONDatabase(work_dir=str(tmp_path))
    assert len(third) == 6
    assert third.query_tuning_record(small).run_secs == [0.5e-3]
    # the workload was not written twice
    assert len((tmp_path / "database_workload.json").read_text().splitlines()) == 2


def test_corrupt_line_is_skipped_with_file_and_line(tmp_path):
    small, _ = _fill(ms.database.JSONDatabase(work_dir=str(tmp_path)))
    path = tmp_path / "database_tuning_record.json"
    lines = path.read_text().splitlines()
    lines[1] = lines[1][: len(lines[1]) // 2]          # cut short, as by a killed writer
    lines.insert(3, '[7, [[[], []], [1.0], "llvm", null]]')  # names a missing workload
    path.write_text("\n".join(lines) + "\n")
    with pytest.warns(ms.database.DatabaseWarning) as caught:
        db = ms.database.JSONDatabase(work_dir=str(tmp_path))
    where = sorted(str(w.message).split(": skipped")[0] for w in caught)
    assert where == [f"{path}:2", f"{path}:4"]
    assert len(db) == 4


def test_unfinished_last_line_does_not_swallow_the_next_record(tmp_path):
    small, _ = _fill(ms.database.JSONDatabase(work_dir=str(tmp_path)))
    path = tmp_path / "database_tuning_record.json"
    with open(path, "a") as f:
        f.write('[0, [[[], []], [0.1')  # the tuner died mid-write
    with pytest.warns(ms.database.DatabaseWarning):
        db = ms.database.JSONDatabase(work_dir=str(tmp_path))
    db.commit_tuning_record(_record(db, small, [4e-4]))
    with pytest.warns(ms.database.DatabaseWarning):
        reloaded = ms.database.JSONDatabase(work_dir=str(tmp_path))
    assert reloaded.query_tuning_record(small).run_secs == [4e-4]


def test_database_scope_and_bad_arguments(tmp_path):
    db = ms.database.MemoryDatabase()
    assert ms.database.Database.current() is None
    with db:
        assert ms.database.Database.current() is db
    assert ms.database.Database.current() is None
    with pytest.raises(IrlabError, match="work_dir"):
        ms.database.JSONDatabase()
    with pytest.raises(IrlabError, match="TuningRecord"):
        db.commit_tuning_record("not a record")
    assert TensorInfo("float32", [2, 3]).as_json() == ["TENSOR", "float32", [2, 3]]
