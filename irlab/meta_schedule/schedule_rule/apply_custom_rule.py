"""``ApplyCustomRule``: a block annotated ``schedule_rule = name`` is scheduled by the function
registered as ``meta_schedule.<target key>.<name>`` (TVM's rule of the same name).

A TE compute says how its stage should be searched with ``attrs={"schedule_rule": name}``,
which ``te.create_prim_func`` turns into the block's annotation. The other rules leave such a
block alone (``PostOrderApply``), so the custom function owns it: it may place the block's
producers, inline its consumers and sample its own decisions (``sch.sample_*``, recorded in the
trace like any rule's). ``"None"`` means no rule at all: another block's custom function places
that stage. irlab's custom functions: ``irlab.meta_schedule.schedule`` (the x86 Winograd
conv's stages).

The function is called as ``f(sch, block)`` inside ``with target:`` (so
``Target.current()`` is the task's target) and returns the list of schedules it made. A name
with no function for any of the target's keys is a warning naming the functions looked up,
and a function that fails (a ScheduleError: its steps are undone) a warning naming the
error; either way the annotation is then removed and the generic rules schedule the block.
"""

from __future__ import annotations

import logging

from irlab.meta_schedule import block_analysis as BA
from irlab.meta_schedule.schedule_rule.schedule_rule import ScheduleRule
from irlab.tir.schedule import ScheduleError

_LOG = logging.getLogger("irlab.meta_schedule")

ANNOTATION = "schedule_rule"  # the block annotation (TVM's tir::attr::schedule_rule)
NO_RULE = "None"  # its value for "no rule schedules this block"


def custom_rule_name(name, key) -> str:
    """The global function name of custom rule ``name`` for target key ``key``."""
    return f"meta_schedule.{key}.{name}"


def find_custom_rule(name, keys):
    """The function registered for ``name`` under the first of ``keys`` that has one, else
    None (``irlab.meta_schedule.schedule`` registers irlab's own when imported)."""
    import irlab.meta_schedule.schedule  # noqa: F401  (registers irlab's custom rules)
    from irlab.runtime.registry import get_global_func

    for key in keys:
        func = get_global_func(custom_rule_name(name, key), allow_missing=True)
        if func is not None:
            return func
    return None


class ApplyCustomRule(ScheduleRule):
    """Schedule a block annotated ``schedule_rule`` with its registered function."""

    def __init__(self):
        self._target = None

    def _initialize_with_tune_context(self, context) -> None:
        self._target = getattr(context, "target", None)

    def __repr__(self):
        return "ApplyCustomRule()"

    def apply(self, sch, block) -> list:
        name = BA.annotations(BA.realize_of(sch, block)).get(ANNOTATION)
        if name is None or str(name) == NO_RULE:
            return [sch]
        if self._target is None:
            raise ValueError("ApplyCustomRule is not initialized with a TuneContext that has "
                             "a target")
        keys = tuple(self._target.keys)
        func = find_custom_rule(str(name), keys)
        if func is None:
            looked = ", ".join(custom_rule_name(name, key) for key in keys)
            _LOG.warning("unknown schedule rule %r of block %r for target keys %s; looked up: "
                         "%s; the generic rules schedule the block", str(name), block.name,
                         keys, looked)
            sch.unannotate(block, ANNOTATION)
            return [sch]
        try:
            with sch.transaction(), self._target:
                return list(func(sch, block))
        except ScheduleError as err:  # undone by the transaction: the generic rules take it
            _LOG.warning("schedule rule %r failed on block %r (%s); the generic rules "
                         "schedule the block", str(name), block.name, err)
            sch.unannotate(block, ANNOTATION)
            return [sch]
