"""``ms.mutator``: mutators the evolutionary search applies to traces."""

from irlab.meta_schedule.mutator.mutate_compute_location import MutateComputeLocation
from irlab.meta_schedule.mutator.mutate_parallel import MutateParallel
from irlab.meta_schedule.mutator.mutate_tile_size import MutateTileSize
from irlab.meta_schedule.mutator.mutate_unroll import MutateUnroll
from irlab.meta_schedule.mutator.mutator import Mutator, PyMutator, create_default

__all__ = ["Mutator", "PyMutator", "create_default", "MutateTileSize", "MutateUnroll",
           "MutateParallel", "MutateComputeLocation"]
