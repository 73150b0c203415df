"""A recorded run of a pass pipeline, ready to be viewed: the model behind the pass stepper and
the static HTML report (no Jupyter needed).

``PassTrace(mod, passes)`` runs the passes under an ``IRSnapshot`` and keeps one *step* per
pass run (nested runs included). For any step it gives the printed program, the graph (node
ids stable across steps), and for any two steps the text diff and the graph diff. On request
it also runs the interpreter after every step on the same inputs (*numerics*: the first step
whose results differ from the original) and tells which steps created or changed a node
(*provenance*).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

import numpy as np

from irlab.instrument import IRSnapshot, PassInstrument
from irlab.ir.module import IRModule
from irlab.transform import PassContext, Sequential
from irlab.viz.graph_diff import graph_diff
from irlab.viz.identity import NodeIds
from irlab.viz.relax_graph import is_relax_module
from irlab.viz.relay_graph import build_relay_graph
from irlab.viz.text_diff import diff_lines


def default_pipeline() -> list:
    """relay.build's optimization pipeline (``relay.optimize``): the Sequential of steps 1-23
    followed by the post-fusion passes."""
    from irlab.relay.pipeline import optimization_passes, post_fusion_passes

    return [Sequential(optimization_passes(), name="sequential"), *post_fusion_passes()]


def relax_pipeline() -> list:
    """What ``relax.build`` would do after optimizing: TVM's "zero" pipeline
    (``relax.get_pipeline()``: legalize, fuse) then its "default_build" lowering to the VM."""
    from irlab.relax.pipeline import get_pipeline

    return [get_pipeline("zero"), get_pipeline("default_build")]


@dataclass
class Step:
    """One pass run (index 0 is the input program, before any pass)."""

    index: int
    name: str
    depth: int
    parent: int | None
    opt_level: int
    seconds: float
    changed: bool
    module: IRModule
    node_count: int = 0
    op_counts: dict = field(default_factory=dict)
    error: float | None = None  # max relative error vs the input program (numerics)
    abs_error: float | None = None
    # The module the pass received. For a nested pass it is not always an earlier step's
    # module (a function pass closes with an InferType on its own output).
    before: IRModule | None = field(default=None, repr=False)


def bind_named(func, params):
    """``func`` with its parameters named in ``params`` bound to constants (as
    ``bind_params_by_name``), and each constant's parameter name: the graphs name the weights
    a user folds, and a model builder's weight names give the layer groups."""
    from irlab.errors import IrlabError
    from irlab.relay.expr import bind, const

    by_name: dict = {}
    for p in func.params:
        by_name.setdefault(p.name_hint, []).append(p)
    binds, names = {}, {}
    for name, value in params.items():
        if name not in by_name:
            continue
        if len(by_name[name]) > 1:
            raise IrlabError(f"multiple parameters are named {name!r}")
        binds[by_name[name][0]] = const(value)
        names[binds[by_name[name][0]]] = name
    return (bind(func, binds) if binds else func), names


