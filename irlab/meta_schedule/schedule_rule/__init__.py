"""``ms.schedule_rule``: the rules that build design spaces block by block."""

from irlab.meta_schedule.schedule_rule.add_rfactor import AddRFactor
from irlab.meta_schedule.schedule_rule.apply_custom_rule import ApplyCustomRule
from irlab.meta_schedule.schedule_rule.auto_inline import AutoInline
from irlab.meta_schedule.schedule_rule.multi_level_tiling import MultiLevelTiling, ReuseType
from irlab.meta_schedule.schedule_rule.parallel_vectorize_unroll import (
    ParallelizeVectorizeUnroll)
from irlab.meta_schedule.schedule_rule.random_compute_location import RandomComputeLocation
from irlab.meta_schedule.schedule_rule.schedule_rule import (PyScheduleRule, ScheduleRule,
                                                             create_default)

__all__ = ["ScheduleRule", "PyScheduleRule", "create_default", "ApplyCustomRule", "AutoInline",
           "AddRFactor", "MultiLevelTiling", "ReuseType", "ParallelizeVectorizeUnroll",
           "RandomComputeLocation"]
