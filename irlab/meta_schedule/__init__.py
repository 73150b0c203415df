"""MetaSchedule: automatic search over TIR schedules (``from irlab import meta_schedule as ms``).

A PrimFunc's design space comes from schedule rules whose ``sample_*`` decisions are recorded in a
trace; a search strategy (evolution guided by a learned cost model) picks candidates, a builder and
a runner compile and time them, and a database keeps the records that ``relay.build`` and
``compile_tir`` later apply. Submodules load on first use, as TVM's names are reached
(``ms.database.JSONDatabase``, ``ms.tune_tir``), so ``import irlab`` stays fast.
"""

import importlib as _importlib

# Each TVM submodule name of ``tvm.meta_schedule`` that irlab implements.
_SUBMODULES = (
    "arg_info", "builder", "cost_model", "database", "feature_extractor", "logging", "measure_callback",
    "mutator", "postproc", "relay_integration", "runner", "schedule_rule", "search_strategy",
    "space_generator", "task_scheduler", "testing", "tir_integration", "tune", "tune_context",
    "tuning_observer", "utils", "widgets_data",
)
# Names TVM exports at the package's top level, and the submodule each lives in.
_TOP_LEVEL = {
    "TuneContext": "tune_context",
    "tune_tir": "tir_integration",
    "tune_tasks": "tune",
    "TuneConfig": "tune",
    "TuningObserver": "tuning_observer",
}


def __getattr__(name):
    if name in _SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    if name in _TOP_LEVEL:
        return getattr(_importlib.import_module(f"{__name__}.{_TOP_LEVEL[name]}"), name)
    raise AttributeError(f"module 'irlab.meta_schedule' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES) | set(_TOP_LEVEL))
