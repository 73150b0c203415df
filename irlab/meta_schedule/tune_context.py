"""``TuneContext``: everything one tuning task needs (TVM's ``ms.TuneContext``): the workload,
the target, the design-space generator, the search strategy and the task's random state."""

from __future__ import annotations

import logging
import os

from irlab.ir.module import IRModule
from irlab.meta_schedule.space_generator import SpaceGenerator
from irlab.target import Target
from irlab.tir.function import PrimFunc
from irlab.tir.schedule import RandomEngine


def normalize_mod(mod) -> IRModule:
    """A PrimFunc as ``IRModule({"main": func})`` (TVM's ``_normalize_mod``); an IRModule of
    one PrimFunc with that function renamed ``main``."""
    if isinstance(mod, PrimFunc):
        return IRModule({"main": mod})
    if not isinstance(mod, IRModule):
        raise TypeError(f"a tuning workload is an IRModule or a PrimFunc, got "
                        f"{type(mod).__name__}")
    funcs = [(gv, f) for gv, f in mod.functions.items() if isinstance(f, PrimFunc)]
    if len(funcs) == 1 and funcs[0][0].name_hint != "main":
        return IRModule({"main": funcs[0][1]})
    return mod


def _num_threads(num_threads) -> int:
    if isinstance(num_threads, int) and not isinstance(num_threads, bool) and num_threads > 0:
        return num_threads
    if num_threads == "logical":
        return os.cpu_count() or 1
    if num_threads == "physical":
        try:
            import psutil

            return psutil.cpu_count(logical=False) or os.cpu_count() or 1
        except ImportError:
            return os.cpu_count() or 1
    raise ValueError(f"num_threads must be a positive int, 'physical' or 'logical', got "
                     f"{num_threads!r}")


class TuneContext:
    """The resources of one tuning task.

    ``rand_state`` seeds the task (-1: from the operating system); the space generator and
    the search strategy fork their own states from it in ``initialize``, so a task with a
    fixed ``rand_state`` generates the same design spaces and samples every time.
    """

    def __init__(self, mod=None, *, target=None, space_generator=None, search_strategy=None,
                 task_name="main", rand_state=-1, num_threads="physical", logger=None):
        self.mod = None if mod is None else normalize_mod(mod)
        self.target = None if target is None else (
            target if isinstance(target, Target) else Target(target))
        if space_generator is not None and not isinstance(space_generator, SpaceGenerator):
            space_generator = SpaceGenerator.create(space_generator)
        if isinstance(search_strategy, str):
            from irlab.meta_schedule.search_strategy import SearchStrategy

            search_strategy = SearchStrategy.create(search_strategy)
        self.space_generator = space_generator
        self.search_strategy = search_strategy
        self.task_name = task_name
        self.num_threads = _num_threads(num_threads)
        self.logger = logger or logging.getLogger("irlab.meta_schedule")
        self._rand = RandomEngine(rand_state)
        self.initialize()

    def __repr__(self):
        return (f"TuneContext(task_name={self.task_name!r}, target={self.target}, "
                f"space_generator={self.space_generator!r}, "
                f"search_strategy={self.search_strategy!r})")

    @property
    def rand_state(self) -> int:
        return self._rand.state

    def fork_seed(self) -> int:
        """A seed for a component's own random state (advances the task's)."""
        return self._rand.fork_seed()

    def initialize(self) -> None:
        """Let the space generator (its rules, postprocessors and mutators) and the search
        strategy read the target and fork their random states (TVM's
        ``TuneContextInitialize``)."""
        if self.space_generator is not None:
            self.space_generator._initialize_with_tune_context(self)
        if self.search_strategy is not None:
            self.search_strategy._initialize_with_tune_context(self)

    def generate_design_space(self) -> list:
        """The design spaces of ``mod``: schedules whose traces hold sampled decisions."""
        if self.mod is None:
            raise ValueError("TuneContext has no `mod`: construct it with the workload")
        if self.space_generator is None:
            raise ValueError("TuneContext has no `space_generator`: construct it with one")
        return self.space_generator.generate_design_space(self.mod)

    def _strategy(self):
        if self.search_strategy is None:
            raise ValueError("TuneContext has no `search_strategy`: construct it with one")
        return self.search_strategy

    def pre_tuning(self, max_trials, num_trials_per_iter=64, design_spaces=None, database=None,
                   cost_model=None) -> None:
        """Prepare the search strategy (delegated to it)."""
        if design_spaces is None:
            design_spaces = self.generate_design_space()
        return self._strategy().pre_tuning(max_trials, num_trials_per_iter, design_spaces,
                                           database, cost_model)

    def post_tuning(self) -> None:
        return self._strategy().post_tuning()

    def generate_measure_candidates(self):
        """The next candidates to measure, None when the search is over (delegated)."""
        return self._strategy().generate_measure_candidates()

    def notify_runner_results(self, measure_candidates, results) -> None:
        return self._strategy().notify_runner_results(measure_candidates, results)

    def clone(self) -> "TuneContext":
        """A context with cloned components and a forked random state."""
        return TuneContext(
            self.mod, target=self.target,
            space_generator=None if self.space_generator is None
            else self.space_generator.clone(),
            search_strategy=None if self.search_strategy is None
            else self.search_strategy.clone(),
            task_name=self.task_name, rand_state=self.fork_seed(),
            num_threads=self.num_threads, logger=self.logger)