class PassTrace:
    """Runs ``passes`` on ``mod`` and records every step.

    ``passes``: a list of passes (default: relay.optimize's pipeline; for a Relax module,
    ``relax_pipeline()``; ``relax.build(trace.output, pipeline=None)`` then builds what the
    last step shows). ``params``: weights bound
    as constants first (as relay.build does). ``opt_level``/``disabled_pass``/``required_pass``:
    the PassContext the pipeline runs under. ``target``: the target in scope while the passes
    run (relay.build's; AlterOpLayout's hooks depend on it), None for the current one.
    ``fold_weights``: the graphs list constants in their users instead of drawing them
    (see ``build_relay_graph``). ``lazy``: run the passes when a step is first asked for
    (``steps``, ``output``, ``error``, ``seconds``, ``graph(i > 0)``), not now; the input
    program (``input``, ``graph(0)``, ``text(0)``) is there at once, with the node ids the
    run gives it (the explorer draws it while the pipeline has not run).
    """

    def __init__(self, mod, passes=None, params=None, opt_level=3, disabled_pass=(),
                 required_pass=(), config=None, target=None, fold_weights=True, lazy=False):
        from irlab.relay.transform import InferType

        self.is_relax = is_relax_module(mod)
        if not isinstance(mod, IRModule):
            mod = IRModule({"main": mod}) if self.is_relax else IRModule.from_expr(mod)
        self.params = dict(params or {})
        self.weight_names: dict = {}  # bound constant -> its parameter's name
        if self.params and not self.is_relax:
            mod = mod.copy()
            mod["main"], self.weight_names = bind_named(mod["main"], self.params)
        self.input = mod if self.is_relax else InferType()(mod)
        default = relax_pipeline if self.is_relax else default_pipeline
        self.passes = list(passes) if passes is not None else default()
        self.opt_level = opt_level
        self.disabled_pass = list(disabled_pass)
        self.required_pass = list(required_pass)
        self.config = dict(config or {})
        self.target = target
        self.fold_weights = fold_weights
        self._steps: list[Step] | None = None  # None: not run yet (lazy)
        self._output = None
        self._error = None  # the exception a pass raised, if the pipeline failed
        self._seconds = 0.0
        self._ids = NodeIds()
        self._graphs: dict = {}
        self._by_module: dict = {}  # module key -> graph (same functions: same picture)
        self._provenance = None
        self._texts: dict = {}
        self.progress = None  # called with each pass's name as it starts (a live status line)
        if not lazy:
            self.run()

    # -- running --------------------------------------------------------------------------------
    @property
    def has_run(self) -> bool:
        """True once the passes have run (at once unless ``lazy``)."""
        return self._steps is not None

    @property
    def steps(self) -> list:
        """One ``Step`` per pass run, after the input program (step 0)."""
        if self._steps is None:
            self.run()
        return self._steps

    @property
    def output(self):
        """The program the last pass returned (the last good one when a pass failed)."""
        self.steps  # noqa: B018 - runs a lazy trace
        return self._output

    @property
    def error(self):
        """The exception a pass raised, if the pipeline failed (else None)."""
        self.steps  # noqa: B018 - runs a lazy trace
        return self._error

    @property
    def seconds(self) -> float:
        """Wall time of the pipeline run."""
        self.steps  # noqa: B018 - runs a lazy trace
        return self._seconds

    def run(self):
        """Run the passes (again) and record the steps."""
        snapshot = IRSnapshot()
        error = None
        start = time.perf_counter()
        mod = self.input
        instruments = [snapshot]
        if self.progress is not None:
            instruments.append(_Progress(self.progress))
        try:
            with self._target_scope(), PassContext(
                    opt_level=self.opt_level, disabled_pass=self.disabled_pass,
                    required_pass=self.required_pass, instruments=instruments,
                    config=self.config):
                for pass_ in self.passes:
                    mod = pass_(mod)
        except Exception as err:  # keep what ran: the viewer shows the failing pass
            error = err
        self._error = error
        self._seconds = time.perf_counter() - start
        self._output = mod
        from irlab.instrument import module_counts

        nodes, ops = module_counts(self.input)
        steps = [Step(0, "input", 0, None, 0, 0.0, False, self.input, nodes, dict(ops))]
        for record in snapshot.records:
            steps.append(Step(
                record.index + 1, record.name, record.depth,
                None if record.parent is None else record.parent + 1, record.opt_level,
                record.seconds, record.changed,
                record.after if record.after is not None else record.before,
                record.node_count, dict(record.op_counts), before=record.before))
        self._steps = steps

    def _target_scope(self):
        if self.target is None:
            return contextlib.nullcontext()
        from irlab.target import as_target

        return as_target(self.target)

    def __len__(self):
        return len(self.steps)

    def __getitem__(self, index) -> Step:
        return self.steps[index]

    # -- views of a step -------------------------------------------------------------------------
    def text(self, index) -> str:
        """The printed program after step ``index``."""
        if index not in self._texts:
            module = self.input if index == 0 else self.steps[index].module
            self._texts[index] = str(module)
        return self._texts[index]

    def graph(self, index):
        """The graph after step ``index``; an unchanged step shares the graph of the program
        it received (not of the step listed before it: with nesting, that is the enclosing
        Sequential's *result*). The input's (0) does not run a lazy trace: the run's first
        graph is the input's, so its ids are the same either way."""
        if index == 0 and not self._graphs:
            return self._graph_of(self.input)
        if not self._graphs:
            self._build_graphs()
        return self._graphs[index]

    def _build_graphs(self):
        """Graphs of every program of the run, in the order the programs appeared (a step's
        input when it starts, its output when it ends, after its nested steps), so that node
        ids follow each node from one version to the next."""
        children: dict = {}
        for step in self.steps[1:]:
            children.setdefault(step.parent, []).append(step.index)
        self._graphs[0] = self._graph_of(self.steps[0].module)
        stack = [(i, False) for i in reversed(children.get(None, []))]
        while stack:
            i, ended = stack.pop()
            step = self.steps[i]
            if ended:
                unchanged = not step.changed and step.before is not None
                self._graphs[i] = self._graph_of(step.before if unchanged else step.module)
                continue
            if step.before is not None:
                self._graph_of(step.before)
            stack.append((i, True))
            stack.extend((c, False) for c in reversed(children.get(i, [])))

    def before_graph(self, index):
        """The graph of the program step ``index`` received (the input's for step 0)."""
        step = self.steps[index]
        self.graph(index)  # ids are assigned in the order the programs appeared first
        return self._graph_of(step.before) if step.before is not None else self.graph(0)

    def _graph_of(self, module):
        key = _module_key(module)
        if key not in self._by_module:
            self._by_module[key] = (module, build_relay_graph(
                module, self.params, self._ids, fold_weights=self.fold_weights,
                names=self.weight_names))
        return self._by_module[key][1]

    def is_ancestor(self, a, b) -> bool:
        """True when step ``a`` encloses step ``b`` (``b`` ran nested inside ``a``)."""
        parent = self.steps[b].parent
        while parent is not None:
            if parent == a:
                return True
            parent = self.steps[parent].parent
        return False

    def diff(self, a, b, ignore_types=False) -> dict:
        """Text and graph difference between any two steps."""
        return {"text": diff_lines(self.text(a), self.text(b), ignore_types),
                "graph": graph_diff(self.graph(a), self.graph(b))}

    def provenance(self, node_id=None):
        """Indexes of the steps that created or changed graph node ``node_id`` (what each
        step did to the program it received). An enclosing step (a Sequential) is left out
        when a pass nested in it is listed. Without ``node_id``: the map for every node."""
        if self._provenance is None:
            hits: dict = {}
            for i in range(1, len(self.steps)):
                if not self.steps[i].changed:
                    continue
                for ident, state in graph_diff(self.before_graph(i), self.graph(i)).items():
                    if state in ("added", "changed"):
                        hits.setdefault(ident, []).append(i)
            self._provenance = {
                ident: [i for i in steps if not any(self.is_ancestor(i, j) for j in steps)]
                for ident, steps in hits.items()}
        if node_id is None:
            return self._provenance
        return list(self._provenance.get(node_id, []))

    # -- numerics ---------------------------------------------------------------------------------
    def check_numerics(self, inputs=None, seed=0, rtol=1e-4, atol=1e-4, only_changed=True):
        """Run the interpreter after each step on the same inputs; fill ``Step.error``.

        Returns the first step whose outputs differ from the input program's while the
        program it received still agreed (the innermost pass, not its enclosing Sequential),
        or None. Programs with the same functions run once.
        """
        from irlab.testing.check import random_inputs, run_module

        if self.is_relax:
            return self._check_relax_numerics(inputs, seed, rtol, atol)
        if inputs is None:
            inputs = random_inputs(self.input, seed)
        reference = run_module(self.input, inputs)
        results = {_module_key(self.input): (self.input, (0.0, 0.0), True)}

        def check(module):
            key = _module_key(module)
            if key not in results:
                got = run_module(module, inputs)
                results[key] = (module, _errors(reference, got),
                                _close(reference, got, rtol, atol))
            return results[key][1:]

        culprits = []
        for step in self.steps[1:]:
            source = step.module
            if only_changed and not step.changed and step.before is not None:
                source = step.before
            (step.abs_error, step.error), good = check(source)
            if not good and (step.before is None or check(step.before)[1]):
                culprits.append(step.index)
        self.steps[0].error = self.steps[0].abs_error = 0.0
        culprits = [i for i in culprits if not any(self.is_ancestor(i, j) for j in culprits)]
        return self.steps[culprits[0]] if culprits else None


    def _check_relax_numerics(self, inputs, seed, rtol, atol):
        """Numerics of a Relax run: the reference evaluator (``relax.testing.evaluate``) runs
        the entry function of each step's module on the same inputs (symbolic dims
        ``DEFAULT_DIM``). A module it cannot run (lowered to VM builtins, or with a kernel
        that does not build) keeps an unknown error (None): neither a culprit nor a witness."""
        from irlab.relax.testing import evaluate
        from irlab.relax.testing.random_inputs import random_inputs

        entry = relax_entry(self.input)
        if inputs is None:
            inputs = random_inputs(self.input[entry], seed=seed)
        reference = _flat(evaluate(self.input, inputs, entry))
        results = {_module_key(self.input): ((0.0, 0.0), True)}

        def check(module):
            key = _module_key(module)
            if key not in results:
                try:
                    got = _flat(evaluate(module, inputs, entry))
                except Exception:  # noqa: BLE001 - VM builtins, a kernel that fails to build
                    results[key] = ((None, None), None)
                else:
                    results[key] = (_errors(reference, got),
                                    _close(reference, got, rtol, atol))
            return results[key]

        culprits = []
        for step in self.steps[1:]:
            source = step.module
            if not step.changed and step.before is not None:
                source = step.before
            (step.abs_error, step.error), good = check(source)
            if good is False and (step.before is None or check(step.before)[1] is True):
                culprits.append(step.index)
        self.steps[0].error = self.steps[0].abs_error = 0.0
        culprits = [i for i in culprits if not any(self.is_ancestor(i, j) for j in culprits)]
        return self.steps[culprits[0]] if culprits else None


