"""``PostOrderApply``: apply each schedule rule to every block, consumers before producers;
a rule returning several schedules branches the design space (TVM's PostOrderApply)."""

from __future__ import annotations

import logging

from irlab.meta_schedule import block_analysis as BA
from irlab.meta_schedule.schedule_rule.apply_custom_rule import ANNOTATION, ApplyCustomRule
from irlab.meta_schedule.space_generator.space_generator import SpaceGenerator
from irlab.tir import stmt as S
from irlab.tir.function import PrimFunc
from irlab.tir.schedule import Schedule, ScheduleError
from irlab.tir.schedule import primitives_getters as G

_LOG = logging.getLogger("irlab.meta_schedule")


def _post_order(realizes, out):
    for realize in realizes:
        _post_order(G.child_realizes(realize), out)
        out.append(realize.block)


def collect_blocks(sch, block_filter=None) -> list:
    """Handles to the blocks of every PrimFunc of ``sch`` in post order (a block after the
    blocks inside it, the root last), as TVM's BlockCollector; each lookup is a
    ``get_block`` instruction of the trace."""
    names = []
    for gv, func in sch.mod.functions.items():
        if not isinstance(func, PrimFunc):
            continue
        blocks = []
        top = func.body if isinstance(func.body, S.BlockRealize) else None
        _post_order([top] if top is not None else G.child_realizes(_Body(func.body)), blocks)
        names += [(b.name_hint, gv.name_hint) for b in blocks
                  if block_filter is None or block_filter(b)]
    return [sch.get_block(name, func_name) for name, func_name in names]


class _Body:
    """A stand-in parent for a function body that is not a block."""

    _fields = ("body",)

    def __init__(self, body):
        self.body = body


class PostOrderApply(SpaceGenerator):
    """The rules run one after another; each visits every block from the last to the
    first (so a consumer is scheduled before its producers, and an inlined block is
    skipped). ``f_block_filter(block) -> bool`` restricts the blocks; a block annotated
    ``schedule_rule`` is left to ``ApplyCustomRule`` (every other rule skips it). A rule
    raising ScheduleError on a block is skipped there (with a warning on the
    ``irlab.meta_schedule`` logger)."""

    def __init__(self, f_block_filter=None, sch_rules="from-target", postprocs="from-target",
                 mutator_probs="from-target"):
        super().__init__(sch_rules, postprocs, mutator_probs)
        self.f_block_filter = f_block_filter

    def generate_design_space(self, mod) -> list:
        from irlab.meta_schedule.tune_context import normalize_mod

        rules = self._rules()
        sch = Schedule(normalize_mod(mod), seed=self._rand.fork_seed())
        blocks = collect_blocks(sch, self.f_block_filter)
        result = [sch]
        for rule in rules:
            custom = isinstance(rule, ApplyCustomRule)
            stack = [(s, list(blocks)) for s in result]
            result = []
            while stack:
                current, todo = stack.pop()
                if not todo:
                    result.append(current)
                    continue
                block = todo.pop()
                if not BA.has_block(current, block) or not custom and ANNOTATION in \
                        BA.annotations(BA.realize_of(current, block)):
                    stack.append((current, todo))
                    continue
                for applied in _apply(rule, current, block):
                    stack.append((applied, list(todo)))
        return result


def _apply(rule, sch, block) -> list:
    """``rule.apply(sch, block)``; a rule that fails on this block (a ScheduleError) leaves
    the schedule as it was, with a warning naming the rule and the block, so one odd block
    does not lose the design space of the whole workload."""
    try:
        with sch.transaction():
            return rule.apply(sch, block)
    except ScheduleError as err:
        _LOG.warning("%s did not apply to block %r: %s", type(rule).__name__, block.name, err)
        return [sch]
