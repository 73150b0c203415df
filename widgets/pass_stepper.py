"""``PassStepper``: step through a pass pipeline run, in a notebook cell.

The module runs through a pipeline (default: relay.optimize's) as a ``PassTrace``. The widget
lists every pass run, nested ones indented, with its time and a mark when it changed the
program; "hide unchanged" and a filter shorten the list, "hide types" leaves the
``/* ty=... */`` annotations out of the programs and their diff. For the selected step it shows
the IR diff (side by side or unified; renumbering ignored; changed characters marked) and the
graph before and after, laid out once on the union of both so that nodes keep their places,
with added, removed and changed nodes coloured. The base of the diff is the program the pass
received, or any other step. Arrow keys, j/k and a slider move between steps.

Beyond that: *numerics* (``check_numerics()``, or the button: the interpreter runs after every
step on the same random inputs and the first step whose results differ is marked, with its max
abs/rel error); *provenance* (the inspector lists the passes that created or changed the
selected node); *pipeline editing* (disable, move, remove or add passes, including a pass
object from a cell with ``add_pass``, and re-run: the selected step and node stay selected).
"""

from __future__ import annotations

import anywidget
import traitlets as t

from irlab.viz.pass_trace import PassTrace
from irlab.viz.relax_graph import is_relax_module
from irlab.widgets.assets import css, widget_module
from irlab.widgets.graph_ops import node_details
from irlab.widgets.layout import LAYOUT_TIMEOUT
from irlab.widgets.picture import StaticPicture, diff_pre, esc, graph_svg, titled
from irlab.widgets.pipeline import (PipelineEntry, available_pass_names, default_passes,
                                    entries_from_passes, find_step, passes_from_entries,
                                    step_key)
from irlab.widgets.trace_data import (BEFORE, TraceData, first_interesting_step,
                                      pair_without_types, visible_steps)


