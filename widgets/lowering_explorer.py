"""``LoweringExplorer``: one fused function at every level of the lowering, side by side.

Pick a kernel (name, anchor op, time when known) and see its fused Relay function, the TIR that
TE made of it, the scheduled TIR (with the schedule's trace), the lowered TIR, its LLVM IR (its
own functions only) and its assembly (its own symbols only). Clicking a line selects the loop it
belongs to (a ``for`` line: that loop) and highlights that loop variable in every pane: the TIR
lines of the loop and the ones that mention it, the LLVM ``for.<var>`` blocks, the assembly
blocks whose IR name is one of them.

Kernels an external compiler made (BYOC: ``partition_for_dnnl`` ...) are listed beside the
native ones (op: the compiler); they show their partitioned Relay function and the source
their codegen generated (the ``source`` pane), in place of the levels they do not have.
A kernel scheduled by a tuning record (a library built with ``ms.relay_integration.
compile_relay`` or under ``with database:``) is marked "tuned": the schedule trace is the
record's, its sampled decisions (``decision=...``) highlighted, shown beside the TOPI default
schedule of the same kernel (its trace and scheduled TIR, lowered again without the database).

Python: ``select(kernel)``, ``select_loop(var)``, ``texts`` (pane -> text, every pane computed),
``marks`` (pane -> lines highlighted), ``loops`` (loop variables of the kernel). The assembly is
made when first shown (``load_asm()``, the pane's button, or ``texts``).
"""

from __future__ import annotations

import html

import anywidget
import traitlets as t

from irlab.widgets.assets import css, widget_module
from irlab.widgets.lowering_data import (PANE_KEYS, PANES, KernelView, ModuleTexts,
                                         as_factory, external_kernels)
from irlab.widgets.picture import StaticPicture


