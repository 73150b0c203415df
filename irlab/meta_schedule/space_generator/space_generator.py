"""``SpaceGenerator``: makes the design space of a workload, a list of schedules whose traces
hold sampled decisions, and carries the postprocessors and mutator probabilities the search
uses with that space (TVM's ``ms.space_generator.SpaceGenerator``)."""

from __future__ import annotations

import copy

from irlab.tir.schedule import RandomEngine

# Target kinds whose defaults are TVM's "llvm" ones (irlab's C target runs on the same CPU).
_CPU_KINDS = ("llvm", "c")


def _resolve(value, what, target):
    """A list of rules / postprocs or a {mutator: prob} dict: ``value`` itself, or the
    defaults of a target kind name ("llvm"; "from-target": the task target's, None without
    a target)."""
    from irlab.meta_schedule.mutator import Mutator
    from irlab.meta_schedule.postproc import Postproc
    from irlab.meta_schedule.schedule_rule import ScheduleRule

    if not isinstance(value, str):
        return value
    kind = value
    if kind == "from-target":
        if target is None:
            return None
        kind = "llvm" if target.kind in _CPU_KINDS else target.kind
    maker = {"sch_rules": ScheduleRule.create, "postprocs": Postproc.create,
             "mutator_probs": Mutator.create}[what]
    return maker(kind)


class SpaceGenerator:
    """Base of the design-space generators. ``sch_rules``, ``postprocs`` and
    ``mutator_probs`` are lists / a dict, or a target kind name ("llvm") or "from-target"
    (the defaults of the task's target, resolved by ``_initialize_with_tune_context``)."""

    def __init__(self, sch_rules="from-target", postprocs="from-target",
                 mutator_probs="from-target"):
        self.sch_rules = sch_rules
        self.postprocs = postprocs
        self.mutator_probs = mutator_probs
        self._rand = RandomEngine(-1)

    def __repr__(self):
        rules = self.sch_rules
        rules = rules if rules is None or isinstance(rules, str) else f"{len(rules)} rules"
        return f"{type(self).__name__}(sch_rules={rules})"

    def _initialize_with_tune_context(self, context) -> None:
        """Resolve the default rules from the target, initialize every rule, postprocessor
        and mutator with the task, and fork this generator's random state from it."""
        target = context.target
        self.sch_rules = _resolve(self.sch_rules, "sch_rules", target)
        self.postprocs = _resolve(self.postprocs, "postprocs", target)
        self.mutator_probs = _resolve(self.mutator_probs, "mutator_probs", target)
        for component in (list(self.sch_rules or []) + list(self.postprocs or [])
                          + list((self.mutator_probs or {}).keys())):
            component._initialize_with_tune_context(context)
        self._rand = RandomEngine(context.fork_seed())

    def _rules(self) -> list:
        """The schedule rules, resolving a kind name ("llvm") without a task."""
        if self.sch_rules is None or self.sch_rules == "from-target":
            raise ValueError(f"{type(self).__name__}: the schedule rules are 'from-target' "
                             "but no task target was given (use a TuneContext with a target "
                             "or pass sch_rules)")
        if isinstance(self.sch_rules, str):
            self.sch_rules = _resolve(self.sch_rules, "sch_rules", None)
        return self.sch_rules

    def generate_design_space(self, mod) -> list:
        raise NotImplementedError(f"{type(self).__name__}.generate_design_space")

    def clone(self) -> "SpaceGenerator":
        return copy.deepcopy(self)

    @staticmethod
    def create(kind="post-order-apply", *args, **kwargs) -> "SpaceGenerator":
        """A generator by name ("post-order-apply", "union"), a ScheduleFn for a callable,
        or PostOrderApply with the defaults of a target kind ("llvm")."""
        from irlab.meta_schedule.space_generator.post_order_apply import PostOrderApply
        from irlab.meta_schedule.space_generator.schedule_fn import ScheduleFn
        from irlab.meta_schedule.space_generator.space_generator_union import (
            SpaceGeneratorUnion)

        if callable(kind):
            return ScheduleFn(kind, *args, **kwargs)
        if kind == "post-order-apply":
            return PostOrderApply(*args, **kwargs)
        if kind == "union":
            return SpaceGeneratorUnion(*args, **kwargs)
        if isinstance(kind, str):
            return PostOrderApply(sch_rules=kind, postprocs=kind, mutator_probs=kind)
        raise ValueError(f"unknown space generator {kind!r}")


create = SpaceGenerator.create
# TVM's name for a generator written in Python.
PySpaceGenerator = SpaceGenerator
