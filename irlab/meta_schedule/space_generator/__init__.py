"""``ms.space_generator``: design spaces of a workload (schedules with sampled decisions)."""

from irlab.meta_schedule.space_generator.post_order_apply import PostOrderApply
from irlab.meta_schedule.space_generator.schedule_fn import ScheduleFn
from irlab.meta_schedule.space_generator.space_generator import (PySpaceGenerator,
                                                                 SpaceGenerator, create)
from irlab.meta_schedule.space_generator.space_generator_union import SpaceGeneratorUnion

__all__ = ["SpaceGenerator", "PySpaceGenerator", "PostOrderApply", "ScheduleFn",
           "SpaceGeneratorUnion", "create"]
