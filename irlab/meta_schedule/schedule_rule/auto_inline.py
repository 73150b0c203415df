"""``AutoInline``: inline cheap elementwise blocks into their consumers (or, optionally,
their producers), as TVM's ``ms.schedule_rule.AutoInline``."""

from __future__ import annotations

from irlab.meta_schedule import block_analysis as BA
from irlab.meta_schedule.schedule_rule.schedule_rule import ScheduleRule
from irlab.tir import expr as E
from irlab.tir.functor import post_order_visit
from irlab.tir.schedule import ScheduleError


def _writes_injectively(block) -> bool:
    """Whether the block writes at distinct iterator variables (each written index is one
    iterator, none twice): every iteration writes its own element."""
    if len(block.writes) != 1:
        return False
    iter_vars = {id(iv.var) for iv in block.iter_vars}
    seen = set()
    for rng in block.writes[0].region:
        v = rng.min
        if isinstance(v, E.IntImm):
            continue
        if not isinstance(v, E.Var) or id(v) not in iter_vars or id(v) in seen:
            return False
        seen.add(id(v))
    return True


def _has_load(node) -> bool:
    found = []
    post_order_visit(node, lambda n: found.append(n) if isinstance(n, E.BufferLoad) else None)
    return bool(found)


def guards_a_load(node) -> bool:
    """Whether ``node`` selects between a buffer load and something else on a condition of
    indices only: TOPI's ``pad``, ``Select(0 <= i - 1 < 56, p0[i - 1], 0)``, irlab's
    spelling of the ``if_then_else`` TVM's pad has. Inlined into a conv2d, the bounds test
    and the clamped load run at every multiply-add of the reduction."""
    found = []

    def check(n):
        if isinstance(n, E.Select) and not _has_load(n.condition) \
                and (_has_load(n.true_value) or _has_load(n.false_value)):
            found.append(n)

    post_order_visit(node, check)
    return bool(found)


def _writes_in_order(block) -> bool:
    """Whether the written indices follow the iterators' order."""
    order = {id(iv.var): i for i, iv in enumerate(block.iter_vars)}
    positions = [order[id(r.min)] for r in block.writes[0].region if id(r.min) in order]
    return positions == sorted(positions)


class AutoInline(ScheduleRule):
    """Inline a spatial, root-level block with one write into its consumers
    (``into_consumer``) or into its single producer (``into_producer``). Blocks with an
    ``IfThenElse`` statement or a load guarded by a ``Select`` on indices (padding:
    ``disallow_if_then_else``), calling an op of ``disallow_op``
    (TVM's CPU default keeps ``tir.exp`` out of its consumers, to compute it once), or
    annotated ``meta_schedule.inline_rule = "disable"`` stay."""

    def __init__(self, into_producer=False, into_consumer=True, inline_const_tensor=True,
                 disallow_if_then_else=True, require_injective=True, require_ordered=True,
                 disallow_op=None):
        self.into_producer = bool(into_producer)
        self.into_consumer = bool(into_consumer)
        self.inline_const_tensor = bool(inline_const_tensor)
        self.disallow_if_then_else = bool(disallow_if_then_else)
        self.require_injective = bool(require_injective)
        self.require_ordered = bool(require_ordered)
        self.disallow_op = list(disallow_op or [])

    def _may_inline(self, block) -> bool:
        if len(block.writes) != 1 or not BA.is_spatial(block) or block.init is not None:
            return False
        if BA.annotations(block).get(BA.INLINE_RULE) == "disable":
            return False
        if self.inline_const_tensor and not block.reads:
            return True
        if self.disallow_if_then_else and (BA.contains_if(block.body)
                                           or guards_a_load(block.body)):
            return False
        if self.require_injective and not _writes_injectively(block):
            return False
        if self.require_ordered and not _writes_in_order(block):
            return False
        return not (self.disallow_op and BA.contains_call(block.body, set(self.disallow_op)))

    def apply(self, sch, block) -> list:
        if not BA.is_root_child(sch, block):
            return [sch]
        if not self._may_inline(BA.realize_of(sch, block).block):
            return [sch]
        if self.into_consumer and _try(lambda: sch.compute_inline(block)):
            return [sch]
        if self.into_producer and len(sch.get_producers(block)) == 1:
            _try(lambda: sch.reverse_compute_inline(block))
        return [sch]


def _try(step) -> bool:
    """Run a primitive; False (and the schedule unchanged) when it does not apply here."""
    try:
        step()
    except ScheduleError:
        return False
    return True
