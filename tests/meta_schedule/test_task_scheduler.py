"""ms.task_scheduler: RoundRobin takes turns; GradientBased warms every task up, then gives
trials where the weighted latency should fall fastest."""

import math
from types import SimpleNamespace

import pytest

from irlab import meta_schedule as ms
from irlab.errors import IrlabError


def records(*specs):
    """Stand-ins for TaskRecord: (weight, best latency after each round, terminated)."""
    return [SimpleNamespace(task_weight=w, rounds=list(r), is_terminated=t)
            for w, r, t in specs]


def test_round_robin_skips_finished_tasks():
    sched = ms.task_scheduler.RoundRobin()
    sched.tasks = records((1, [], False), (1, [], True), (1, [], False))
    assert [sched.next_task_id() for _ in range(4)] == [0, 2, 0, 2]
    for r in sched.tasks:
        r.is_terminated = True
    assert sched.next_task_id() == -1


def test_gradient_based_warms_up_then_follows_the_gain():
    sched = ms.task_scheduler.GradientBased()
    sched.tasks = records((1, [2.0], False), (1, [], False))
    assert sched.next_task_id() == 1  # not tuned yet: its round comes first
    # task 0 still improving fast and weighted 3x; task 1 flat
    sched.tasks = records((3, [4.0, 2.0, 1.0], False), (1, [1.0, 1.0, 1.0], False))
    assert sched.next_task_id() == 0
    # a task whose every candidate failed so far (no latency) is retried first
    sched.tasks = records((1, [1.0, 0.5], False), (1, [math.inf], False))
    assert sched.next_task_id() == 1
    # the weight decides between equal histories
    sched.tasks = records((1, [2.0, 1.0], False), (5, [2.0, 1.0], False))
    assert sched.next_task_id() == 1


def test_create_by_name():
    assert isinstance(ms.task_scheduler.TaskScheduler.create("round-robin"),
                      ms.task_scheduler.RoundRobin)
    with pytest.raises(IrlabError, match="unknown kind 'fifo'"):
        ms.task_scheduler.TaskScheduler.create("fifo")
