"""``Mutator``: proposes a neighbour of a trace by changing one decision (TVM's
``ms.mutator.Mutator``); ``create("llvm")`` gives the CPU mutators with their probabilities."""

from __future__ import annotations

import copy

from irlab.tir.schedule import RandomEngine


def as_engine(rand_state, fallback) -> RandomEngine:
    """A RandomEngine from ``rand_state`` (an engine, used and advanced; an int seed; or
    None: ``fallback``, the mutator's own)."""
    if rand_state is None:
        return fallback
    if isinstance(rand_state, RandomEngine):
        return rand_state
    return RandomEngine(rand_state)


class Mutator:
    """Base of the mutators: ``apply(trace, rand_state=None)`` returns a new trace (without
    postprocessing: the search replays it and postprocesses again) or None when this
    mutator finds nothing to change."""

    def __init__(self):
        self._rand = RandomEngine(-1)

    def _initialize_with_tune_context(self, context) -> None:
        self._rand = RandomEngine(context.fork_seed())

    def apply(self, trace, rand_state=None):
        raise NotImplementedError(f"{type(self).__name__}.apply")

    def clone(self) -> "Mutator":
        return copy.deepcopy(self)

    def __repr__(self):
        return f"{type(self).__name__}()"

    @staticmethod
    def create(kind) -> dict:
        """The default {mutator: probability} of a target kind (TVM's ``Mutator.create``)."""
        if kind != "llvm":
            raise ValueError(f"irlab's MetaSchedule has default mutators for 'llvm' only, "
                             f"got {kind!r}")
        return create_default()


PyMutator = Mutator


def create_default(target=None) -> dict:
    """TVM's ``Mutator::DefaultLLVM``: mostly tile sizes, sometimes compute locations,
    unroll depths and parallel extents."""
    from irlab.meta_schedule.mutator.mutate_compute_location import MutateComputeLocation
    from irlab.meta_schedule.mutator.mutate_parallel import MutateParallel
    from irlab.meta_schedule.mutator.mutate_tile_size import MutateTileSize
    from irlab.meta_schedule.mutator.mutate_unroll import MutateUnroll

    return {MutateTileSize(): 0.9, MutateComputeLocation(): 0.05, MutateUnroll(): 0.03,
            MutateParallel(max_jobs_per_core=16): 0.02}
