"""``RandomComputeLocation``: compute a root-level producer block at a sampled loop of its
consumer (or leave it, or inline it), as TVM's rule of the same name."""

from __future__ import annotations

from irlab.meta_schedule import block_analysis as BA
from irlab.meta_schedule.schedule_rule.default_decision import ROOT_LOCATION
from irlab.meta_schedule.schedule_rule.schedule_rule import ScheduleRule
from irlab.tir.schedule import primitives_getters as G


class RandomComputeLocation(ScheduleRule):
    """For a root-level block alone in its loop nest, not multi-level tiled, with a
    consumer: ``sch.compute_at(block, sch.sample_compute_location(block))``. A block
    annotated ``meta_schedule.random_compute_producer`` (AddRFactor's write-back block)
    has its producer (the rfactor block) placed the same way. The default location (the
    design space's decision) is the root: the block stays a stage of its own."""

    def _applies(self, sch, block) -> bool:
        if not BA.is_root_child(sch, block):
            return False
        func = BA.func_of(sch, block)
        realize = BA.realize_of(sch, block)
        loops = G.loops_of(func, realize)
        if not loops or len(G.child_realizes(loops[0])) > 1:
            return False
        if BA.TILING_STRUCTURE in BA.annotations(realize):
            return False
        return bool(G.consumers(func, realize))

    def apply(self, sch, block) -> list:
        if not self._applies(sch, block):
            return [sch]
        producers = None
        if BA.RANDOM_COMPUTE_PRODUCER in BA.annotations(BA.realize_of(sch, block)):
            producers = sch.get_producers(block)
            sch.unannotate(block, BA.RANDOM_COMPUTE_PRODUCER)
        location = sch.sample_compute_location(block, decision=ROOT_LOCATION)
        sch.compute_at(block, location, preserve_unit_loops=True)
        if producers and len(producers) == 1:
            producer = producers[0]
            location = sch.sample_compute_location(producer, decision=ROOT_LOCATION)
            sch.compute_at(producer, location, preserve_unit_loops=True)
        return [sch]
