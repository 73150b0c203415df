"""``TuningMonitor``: a MetaSchedule tuning run, seen while it runs.

Pass one to a tuning call (``ms.tune_tir(..., monitor=mon)``, ``tune_relay``, ``tune_tasks``)
after displaying it: it is a ``ms.tuning_observer.TuningObserver``, so the task scheduler
tells it of every measured batch and the view updates live (the kernel sends the new state
while the cell still runs). It shows the per-task table (weight, trials, failures, best
latency and GFLOPS), the best-so-far curves over trials (GFLOPS per task, weighted latency of
the whole network) and the cost model's accuracy (Spearman's rank correlation between the
predicted scores and the measured throughputs of each round). Ctrl-C leaves it showing what
was reached, marked "interrupted"; the database already holds every measured record.

Python: ``tasks``, ``curves``, ``network``, ``accuracy`` (the synced state), ``events`` (every
``TuningEvent``), ``to_html()`` (static picture: table + inline SVG), ``str()`` (text).
``TuningMonitor.from_database(db)`` replays a finished run's records (in the order they were
measured) into a monitor, for a database read from disk.
"""

from __future__ import annotations

import math

import anywidget
import traitlets as t

from irlab.meta_schedule.tuning_observer import TaskSummary, TuningEvent, TuningObserver
from irlab.widgets.assets import css, widget_module
from irlab.widgets.picture import StaticPicture, esc, titled
from irlab.widgets.tuning_charts import accuracy_svg, curves_svg

MAX_POINTS = 2000  # per curve: a long run keeps every n-th point so syncs stay small


def _ms(secs):
    return secs * 1e3 if secs is not None and math.isfinite(secs) else None


def _thin(points):
    """A new list (a synced trait must not share lists with its old value: traitlets would
    see no change), every n-th point of a long one."""
    if len(points) <= MAX_POINTS:
        return [list(p) for p in points]
    step = math.ceil(len(points) / MAX_POINTS)
    return points[::step] + ([points[-1]] if (len(points) - 1) % step else [])


