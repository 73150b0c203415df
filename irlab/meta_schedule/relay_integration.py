"""Tuning Relay models (TVM's ``ms.relay_integration``).

``extract_tasks`` optimizes the model as ``relay.build`` does and turns each distinct fused
kernel into a task: the PrimFunc of its TE, unscheduled (TOPI's schedule plays no part;
the design space starts from the bare computation), weighted by how many times the model
calls it. ``tune_relay`` tunes them with the gradient-based task scheduler; ``compile_relay``
(or ``relay.build`` under ``with database:``) builds with the best record of each kernel,
TOPI's schedule for a kernel without one. ``tune_relay`` first times TOPI's schedule of each
kernel and stores it as a record (``default_schedule``); at the end it re-times each kernel's
best tuned records and TOPI's schedule in turns (``verify_best``, verification.py): a tuned
kernel is built only when it beat TOPI's there by more than a margin.
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir import IRModule, structural_equal, structural_hash
from irlab.meta_schedule.verification import verify_best  # noqa: F401  (TVM-style home)


class ExtractedTask:
    """A fused kernel to tune: ``mod`` (its PrimFunc as ``main``), ``weight`` (calls);
    ``default_schedule``: TOPI's ``tir.Schedule`` of ``mod`` (what an untuned build runs),
    None when unknown."""

    def __init__(self, task_name, mod, target, dispatched, weight, default_schedule=None):
        self.task_name = task_name
        self.mod = mod
        self.target = target
        self.dispatched = dispatched
        self.weight = weight
        self.default_schedule = default_schedule

    def __repr__(self):
        return f"ExtractedTask({self.task_name}, weight={self.weight})"


def _primitive_call_counts(main):
    """``[(fused Function, number of call sites)]`` in first-call order."""
    from irlab.relay import expr as R
    from irlab.relay.function import Function, is_primitive

    counts, order, seen, stack = {}, [], set(), [main.body]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        children = []
        if isinstance(e, R.Call):
            children = list(e.args)
            if isinstance(e.op, Function) and is_primitive(e.op) \
                    and e.op.get_attr("Compiler") is None:
                if id(e.op) not in counts:
                    order.append(e.op)
                counts[id(e.op)] = counts.get(id(e.op), 0) + 1
        elif isinstance(e, R.Tuple):
            children = list(e.fields)
        elif isinstance(e, R.TupleGetItem):
            children = [e.tuple_value]
        elif isinstance(e, R.Let):
            children = [e.value, e.body]
        stack.extend(reversed(children))
    order.reverse()  # found from the output back: reversed, the model's order
    return [(f, counts[id(f)]) for f in order]


def extract_tasks(mod, target, params=None, *, opt_level=3, pass_config=None,
                  module_equality="structural"):
    """The distinct fused kernels of ``mod`` as ``ExtractedTask``s (weight = call count),
    named uniquely, in the order the model calls them."""
    from irlab.meta_schedule.database.workload import normalize_mod
    from irlab.relay.backend.te_compiler import fused_name, lower_function
    from irlab.relay.pipeline import optimize
    from irlab.target import as_target
    from irlab.transform import PassContext

    if module_equality != "structural":
        raise IrlabError(f"extract_tasks: only module_equality='structural' is supported, "
                         f"got {module_equality!r}")
    target = as_target(target)
    # the caller's PassContext config, then pass_config (e.g. ``with PassContext(config=
    # {"relay.x86.conv2d_NCHWc": True}): tune_relay(...)`` tunes the NCHWc kernels)
    # use_meta_schedule as compile_relay builds (and TVM's extract_tasks): the kernels tuned
    # are the ones it will build (Winograd's among them: WINOGRAD_CONFIG)
    config = {**PassContext.current().config, "relay.backend.use_meta_schedule": True,
              **(pass_config or {})}
    with target, PassContext(opt_level=opt_level, config=config):
        fused, _ = optimize(mod, target, params)
    tasks, by_hash, names = [], {}, {}
    for func, count in _primitive_call_counts(fused["main"]):
        lowered = lower_function(func, target, "main")
        workload = normalize_mod(lowered.tir_from_te)
        key = structural_hash(workload)
        same = [t for t in by_hash.get(key, []) if structural_equal(t.mod, workload)]
        if same:
            same[0].weight += count
            continue
        name = fused_name(func, "").lstrip("_")
        names[name] = names.get(name, -1) + 1
        if names[name]:  # TVM's unique task names: fused_nn_conv2d_add, ..._1, ..._2
            name = f"{name}_{names[name]}"
        task = ExtractedTask(name, workload, target, [workload], count,
                             None if lowered.tuned else lowered.schedule)
        by_hash.setdefault(key, []).append(task)
        tasks.append(task)
    return tasks


def extracted_tasks_to_tune_contexts(extracted_tasks, work_dir=None, space="post-order-apply",
                                     strategy="evolutionary", num_threads="physical",
                                     seed=None):
    """One TuneContext per task (TVM's helper of the same name)."""
    from irlab.meta_schedule.tune import fresh_copy
    from irlab.meta_schedule.tune_context import TuneContext
    from irlab.tir.schedule import RandomEngine

    rand = RandomEngine(seed if seed is not None else -1)
    return [TuneContext(task.mod, target=task.target, space_generator=fresh_copy(space),
                        search_strategy=fresh_copy(strategy), task_name=task.task_name,
                        rand_state=rand.fork_seed(), num_threads=num_threads)
            for task in extracted_tasks]


def tune_relay(mod, params, target, work_dir, max_trials_global, *, max_trials_per_task=None,
               num_trials_per_iter=64, builder="local", runner="local", database="json",
               cost_model="xgb", measure_callbacks="default", task_scheduler="gradient",
               space="post-order-apply", strategy="evolutionary", seed=None,
               module_equality="structural", num_tuning_cores="physical", monitor=None,
               verify_top_k=3, verify_rounds=None, verify_single_thread=True):
    """Tune every fused kernel of ``mod``; trials go to tasks by the gradient-based
    scheduler (weighted by call counts). Returns the database. ``monitor``: a
    ``TuningObserver`` (e.g. ``irlab.widgets.TuningMonitor()``) that follows the run.

    At the end each task's ``verify_top_k`` best tuned records are re-timed with TOPI's
    schedule, interleaved (``verify_best``; ``verify_rounds`` rounds, default
    ``VERIFY_ROUNDS``); the build takes a tuned kernel only when it beat TOPI's there by
    more than ``VERIFY_MARGIN``. A resumed run verifies again; the latest verification
    counts. ``verify_single_thread``: a kernel that wins on the target's cores is verified on
    one thread too, for builds with ``-num-cores=1`` (``verify_best``'s ``single_thread``).
    ``verify_top_k=0``: no verification (TOPI's baseline is timed once more, and the fastest
    record wins)."""
    import os

    from irlab.meta_schedule.default_schedule import measure_default_schedules
    from irlab.meta_schedule.tune import make_builder, make_database, make_runner, tune_tasks
    from irlab.meta_schedule.verification import VERIFY_ROUNDS

    tasks = extract_tasks(mod, target, params, module_equality=module_equality)
    if not tasks:
        raise IrlabError("tune_relay: the model has no kernel to tune")
    contexts = extracted_tasks_to_tune_contexts(tasks, work_dir, space, strategy,
                                                num_tuning_cores, seed)
    if work_dir is not None:
        os.makedirs(work_dir, exist_ok=True)
    builder, runner = make_builder(builder), make_runner(runner)
    database = make_database(database, work_dir)
    # TOPI's kernels timed first, in the same runner: compile_relay keeps whichever is faster
    measure_default_schedules(tasks, builder, runner, database)
    database = tune_tasks(tasks=contexts, task_weights=[t.weight for t in tasks],
                          work_dir=work_dir, max_trials_global=max_trials_global,
                          max_trials_per_task=max_trials_per_task,
                          num_trials_per_iter=num_trials_per_iter, builder=builder,
                          runner=runner, database=database, cost_model=cost_model,
                          measure_callbacks=measure_callbacks, task_scheduler=task_scheduler,
                          module_equality=module_equality, monitor=monitor)
    if verify_top_k > 0:  # the best tuned kernels against TOPI's, timed in turns
        # no tqdm bar under a monitor that shows progress itself (a notebook widget: the
        # bar would be a second widget, one without a static picture)
        verify_best(tasks, database, builder, runner, top_k=verify_top_k,
                    rounds=verify_rounds or VERIFY_ROUNDS,
                    progress=not getattr(monitor, "shows_progress", False),
                    single_thread=verify_single_thread)
    else:  # TOPI's once more: a machine busy during one measurement does not decide
        measure_default_schedules(tasks, builder, runner, database, again=True)
    return database


def compile_relay(database, mod, target, params=None, *, backend="graph", opt_level=3,
                  pass_config=None, executor=None, runtime=None):
    """``relay.build`` with ``database``'s best records applied (TOPI's schedules for
    kernels without one)."""
    from irlab.relay.build_module import build
    from irlab.target import as_target
    from irlab.transform import PassContext

    if backend != "graph":
        raise IrlabError(f"compile_relay: only backend='graph' is supported, got {backend!r}")
    if not isinstance(mod, IRModule):
        raise IrlabError(f"compile_relay: expected an IRModule, got {type(mod).__name__}")
    target = as_target(target)
    config = {**PassContext.current().config, "relay.backend.use_meta_schedule": True,
              **(pass_config or {})}
    with target, database, PassContext(opt_level=opt_level, config=config):
        return build(mod, target=target, params=params, executor=executor, runtime=runtime)
