"""``RoundRobin``: tasks take turns (TVM's ``ms.task_scheduler.RoundRobin``)."""

from __future__ import annotations

from irlab.meta_schedule.task_scheduler.task_scheduler import TaskScheduler


class RoundRobin(TaskScheduler):
    """The next live task after the last one chosen."""

    def __init__(self):
        super().__init__()
        self._last = -1

    def next_task_id(self) -> int:
        n = len(self.tasks)
        for step in range(1, n + 1):
            i = (self._last + step) % n
            if not self.tasks[i].is_terminated:
                self._last = i
                return i
        return -1