class PassStepper(StaticPicture, anywidget.AnyWidget):
    """Step through ``mod`` (IRModule, function or expression; or a ``PassTrace``) run by
    ``passes`` (default relay.optimize's pipeline) under ``opt_level``; ``params`` are bound
    as constants first, as relay.build does. ``target`` (e.g. "llvm") is in scope while the
    passes run, as in relay.build (AlterOpLayout rewrites for it); None: the current one.
    ``fold_weights``: the bound weights (constants) are listed in their users' inspector
    rather than drawn (False: drawn as nodes, as before issue 21)."""

    _esm = widget_module("pass_stepper.js", "renderPassStepper")
    _css = css()

    steps = t.List().tag(sync=True)
    step = t.Int(0).tag(sync=True)
    base = t.Int(BEFORE).tag(sync=True)
    hide_unchanged = t.Bool(False).tag(sync=True)
    hide_types = t.Bool(False).tag(sync=True)  # diff the programs without /* ty=... */
    pass_search = t.Unicode("").tag(sync=True)
    current = t.Dict().tag(sync=True)
    selected = t.Unicode("").tag(sync=True)
    first_bad = t.Int(-1).tag(sync=True)
    pipeline = t.List().tag(sync=True)
    available_passes = t.List().tag(sync=True)
    status = t.Unicode("").tag(sync=True)
    error = t.Unicode("").tag(sync=True)
    view = t.Unicode("side").tag(sync=True)
    runs = t.Int(0).tag(sync=True)
    # Computed in Python for observers.
    visible = t.List()
    inspector = t.Dict()

    def __init__(self, mod=None, passes=None, params=None, opt_level=3, *, disabled_pass=(),
                 target=None, timeout=LAYOUT_TIMEOUT, fold_weights=True, **kwargs):
        super().__init__(**kwargs)
        self.timeout = timeout
        if isinstance(mod, PassTrace):
            trace = mod
            self._input, self._params = trace.input, trace.params
            self._context = dict(opt_level=trace.opt_level, disabled_pass=trace.disabled_pass,
                                 required_pass=trace.required_pass, config=trace.config,
                                 target=trace.target, fold_weights=trace.fold_weights)
        else:
            if mod is None:
                raise TypeError("PassStepper needs a module, an expression or a PassTrace")
            self._input, self._params = mod, params
            self._context = dict(opt_level=opt_level, disabled_pass=list(disabled_pass),
                                 target=target, fold_weights=fold_weights)
            if passes is None:  # a Relax module: PassTrace's default, the Relax pipeline
                passes = None if is_relax_module(mod) else default_passes()
            trace = PassTrace(mod, passes, params, **self._context)
        self.entries = entries_from_passes(trace.passes)
        self.available_passes = available_pass_names(relax=trace.is_relax)
        self._adopt(trace, step=first_interesting_step(trace))
        self.on_msg(self._on_msg)

    # -- the run ----------------------------------------------------------------------------------
    def _adopt(self, trace, step, selected=""):
        self.trace = trace
        self.data = TraceData(trace, self.timeout)
        self._untyped = {}  # pair key -> the pair without type annotations
        rows = self.data.step_rows()
        with self.hold_trait_notifications():
            self.steps = rows
            self.first_bad = -1
            self.error = "" if trace.error is None else f"{type(trace.error).__name__}: " \
                                                        f"{trace.error}"
            self.status = self._run_status()
            self.pipeline = [e.as_json(i) for i, e in enumerate(self.entries)]
            self.base = BEFORE
            self.step = step
            self._update_current()
            self.selected = selected if selected in self._union() else ""
            self._update_visible()
            self.runs += 1

    def _run_status(self) -> str:
        trace = self.trace
        done = f"{len(trace.steps) - 1} pass runs, {sum(s.changed for s in trace.steps)} " \
               f"changed the program, {trace.seconds * 1e3:.0f} ms"
        if trace.error is not None:
            return f"pipeline stopped at step {len(trace.steps) - 1}: {self.error} ({done})"
        return done

    def rerun(self):
        """Run the (edited) pipeline again; the selected step and node stay selected."""
        key = step_key(self.trace, self.step)
        selected = self.selected
        trace = PassTrace(self._input, passes_from_entries(self.entries), self._params,
                          **self._context)
        self._adopt(trace, find_step(trace, key, self.step), selected)

    # -- observers --------------------------------------------------------------------------------
    @t.validate("step")
    def _valid_step(self, proposal):
        return max(0, min(int(proposal["value"]), max(0, len(self.steps) - 1)))

    @t.validate("base")
    def _valid_base(self, proposal):
        value = int(proposal["value"])
        return value if 0 <= value < len(self.steps) else BEFORE

    @t.observe("step", "base", "hide_types")
    def _on_step(self, change):
        if getattr(self, "data", None) is not None:
            self._update_current()

    @t.observe("selected")
    def _on_selected(self, change):
        self._describe()

    @t.observe("hide_unchanged", "pass_search", "steps")
    def _on_filter(self, change):
        self._update_visible()

    def _update_visible(self):
        self.visible = visible_steps(self.steps, self.hide_unchanged, self.pass_search)

    def _update_current(self):
        try:
            current = self.data.resolve(self.data.pair(self.step, self.base))
            if self.hide_types:  # diffed once per pair (a 5,000-line diff takes a second)
                if current["key"] not in self._untyped:
                    self._untyped[current["key"]] = pair_without_types(current)
                current = self._untyped[current["key"]]
            self.current = current
        except Exception as err:  # noqa: BLE001 - shown in the widget, not lost in a log
            self.status = f"cannot show step {self.step}: {type(err).__name__}: {err}"
            return
        self._describe()

    def _union(self):
        return self.data.union(self.step, self.base)

    def _describe(self):
        if not self.selected or not self.current:
            self.inspector = {}
            return
        graph = self._union()
        node = graph.nodes.get(self.selected) if self.selected in graph else None
        state = next((n.get("state") for n in self.current["graph"]["nodes"]
                      if n["id"] == self.selected), None)
        text = self.current["text_a"] if state == "removed" else self.current["text_b"]
        info = node_details(graph, self.selected, text,
                            self.trace.provenance(self.selected), self.data.step_names())
        if node is not None:
            info["state"] = state or "same"
        self.inspector = info

    # -- numerics ---------------------------------------------------------------------------------
    def check_numerics(self, inputs=None, seed=0, rtol=1e-4, atol=1e-4):
        """Run the interpreter after every step on the same inputs (random ones from ``seed``
        unless given) and mark the first step whose results differ from the input program's.
        Returns that step (or None). For a Relax module the reference evaluator runs each
        step; steps it cannot run (lowered to VM builtins, or with a kernel that does not
        build) are not checked (the status counts them)."""
        first = self.trace.check_numerics(inputs=inputs, seed=seed, rtol=rtol, atol=atol)
        unchecked = sum(s.abs_error is None for s in self.trace.steps)
        note = f" ({unchecked} steps the reference evaluator cannot run were not checked)" \
            if unchecked else ""
        with self.hold_trait_notifications():
            self.steps = self.data.step_rows()
            self.first_bad = first.index if first is not None else -1
            if first is None:
                self.status = "numerics: every step computes what the input program " \
                              "computes" + note
            else:
                self.status = (f"numerics: results first differ after step {first.index} "
                               f"({first.name}): max abs error {first.abs_error:.3g}, "
                               f"rel {first.error:.3g}")
        return first

    # -- pipeline editing -------------------------------------------------------------------------
    def _index(self, which) -> list:
        if isinstance(which, int):
            if not -len(self.entries) <= which < len(self.entries):
                raise IndexError(f"the pipeline has {len(self.entries)} passes")
            return [which % len(self.entries)]
        found = [i for i, e in enumerate(self.entries) if e.name == which]
        if not found:
            raise KeyError(f"no pass named {which!r} in the pipeline")
        return found

    def _edited(self, rerun):
        self.pipeline = [e.as_json(i) for i, e in enumerate(self.entries)]
        if rerun:
            self.rerun()

    def disable_pass(self, which, rerun=True):
        """Disable a pass: by position, or every pass of that name."""
        for i in self._index(which):
            self.entries[i].enabled = False
        self._edited(rerun)

    def enable_pass(self, which, rerun=True):
        for i in self._index(which):
            self.entries[i].enabled = True
        self._edited(rerun)

    def move_pass(self, which, to, rerun=True):
        """Move a pass (position or first of that name) to position ``to``."""
        i = self._index(which)[0]
        entry = self.entries.pop(i)
        self.entries.insert(max(0, min(int(to), len(self.entries))), entry)
        self._edited(rerun)

    def remove_pass(self, which, rerun=True):
        i = self._index(which)[0]
        del self.entries[i]
        self._edited(rerun)

    def add_pass(self, pass_, position=None, *, after=None, before=None, rerun=True):
        """Add a pass (any ``irlab.transform.Pass``, e.g. one written in a cell, or a name of
        a Relay pass) at ``position``, or after/before the first pass of that name; at the
        end by default. Inside a group (relay.optimize's Sequential) it joins the group."""
        if isinstance(pass_, str):
            from irlab.transform import get_pass

            pass_ = get_pass(pass_)
        if after is not None:
            position = self._index(after)[0] + 1
        elif before is not None:
            position = self._index(before)[0]
        elif position is None:
            position = len(self.entries)
        position = max(0, min(int(position), len(self.entries)))
        group = None
        if 0 < position < len(self.entries) and \
                self.entries[position - 1].group is self.entries[position].group:
            group = self.entries[position].group
        self.entries.insert(position, PipelineEntry(pass_, group=group, custom=True))
        self._edited(rerun)

    def passes(self) -> list:
        """The passes the pipeline runs now (enabled entries, groups as Sequentials)."""
        return passes_from_entries(self.entries)

    # -- messages from the browser ----------------------------------------------------------------
    def _on_msg(self, widget, content, buffers):
        action = content.get("action") if isinstance(content, dict) else None
        try:
            if action == "numerics":
                self.check_numerics()
            elif action == "rerun":
                self.rerun()
            elif action == "pipeline":
                op, index = content.get("op"), content.get("index")
                if op == "toggle":
                    entry = self.entries[int(index)]
                    (self.enable_pass if not entry.enabled else self.disable_pass)(int(index))
                elif op in ("up", "down"):
                    self.move_pass(int(index), int(index) + (-1 if op == "up" else 1))
                elif op == "remove":
                    self.remove_pass(int(index))
                elif op == "add":
                    self.add_pass(str(content.get("name")))
        except Exception as err:  # noqa: BLE001 - the user sees it in the widget
            self.status = f"{action} failed: {type(err).__name__}: {err}"
        # The browser wrote "running..." in the status line: tell it the answer is in, even
        # when the status text did not change (no trait event then).
        self.send({"event": "done", "action": action})

    # -- text -------------------------------------------------------------------------------------
    def prepare(self, bases=()):
        """Lay out every step's before/after graph now (later switches are then instant)."""
        for i in range(len(self.trace.steps)):
            self.data.pair(i, BEFORE)
            for base in bases:
                self.data.pair(i, base)

    def summary(self) -> str:
        """The pass list as text: nesting, change mark, time, errors."""
        lines = []
        for r in self.steps:
            mark = "*" if r["changed"] else " "
            err = "" if r["error"] is None else f"  rel.err {r['error']:.3g}"
            bad = "  <- first difference" if r["i"] == self.first_bad else ""
            lines.append(f"{r['i']:3d} {mark} {'  ' * r['depth']}{r['name']} "
                         f"({r['ms']:.2f} ms){err}{bad}")
        return "\n".join(lines)

    # -- static picture ---------------------------------------------------------------------------
    def to_html(self) -> str:
        """The steps that changed the program (a table), and for the selected step its IR
        diff and its before/after graph (added, removed, changed nodes coloured)."""
        rows = "".join(
            f'<tr style="font-weight:{600 if r["i"] == self.step else 400}">'
            f'<td style="text-align:right">{r["i"]}</td>'
            f'<td style="padding-left:{r["depth"] * 12 + 4}px">{esc(r["name"])}</td>'
            f'<td style="text-align:right">{r["ms"]:.2f} ms</td>'
            f'<td style="text-align:right">{r["ops"]}</td></tr>'
            for r in self.steps if r["changed"] or r["i"] == self.step)
        table = ('<details><summary>steps that changed the program</summary>'
                 '<table style="font-size:12px"><tr><th>#</th><th>pass</th><th>time</th>'
                 f"<th>ops after</th></tr>{rows}</table></details>")
        current = self.current or {}
        if not current:
            return titled("PassStepper", self.status, table)
        step = current["step"]
        stats = current.get("stats", {})
        nodes = stats.get("nodes", {})
        heading = (f"step {step}: {current.get('title', '')} (against the "
                   f"{current.get('base_label', 'input')}): {stats.get('added', 0)} lines "
                   f"added, {stats.get('removed', 0)} removed, {stats.get('replaced', 0)} "
                   f"replaced; nodes {nodes.get('added', 0)} added, "
                   f"{nodes.get('removed', 0)} removed, {nodes.get('changed', 0)} changed")
        return titled("PassStepper", self.status, table, f"<p>{esc(heading)}</p>",
                      diff_pre(current["text_a"], current["text_b"], current["rows"]),
                      graph_svg(current.get("graph")))
