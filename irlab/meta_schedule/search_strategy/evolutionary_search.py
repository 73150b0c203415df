"""``EvolutionarySearch``: a population evolved under the cost model, picked epsilon-greedily.

Each round (TVM's algorithm; irlab's defaults are smaller than TVM's 512 / 50 / 4, since a
Python replay of a sampled trace costs milliseconds, not microseconds):

1. initial population: the best measured records of the workload in the database
   (``init_measured_ratio`` of ``population_size``) plus design-space traces replayed with
   fresh samples (at least ``init_min_unmeasured``);
2. ``genetic_num_iters`` generations: the cost model scores the population; the best
   unmeasured candidates so far are kept; parents are drawn in proportion to their score and,
   with probability ``genetic_mutate_prob``, mutated by a mutator drawn from the space
   generator's ``mutator_probs`` (when it has none: one sampled decision drawn anew);
3. the round's picks: ``1 - eps_greedy`` of them the best-scored, the rest random unmeasured
   samples (exploration), never a candidate measured before -- by its trace, nor (irlab's;
   TVM compares traces only) by the program it compiles to (``program_key``).

With ``seed_defaults`` (irlab's; not in TVM) the first round also replays each design space
with its recorded decisions -- the rules' defaults (``schedule_rule.default_decision``): a
TOPI-like register tile, parallel outer tiles, the middle unroll depth -- and measures those
seeded candidates first, so the search starts where a hand schedule is rather than from
random points that the untrained cost model cannot rank.
"""

from __future__ import annotations

import numpy as np

from irlab.meta_schedule.default_schedule import is_default_schedule
from irlab.meta_schedule.search_strategy.search_strategy import (SearchStrategy,
                                                                   fresh_decisions,
                                                                   is_unmeasured, replay,
                                                                   trace_key)


