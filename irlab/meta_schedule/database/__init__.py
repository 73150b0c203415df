"""Tuning databases (TVM's ``ms.database``): workloads, tuning records, best-schedule queries."""

from irlab.meta_schedule.database.database import Database, MemoryDatabase
from irlab.meta_schedule.database.json_database import DatabaseWarning, JSONDatabase
from irlab.meta_schedule.database.workload import TuningRecord, Workload

__all__ = ["Database", "MemoryDatabase", "JSONDatabase", "DatabaseWarning", "TuningRecord",
           "Workload"]