class TuningMonitor(TuningObserver, StaticPicture, anywidget.AnyWidget):
    """Live table and curves of a tuning run (see the module docstring)."""

    _esm = widget_module("tuning_monitor.js", "renderTuningMonitor")
    _css = css()
    shows_progress = True  # the tuning's tqdm bar is left out: this is the progress display

    tasks = t.List().tag(sync=True)     # [{id, name, weight, trials, failed, best_ms, gflops,
                                        #   error}]
    curves = t.Dict().tag(sync=True)    # task name -> [[trial, best GFLOPS so far]]
    network = t.List().tag(sync=True)   # [[trial, weighted best latency ms]]
    accuracy = t.List().tag(sync=True)  # [{task, round, trial, rho, n}]
    total_trials = t.Int(0).tag(sync=True)
    max_trials = t.Int(0).tag(sync=True)
    status = t.Unicode("waiting for a tuning run").tag(sync=True)
    title = t.Unicode("Tuning").tag(sync=True)

    def __init__(self, title="Tuning", *, max_trials=0, **kwargs):
        super().__init__(**kwargs)
        self.title = str(title)
        self.max_trials = int(max_trials)
        self.events: list[TuningEvent] = []
        self._failed = {}   # task id -> failed trials
        self._curves = {}   # task name -> [[trial, gflops]] (full, before thinning)
        self._network = []

    # -- TuningObserver ---------------------------------------------------------------------
    def on_tuning_start(self, tasks) -> None:
        self.events, self._failed, self._curves, self._network = [], {}, {}, []
        with self.hold_sync():
            self.tasks = [self._row(s) for s in tasks]
            self.curves, self.network, self.accuracy = {}, [], []
            self.total_trials = 0
            self.status = f"tuning {len(tasks)} task{'s' * (len(tasks) != 1)}…"

    def on_batch(self, event: TuningEvent) -> None:
        self.events.append(event)
        task = event.task
        failed = sum(s is None for s in event.run_secs)
        self._failed[task.task_id] = self._failed.get(task.task_id, 0) + failed
        self._extend_curve(event)
        if event.network_secs is not None:
            self._network.append([event.total_trials, event.network_secs * 1e3])
        rho = event.rank_correlation()
        with self.hold_sync():
            self.tasks = [self._row(s) for s in event.tasks]
            self.curves = {k: _thin(v) for k, v in self._curves.items()}
            self.network = _thin(list(self._network))
            if rho is not None:
                self.accuracy = self.accuracy + [{
                    "task": task.name, "round": event.round_index,
                    "trial": event.total_trials, "rho": rho,
                    "n": sum(s is not None for s in event.run_secs)}]
            self.total_trials = event.total_trials
            best = _ms(task.best_secs)
            self.status = (f"{event.total_trials} trials · {task.name} round "
                           f"{event.round_index + 1}: best "
                           + (f"{best:.4f} ms, {task.best_gflops:.1f} GFLOPS"
                              if best is not None else "none yet"))

    def on_tuning_end(self, tasks, total_trials, interrupted) -> None:
        with self.hold_sync():
            self.tasks = [self._row(s) for s in tasks]
            self.total_trials = int(total_trials)
            how = "interrupted" if interrupted else "done"
            self.status = f"{how} after {total_trials} trials" + (
                " (every measured record is in the database)" if interrupted else "")

    def _row(self, summary: TaskSummary) -> dict:
        return {"id": summary.task_id, "name": summary.name, "weight": summary.weight,
                "trials": summary.trials, "failed": self._failed.get(summary.task_id, 0),
                "best_ms": _ms(summary.best_secs), "gflops": summary.best_gflops,
                "error": summary.error or ""}

    def _extend_curve(self, event):
        task = event.task
        curve = self._curves.setdefault(task.name, [])
        best = curve[-1][1] if curve else 0.0
        first = event.total_trials - len(event.run_secs)
        for i, secs in enumerate(event.run_secs):
            if secs is not None and secs > 0:
                best = max(best, task.flop / secs / 1e9)
            if best > 0:
                curve.append([first + i + 1, best])

    # -- a finished run -------------------------------------------------------------------
    @classmethod
    def from_database(cls, database, tasks=None, title="Tuning (read from the database)"):
        """A monitor filled from ``database``'s records in measured order: one round per run
        of consecutive records of a workload. ``tasks``: ``[(name, mod, weight)]`` or
        ``ExtractedTask``s naming the workloads. A database stores no predictions, so the
        accuracy chart stays empty."""
        from irlab.meta_schedule.tuning_observer import replay_records

        named = [(t.task_name, t.mod, t.weight) if hasattr(t, "task_name") else tuple(t)
                 for t in tasks or ()]
        monitor = cls(title)
        summaries = ()
        for item in replay_records(database, named):
            if isinstance(item, tuple):
                summaries = item
                monitor.on_tuning_start(item)
            else:
                summaries = item.tasks
                monitor.on_batch(item)
        monitor.on_tuning_end(summaries, monitor.total_trials, False)
        return monitor

    # -- static picture and text ------------------------------------------------------------
    def _table_html(self) -> str:
        def num(value, fmt):
            return "" if value is None else format(value, fmt)

        rows = "".join(
            f"<tr><td>{r['id']}</td><td>{esc(r['name'])}</td><td>{r['weight']:g}</td>"
            f"<td>{r['trials']}</td><td>{r['failed']}</td>"
            f"<td>{num(r['best_ms'], '.4f')}</td><td>{num(r['gflops'] or None, '.2f')}</td>"
            f"<td>{esc(r['error'][:80])}</td></tr>" for r in self.tasks)
        return ('<table style="border-collapse:collapse;font-size:12px">'
                "<tr><th>#</th><th>task</th><th>weight</th><th>trials</th><th>failed</th>"
                "<th>best ms</th><th>GFLOPS</th><th></th></tr>" + rows + "</table>")

    def to_html(self) -> str:
        """Table, best-so-far curves and accuracy as HTML with inline SVG (all escaped)."""
        sub = f"{self.status} · {self.total_trials} trials"
        parts = [self._table_html()]
        if self.curves:
            parts.append(curves_svg(self.curves, "best GFLOPS so far, per task", "GFLOPS"))
        if self.network:
            parts.append(curves_svg({"network (weighted)": self.network},
                                    "whole network: weighted best latency so far", "ms"))
        if self.accuracy:
            parts.append(accuracy_svg(self.accuracy))
        return titled(f"TuningMonitor: {self.title}", sub, *parts)

    def __str__(self):
        lines = [f"TuningMonitor {self.title}: {self.status}"]
        for r in self.tasks:
            best = "-" if r["best_ms"] is None else f"{r['best_ms']:.4f} ms"
            lines.append(f"  {r['id']:>2} {r['name']:<36} weight {r['weight']:g}  trials "
                         f"{r['trials']:>4}  best {best}  {r['gflops']:.2f} GFLOPS")
        if self.accuracy:
            rhos = ", ".join(f"{a['rho']:+.2f}" for a in self.accuracy[-8:])
            lines.append(f"  cost model rank correlation (last rounds): {rhos}")
        return "\n".join(lines)

    def __repr__(self):
        return f"TuningMonitor({self.title!r}, {len(self.tasks)} tasks, " \
               f"{self.total_trials} trials)"