class EvolutionarySearch(SearchStrategy):
    """TVM's ``ms.search_strategy.EvolutionarySearch`` (same parameters)."""

    def __init__(self, *, population_size=64, init_measured_ratio=0.2,
                 init_min_unmeasured=16, max_fail_count=5, genetic_num_iters=2,
                 genetic_mutate_prob=0.85, genetic_max_fail_count=10, eps_greedy=0.05,
                 seed_defaults=True):
        super().__init__()
        self.population_size = int(population_size)
        self.init_measured_ratio = float(init_measured_ratio)
        self.init_min_unmeasured = int(init_min_unmeasured)
        self.max_fail_count = int(max_fail_count)
        self.genetic_num_iters = int(genetic_num_iters)
        self.genetic_mutate_prob = float(genetic_mutate_prob)
        self.genetic_max_fail_count = int(genetic_max_fail_count)
        self.eps_greedy = float(eps_greedy)
        self.seed_defaults = bool(seed_defaults)

    def clone(self):
        return EvolutionarySearch(**{k: getattr(self, k) for k in (
            "population_size", "init_measured_ratio", "init_min_unmeasured", "max_fail_count",
            "genetic_num_iters", "genetic_mutate_prob", "genetic_max_fail_count",
            "eps_greedy", "seed_defaults")})

    def __repr__(self):
        return (f"EvolutionarySearch(population_size={self.population_size}, "
                f"genetic_num_iters={self.genetic_num_iters}, eps_greedy={self.eps_greedy}, "
                f"seed_defaults={self.seed_defaults})")

    # -- one round ------------------------------------------------------------------------
    def generate_measure_candidates(self):
        st = self._state()
        if st.remaining <= 0:
            return None
        want = min(st.num_trials_per_iter, st.remaining)
        seeds = self.seeded(st) if self.seed_defaults and not st.trials_done else []
        measured = self.from_database(st, int(self.population_size * self.init_measured_ratio))
        fresh = self.random_samples(st, max(self.population_size - len(measured),
                                            self.init_min_unmeasured))
        if not measured and not fresh and not seeds:
            return None
        bests = self.evolve(st, seeds + measured + fresh, want)
        picks = self.eps_greedy_pick(st, seeds + bests, fresh, want)
        return picks or None

    def seeded(self, st):
        """The design spaces replayed with their recorded (default) decisions, unmeasured;
        the first ``num_trials_per_iter`` of them at most."""
        out, keys = [], set()
        for space in st.spaces:
            cand = replay(st, space, self.rand.fork_seed())
            if cand is not None and is_unmeasured(st, cand, keys):
                out.append(cand)
        return out[:st.num_trials_per_iter]

    def from_database(self, st, count):
        if st.database is None or count <= 0:
            return []
        out = []
        workload = st.database.commit_workload(st.context.mod)
        for record in st.database.get_top_k(workload, count + 1):
            if is_default_schedule(record):  # TOPI's: nothing to mutate, measured already
                continue
            cand = replay(st, record.trace, self.rand.fork_seed())
            if cand is not None and len(out) < count:
                out.append(cand)
        return out

    def random_samples(self, st, count):
        out, fails = [], 0
        while len(out) < count and fails <= self.max_fail_count * count:
            space = st.spaces[self.rand.sample_int(0, len(st.spaces))]
            cand = replay(st, space, self.rand.fork_seed(), fresh_decisions)
            if cand is None:
                fails += 1
                continue
            out.append(cand)
        return out

    def evolve(self, st, population, want):
        """The ``want`` best-predicted unmeasured candidates met over the generations."""
        best = {}  # trace key -> (score, candidate)
        for generation in range(self.genetic_num_iters + 1):
            scores = self.predict(st, population)
            for cand, score in zip(population, scores):
                cand.predicted_score = float(score)
                key = trace_key(cand.sch.trace)
                if key not in st.measured and (key not in best or best[key][0] < score):
                    best[key] = (float(score), cand)
            if generation == self.genetic_num_iters:
                break
            population = self.next_generation(st, population, scores)
        ranked = sorted(best.values(), key=lambda pair: -pair[0])
        return [cand for _, cand in ranked[:want]]

    def predict(self, st, population):
        if st.cost_model is None or not population:
            return np.array([self.rand.sample_uniform() for _ in population])
        scores = np.asarray(st.cost_model.predict(st.context, population), dtype="float64")
        return np.nan_to_num(scores, nan=0.0)

    def next_generation(self, st, population, scores):
        weights = np.maximum(scores - scores.min(), 0) + 1e-6
        children = []
        for _ in range(len(population)):
            parent = population[self.rand.choice(list(weights))]
            child = None
            if self.rand.sample_uniform() < self.genetic_mutate_prob:
                for _ in range(self.genetic_max_fail_count):
                    child = self.mutate(st, parent)
                    if child is not None:
                        break
            children.append(child or parent)
        return children

    def mutate(self, st, parent):
        trace = parent.sch.trace
        if st.mutator_probs:
            mutators = list(st.mutator_probs)
            mutator = mutators[self.rand.choice([st.mutator_probs[m] for m in mutators])]
            new_trace = mutator.apply(trace, self.rand)
            if new_trace is None:
                return None
            return replay(st, new_trace, self.rand.fork_seed())
        samplers = [inst for inst in trace.insts if inst in trace.decisions]
        if not samplers:
            return None
        target = samplers[self.rand.sample_int(0, len(samplers))]
        return replay(st, trace, self.rand.fork_seed(),
                      lambda inst, args, kwargs, decision:
                      None if inst is target else decision)

    def eps_greedy_pick(self, st, bests, fresh, want):
        num_random = int(round(want * self.eps_greedy))
        picks, keys = [], set()

        def take(cand):
            if is_unmeasured(st, cand, keys):
                picks.append(cand)

        for cand in bests:
            if len(picks) >= want - num_random:
                break
            take(cand)
        order = self.rand.sample_without_replacement(len(fresh), len(fresh))
        for i in order:
            if len(picks) >= want:
                break
            take(fresh[i])
        return picks
