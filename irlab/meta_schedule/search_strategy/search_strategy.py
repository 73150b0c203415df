"""``SearchStrategy``: picks the candidates a task measures next (TVM's interface).

A strategy lives in a ``TuneContext``; the task scheduler calls ``pre_tuning``, then
``generate_measure_candidates`` / ``notify_runner_results`` until the former returns None,
then ``post_tuning``. Candidates are made by replaying a design space's trace on a fresh
``tir.Schedule`` (re-sampling the decisions the caller wants fresh) and running the space
generator's postprocessors.
"""

from __future__ import annotations

import json

from irlab.errors import IrlabError
from irlab.ir import structural_hash
from irlab.meta_schedule.arg_info import ArgInfo
from irlab.meta_schedule.search_strategy.measure_candidate import MeasureCandidate


class SearchStrategy:
    """Base class; ``create("evolutionary" | "replay-trace")`` makes one by name."""

    def __init__(self):
        self.context = None
        self.rand = None
        self.state = None

    @staticmethod
    def create(kind="evolutionary", *args, **kwargs) -> "SearchStrategy":
        from irlab.meta_schedule.search_strategy.evolutionary_search import EvolutionarySearch
        from irlab.meta_schedule.search_strategy.replay_trace import ReplayTrace

        kinds = {"evolutionary": EvolutionarySearch, "replay-trace": ReplayTrace,
                 "replay_trace": ReplayTrace}
        if isinstance(kind, SearchStrategy):
            return kind
        if kind not in kinds:
            raise IrlabError(f"SearchStrategy.create: unknown strategy {kind!r}; expected one "
                             f"of {sorted(kinds)}")
        return kinds[kind](*args, **kwargs)

    def _initialize_with_tune_context(self, context) -> None:
        from irlab.tir.schedule import RandomEngine

        self.context = context
        self.rand = RandomEngine(context.fork_seed())

    def clone(self) -> "SearchStrategy":
        raise NotImplementedError

    # -- the tuning protocol --------------------------------------------------------------
    def pre_tuning(self, max_trials, num_trials_per_iter, design_spaces, database=None,
                   cost_model=None) -> None:
        if self.context is None:
            raise IrlabError(f"{type(self).__name__}: put it in a TuneContext before tuning")
        if self.state is not None:
            raise IrlabError(f"{type(self).__name__}.pre_tuning called twice without "
                             f"post_tuning")
        self.state = _State(self.context, max_trials, num_trials_per_iter, design_spaces,
                            database, cost_model)

    def post_tuning(self) -> None:
        self.state = None

    def generate_measure_candidates(self):
        raise NotImplementedError

    def notify_runner_results(self, measure_candidates, results) -> None:
        st = self._state()
        st.trials_done += len(results)
        for cand in measure_candidates:
            st.measured.add(trace_key(cand.sch.trace))
            st.measured_programs.add(program_key(cand))

    def _state(self):
        if self.state is None:
            raise IrlabError(f"{type(self).__name__}: call pre_tuning first")
        return self.state

    def __repr__(self):
        return f"{type(self).__name__}()"


class _State:
    """What a strategy keeps between ``pre_tuning`` and ``post_tuning``."""

    def __init__(self, context, max_trials, num_trials_per_iter, design_spaces, database,
                 cost_model):
        self.context = context
        self.max_trials = int(max_trials)
        self.num_trials_per_iter = int(num_trials_per_iter)
        self.spaces = [sch.trace.simplified(remove_postproc=True) for sch in design_spaces]
        if not self.spaces:
            raise IrlabError(f"task {context.task_name}: the space generator produced no "
                             f"design space")
        self.database = database
        self.cost_model = cost_model
        self.trials_done = 0
        self.measured = set()  # trace keys of the measured candidates
        self.measured_programs = set()  # and program keys (program_key)
        self.replayed = {}  # trace key -> candidate (None: refused); replays are the cost
        self.args_info = ArgInfo.from_entry_func(context.mod)
        self.postprocs = list(getattr(context.space_generator, "postprocs", None) or [])
        self.mutator_probs = dict(getattr(context.space_generator, "mutator_probs", None)
                                  or {})

    @property
    def remaining(self):
        return self.max_trials - self.trials_done


def trace_key(trace) -> str:
    """Identity of a candidate: its trace (instructions and decisions) as JSON text."""
    return json.dumps(trace.as_json(remove_postproc=True), separators=(",", ":"))


def program_key(cand) -> int:
    """Identity of the program a candidate compiles to: the structural hash of its scheduled
    module (computed once per candidate). Traces that differ only in a decision with no
    effect on this program -- the root's parallel extent over loops a custom rule already
    made parallel, an unroll depth above every loop's size -- are one program: measuring it
    again is a wasted trial (ResNet-18's Winograd kernels had 77 trials of 40 distinct
    decision sets, many of those the same program)."""
    if cand.program_key is None:
        cand.program_key = structural_hash(cand.sch.mod)
    return cand.program_key


def is_unmeasured(st, cand, round_keys) -> bool:
    """Whether ``cand`` is neither measured before nor already picked this round
    (``round_keys``: the trace and program keys picked so far, updated when it is new);
    the trace is compared first, the program only for a new trace."""
    key = trace_key(cand.sch.trace)
    if key in round_keys or key in st.measured:
        return False
    program = program_key(cand)
    if program in round_keys or program in st.measured_programs:
        return False
    round_keys.update((key, program))
    return True


def fresh_decisions(inst, args, kwargs, decision):
    """A decision provider that re-samples every sampling instruction."""
    return None


def replay(state, trace, seed, decision_provider=None):
    """A candidate from ``trace`` on a fresh schedule of the task's module (postprocessors
    run after it), or None when a primitive or a postprocessor refuses it."""
    key = None
    if decision_provider is None:  # every decision fixed: the same trace gives the same program
        key = trace_key(trace)
        if key in state.replayed:
            return state.replayed[key]
        if len(state.replayed) > 8192:
            state.replayed.clear()
    cand = _replay(state, trace, seed, decision_provider)
    if key is not None:
        state.replayed[key] = cand
    return cand


def _replay(state, trace, seed, decision_provider):
    from irlab.tir.schedule import Schedule, ScheduleError

    sch = Schedule(state.context.mod, seed=seed, enable_check=False)
    try:
        trace.apply_to_schedule(sch, remove_postproc=True, decision_provider=decision_provider)
        sch.enter_postproc()
        for postproc in state.postprocs:
            if not postproc.apply(sch):
                return None
    except (ScheduleError, IrlabError):
        return None
    return MeasureCandidate(sch, state.args_info)
