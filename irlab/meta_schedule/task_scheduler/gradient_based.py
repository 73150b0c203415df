"""``GradientBased``: trials go where the weighted latency should fall fastest (TVM's
``ms.task_scheduler.GradientBased``, after Ansor's task scheduler).

Every live task first gets one round. Then, for each task, with ``best`` its best latency
after each of its rounds: the backward gradient is the latency gained per round over the
last ``window_size`` rounds, the forward gradient assumes the next round gains what the
average round did so far; their mix (``alpha`` on the backward one), times the task's weight,
is the gain expected from one more round. The task with the largest gain goes next (a task
with no successful measurement yet goes first).
"""

from __future__ import annotations

import math

from irlab.meta_schedule.task_scheduler.task_scheduler import TaskScheduler


class GradientBased(TaskScheduler):
    """TVM's parameters: ``alpha`` (weight of the backward gradient), ``window_size``."""

    def __init__(self, *, alpha=0.2, window_size=3, seed=None):
        super().__init__()
        self.alpha = float(alpha)
        self.window_size = int(window_size)

    def next_task_id(self) -> int:
        live = self._live()
        if not live:
            return -1
        for i in live:  # the warm-up round
            if not self.tasks[i].rounds:
                return i
        return max(live, key=self.expected_gain)

    def expected_gain(self, task_id) -> float:
        record = self.tasks[task_id]
        best = record.rounds
        if not math.isfinite(best[-1]):
            return math.inf
        start = best[max(len(best) - 1 - self.window_size, 0)]
        span = max(len(best) - 1 - max(len(best) - 1 - self.window_size, 0), 1)
        backward = (start - best[-1]) / span if math.isfinite(start) else best[-1]
        first = next((b for b in best if math.isfinite(b)), best[-1])
        forward = (first - best[-1]) / len(best) if len(best) > 1 else best[-1]
        forward = max(forward, best[-1] / (len(best) + 1))
        return record.task_weight * (self.alpha * backward + (1 - self.alpha) * forward)