class LoweringExplorer(StaticPicture, anywidget.AnyWidget):
    """Every level of each kernel of ``factory_or_mod`` (a ``relay.build`` result, or a
    module / function / ``(mod, params)`` built here for ``target``)."""

    _esm = widget_module("lowering_explorer.js", "renderLoweringExplorer")
    _css = css()

    kernels = t.List().tag(sync=True)  # [{name, op, impl, ms, compiler}]
    kernel = t.Unicode("").tag(sync=True)
    panes = t.Dict().tag(sync=True)  # pane -> {title, text, loops: [var per line]}
    trace = t.Unicode("").tag(sync=True)  # the schedule's trace of the kernel
    tuned = t.Bool(False).tag(sync=True)  # the kernel's schedule came from a tuning record
    decision_lines = t.List().tag(sync=True)  # trace lines (0-based) holding a decision
    default_trace = t.Unicode("").tag(sync=True)  # a tuned kernel: TOPI's trace ...
    default_scheduled = t.Unicode("").tag(sync=True)  # ... and scheduled TIR
    loop = t.Unicode("").tag(sync=True)
    loops = t.List().tag(sync=True)
    marks = t.Dict().tag(sync=True)  # pane -> {head, body, use}: line numbers (0-based)
    optimized = t.Bool(False).tag(sync=True)  # LLVM IR / assembly after LLVM's optimizer
    show_asm = t.Bool(False).tag(sync=True)
    status = t.Unicode("").tag(sync=True)

    def __init__(self, factory_or_mod, params=None, target="llvm", *, kernel=None,
                 show_asm=False, times=None, **kwargs):
        super().__init__(**kwargs)
        self.factory = as_factory(factory_or_mod, params, target)
        self.library = ModuleTexts(self.factory, getattr(self.factory, "target", target))
        view_class = getattr(self.factory, "kernel_view", KernelView)  # Relax: RelaxBuild's
        self._views = {low.name: view_class(low.name, low, self.library)
                       for low in self.factory.lowered}
        self._views.update((view.name, view) for view in external_kernels(self.factory))
        self._times = dict(times or {})
        self._update_kernels()
        with self.hold_trait_notifications():
            self.show_asm = bool(show_asm)
            names = list(self._views)
            self.kernel = kernel if kernel in self._views else (names[0] if names else "")
        if not self._views:
            self.status = "the module has no kernels"
        self.on_msg(self._on_msg)

    # -- state ------------------------------------------------------------------------------------
    @property
    def view(self) -> KernelView | None:
        return self._views.get(self.kernel)

    def _update_kernels(self):
        rows = []
        for name, view in self._views.items():
            seconds = self._times.get(name)
            rows.append({"name": name, "op": view.anchor_op, "impl": view.implementation,
                         "tuned": view.tuned,
                         "ms": None if seconds is None else seconds * 1e3,
                         "compiler": view.compiler})
        self.kernels = rows

    def set_times(self, times: dict):
        """Time per kernel (seconds, by kernel name) shown in the kernel list."""
        self._times = dict(times or {})
        self._update_kernels()

    @t.validate("kernel")
    def _valid_kernel(self, proposal):
        name = proposal["value"]
        if name and name not in self._views:
            raise t.TraitError(f"no kernel named {name!r}; kernels: {', '.join(self._views)}")
        return name

    @t.observe("kernel", "optimized", "show_asm")
    def _on_kernel(self, change):
        view = self.view
        if view is None:
            self.panes, self.loops, self.trace = {}, [], ""
            self.tuned, self.decision_lines = False, []
            self.default_trace = self.default_scheduled = ""
            return
        keep = self.loop
        panes = {}
        for key, title in PANES:
            title = view.pane_title(key, title)
            if key not in view.panes:  # a level this kernel does not have
                panes[key] = {"title": title, "text": "", "loops": [], "hidden": True}
                continue
            if key == "asm" and not (self.show_asm or
                                     self.library.asm_ready(self.optimized)):
                panes[key] = {"title": title, "text": "", "loops": [], "pending": True}
                continue
            try:
                text = view.text(key, self.optimized)
            except Exception as err:  # noqa: BLE001 - one broken level must not hide the rest
                text = f"({key} not available: {type(err).__name__}: {err})"
            panes[key] = {"title": title, "text": text,
                          "loops": view.line_loops(key, text)}
        loops = view.loop_vars()
        # One message to the browser: panes drawn with the old kernel's marks would highlight
        # (and scroll to) the old loop's line numbers in the new text.
        default = self._default_texts(view)
        with self.hold_sync(), self.hold_trait_notifications():
            self.trace = view.text("trace")
            self.tuned = view.tuned
            self.decision_lines = [i for i, line in enumerate(self.trace.split("\n"))
                                   if "decision=" in line]
            self.default_trace, self.default_scheduled = default
            self.panes = panes
            self.loops = loops
            self.loop = keep if keep in loops else ""
            self._update_marks()
        op = f" ({view.anchor_op})" if view.anchor_op else ""
        self.status = f"{view.name}{op}: " + (
            f"made by relay.ext.{view.compiler}" if view.compiler else f"{len(loops)} loops")

    @staticmethod
    def _default_texts(view) -> tuple:
        """(trace, scheduled TIR) of TOPI's schedule of a tuned kernel; ('', '') otherwise."""
        if not view.tuned:
            return "", ""
        try:
            return view.text("default_trace"), view.text("default_scheduled")
        except Exception as err:  # noqa: BLE001 - the tuned panes still show
            return f"(TOPI default not available: {type(err).__name__}: {err})", ""

    @t.observe("loop")
    def _on_loop(self, change):
        self._update_marks()

    def _update_marks(self):
        view = self.view
        if view is None or not self.loop:
            self.marks = {}
            return
        self.marks = {key: view.marks(key, pane["text"], self.loop)
                      for key, pane in self.panes.items() if pane.get("text")}

    # -- Python-side controls ---------------------------------------------------------------------
    def select(self, kernel_name: str):
        """Show another kernel."""
        self.kernel = kernel_name

    def select_loop(self, var: str):
        """Highlight loop variable ``var`` in every pane ('' or None: none)."""
        self.loop = var or ""

    def load_asm(self):
        """Compute (once) and show the assembly."""
        self.show_asm = True

    @property
    def texts(self) -> dict:
        """Pane -> text of the current kernel (every level it has, the assembly included),
        plus ``trace`` (the schedule's trace)."""
        view = self.view
        if view is None:
            return {}
        out = {key: view.text(key, self.optimized) for key in PANE_KEYS if key in view.panes}
        out["trace"] = view.text("trace")
        if view.tuned:
            out["default_trace"], out["default_scheduled"] = self._default_texts(view)
        return out

    def loop_at(self, pane: str, line: int) -> str:
        """The loop a click on ``line`` (0-based) of ``pane`` selects ('' for none)."""
        loops = self.panes.get(pane, {}).get("loops", [])
        return loops[line] if 0 <= line < len(loops) else ""

    def _on_msg(self, widget, content, buffers):
        action = content.get("action") if isinstance(content, dict) else None
        try:
            if action == "asm":
                self.load_asm()
        except Exception as err:  # noqa: BLE001 - shown in the widget
            self.status = f"{action} failed: {type(err).__name__}: {err}"
        self.send({"event": "done", "action": action})

    # -- text fallback ----------------------------------------------------------------------------
    def _kernel_table(self) -> str:
        """The kernel list (name, anchor op, time when known) as an HTML table."""
        rows = "".join(
            f"<tr><td>{html.escape(str(k.get('name', '')))}</td>"
            f"<td>{html.escape(str(k.get('op') or ''))}</td>"
            f"<td>{html.escape(str(k.get('impl') or ''))}"
            f"{' <b>tuned</b>' if k.get('tuned') else ''}</td>"
            f"<td style=\"text-align:right\">"
            f"{'' if k.get('ms') is None else format(k['ms'], '.3f') + ' ms'}</td></tr>"
            for k in self.kernels)
        return (f"<details><summary>{len(self.kernels)} kernels</summary><table>"
                "<tr><th>kernel</th><th>op</th><th>implementation</th><th>time</th></tr>"
                f"{rows}</table></details>")

    def to_html(self) -> str:
        """The current kernel's panes as static HTML (every string escaped)."""
        view = self.view
        if view is None:
            return "<div><b>LoweringExplorer</b>: no kernels</div>"
        marks = self.marks
        parts = [f"<div><p><b>LoweringExplorer</b>: {html.escape(view.name)}"
                 f"{' (' + html.escape(view.anchor_op) + ')' if view.anchor_op else ''}"
                 f"{' · loop ' + html.escape(self.loop) if self.loop else ''}</p>",
                 self._kernel_table(), self._tuned_html()]
        for key, title in PANES:
            pane = self.panes.get(key, {})
            if pane.get("hidden"):
                continue
            title = pane.get("title", title)
            text = pane.get("text", "")
            if pane.get("pending"):
                text = "(assembly not computed yet: load_asm())"
            lit = set(marks.get(key, {}).get("head", [])) | set(marks.get(key, {})
                                                                  .get("body", []))
            lines = []
            for i, line in enumerate(text.split("\n")):
                esc = html.escape(line)
                lines.append(f'<span style="background:#fef9c3">{esc}</span>' if i in lit
                             else esc)
            parts.append(f"<details{' open' if key != 'asm' else ''}><summary>"
                         f"{html.escape(title)}</summary><pre style=\"font-size:11px;"
                         f"max-height:300px;overflow:auto\">{chr(10).join(lines)}</pre>"
                         f"</details>")
        return "".join(parts) + "</div>"

    def _tuned_html(self) -> str:
        """A tuned kernel: its trace (decision lines highlighted) beside TOPI's default."""
        if not self.tuned:
            return ""
        lit = set(self.decision_lines)
        lines = [f'<span style="background:#fde68a">{html.escape(line)}</span>' if i in lit
                 else html.escape(line) for i, line in enumerate(self.trace.split("\n"))]
        cell = ('<td style="vertical-align:top"><b>{}</b><pre style="font-size:11px;'
                'max-height:360px;overflow:auto">{}</pre></td>')
        default = html.escape(self.default_trace + "\n\n" + self.default_scheduled)
        return ('<table><tr>' + cell.format("tuned: trace with its sampled decisions",
                                            "\n".join(lines))
                + cell.format("TOPI default: trace and scheduled TIR", default)
                + "</tr></table>")

    def __str__(self):
        view = self.view
        if view is None:
            return "LoweringExplorer(no kernels)"
        out = [f"LoweringExplorer: kernel {view.name}"]
        for key, title in PANES:
            if self.panes.get(key, {}).get("hidden"):
                continue
            title = self.panes.get(key, {}).get("title", title)
            text = self.panes.get(key, {}).get("text", "")
            out.append(f"--- {title} ---\n{text if text else '(not computed)'}")
        return "\n".join(out)
