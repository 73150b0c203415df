"""Task schedulers (TVM's ``ms.task_scheduler``): share the trial budget among tasks."""

from irlab.meta_schedule.task_scheduler.gradient_based import GradientBased
from irlab.meta_schedule.task_scheduler.round_robin import RoundRobin
from irlab.meta_schedule.task_scheduler.task_scheduler import TaskRecord, TaskScheduler

__all__ = ["GradientBased", "RoundRobin", "TaskRecord", "TaskScheduler"]
