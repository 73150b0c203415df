"""``SpaceGeneratorUnion``: the design spaces of several generators, concatenated."""

from __future__ import annotations

from irlab.meta_schedule.space_generator.space_generator import SpaceGenerator


class SpaceGeneratorUnion(SpaceGenerator):
    """Every schedule of every generator in ``space_generators``, in order."""

    def __init__(self, space_generators, sch_rules="from-target", postprocs="from-target",
                 mutator_probs="from-target"):
        super().__init__(sch_rules, postprocs, mutator_probs)
        self.space_generators = list(space_generators)

    def __repr__(self):
        return f"SpaceGeneratorUnion({self.space_generators!r})"

    def _initialize_with_tune_context(self, context) -> None:
        super()._initialize_with_tune_context(context)
        for generator in self.space_generators:
            generator._initialize_with_tune_context(context)

    def generate_design_space(self, mod) -> list:
        return [sch for g in self.space_generators for sch in g.generate_design_space(mod)]