class _Progress(PassInstrument):
    """Reports the name of each pass as it starts (``PassTrace.progress``)."""

    def __init__(self, report):
        super().__init__()
        self.report = report

    def run_before_pass(self, mod, info):
        self.report(info.name)


def relax_entry(mod) -> str:
    """``main``, else the first (by name) Relax function of ``mod``."""
    from irlab.relax.expr import Function

    names = sorted(gv.name_hint for gv, f in mod.functions.items() if isinstance(f, Function))
    return "main" if "main" in names else names[0]


def _flat(value) -> list:
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _flat(v)]
    return [np.asarray(value)]


def _module_key(module) -> tuple:
    """Identity of a module's contents: the same function objects under the same names."""
    return tuple(sorted((gv.name_hint, id(func)) for gv, func in module.functions.items()))


def _errors(expected, got):
    if len(expected) != len(got):
        return float("inf"), float("inf")
    abs_err = rel_err = 0.0
    for e, g in zip(expected, got):
        if e.shape != g.shape:
            return float("inf"), float("inf")
        diff = np.abs(e.astype(np.float64) - g.astype(np.float64))
        if diff.size:
            # Norm-wise relative error: elementwise ratios explode where the reference is ~0.
            worst = float(np.nanmax(diff))
            abs_err = max(abs_err, worst)
            rel_err = max(rel_err, worst / max(float(np.nanmax(np.abs(e))), 1e-12))
    return abs_err, rel_err


def _close(expected, got, rtol, atol) -> bool:
    return len(expected) == len(got) and all(
        e.shape == g.shape and np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
        for e, g in zip(expected, got))
