// lowering_explorer.js: the LoweringExplorer widget (needs irlab_core.js in front of it).
// Synced traits read here: kernels, kernel, panes ({pane: {title, text, loops, pending,
// hidden}}: a hidden pane is a level the kernel does not have, e.g. an external kernel's TIR),
// trace, loop, loops, marks ({pane: {head, body, use}}), optimized, show_asm, status, and for a
// kernel scheduled by a tuning record: tuned, decision_lines, default_trace, default_scheduled.
// Every model string reaches the DOM as text (h(..., {text}) / irHighlight), never as HTML.

const LX_PANES = ["relay", "te", "scheduled", "lowered", "llvm", "asm", "source"];

function renderLoweringExplorer({ model, el }) {
  const save = (pairs) => {
    for (const [k, v] of Object.entries(pairs)) model.set(k, v);
    model.save_changes();
  };
  const kernelSelect = h("select", { "data-testid": "kernel-select", class: "irlab-kernel-select",
    title: "fused function (kernel)" });
  const loopSelect = h("select", { "data-testid": "loop-select", title: "loop variable" });
  const optBox = h("input", { type: "checkbox", "data-testid": "optimized-toggle" });
  const status = h("span", { class: "irlab-status", "data-testid": "status" });
  const grid = h("div", { class: "irlab-lx-grid", "data-testid": "lowering-panes" });
  const boxes = {};
  const traceBox = h("pre", { class: "irlab-lx-trace", "data-testid": "schedule-trace" });
  const traceSummary = h("summary", { text: "schedule trace" });
  const defaultBox = h("pre", { class: "irlab-lx-trace", "data-testid": "default-trace" });
  const defaultCol = h("div", { class: "irlab-lx-default" },
    h("div", { class: "irlab-muted", text: "TOPI default: trace and scheduled TIR" }), defaultBox);
  const traceDetails = h("details", { class: "irlab-lx-details" }, traceSummary,
    h("div", { class: "irlab-lx-traces" }, h("div", {}, traceBox), defaultCol));
  for (const key of LX_PANES) {
    const title = h("span", { class: "irlab-lx-title", "data-testid": `pane-title-${key}` });
    const box = h("div", { class: "irlab-ir irlab-lx-code", "data-testid": `pane-${key}` });
    const extra = key === "scheduled" ? traceDetails : null;
    const pane = h("div", { class: "irlab-pane irlab-lx-pane", "data-pane": key },
      h("div", { class: "irlab-pane-title" }, title), extra, box);
    boxes[key] = { pane, title, box };
    grid.append(pane);
  }
  const root = h("div", { class: "irlab irlab-lowering", "data-testid": "lowering-explorer",
    tabIndex: 0 },
  h("div", { class: "irlab-toolbar" }, h("span", { class: "irlab-title", text: "Kernel" }),
    kernelSelect, h("span", { class: "irlab-muted", text: "loop" }), loopSelect,
    h("label", { class: "irlab-check", title: "LLVM IR and assembly after LLVM's optimizer" },
      optBox, "optimized LLVM"), status),
  grid);
  el.replaceChildren(root);

  function drawKernels() {
    const current = model.get("kernel") || "";
    kernelSelect.replaceChildren(...(model.get("kernels") || []).map((k) => {
      const bits = [k.name];
      if (k.op) bits.push(k.compiler ? `external: ${k.op}` : k.op);
      if (k.tuned) bits.push("tuned");
      if (k.ms !== null && k.ms !== undefined) bits.push(fmtMs(k.ms));
      return h("option", { value: k.name, text: bits.join(" · "), selected: k.name === current });
    }));
    kernelSelect.value = current;
  }

  function drawLoops() {
    const current = model.get("loop") || "";
    loopSelect.replaceChildren(h("option", { value: "", text: "(none)" }),
      ...(model.get("loops") || []).map((v) => h("option", { value: v, text: v })));
    loopSelect.value = current;
  }

  const shown = {};  // pane -> the text drawn last: a new text is shown from its top
  function drawPanes() {
    const panes = model.get("panes") || {};
    drawTrace();
    grid.classList.toggle("irlab-lx-external", !!(panes.source && !panes.source.hidden));
    for (const key of LX_PANES) {
      const { pane: paneEl, title, box } = boxes[key];
      const pane = panes[key] || { title: key, text: "", loops: [], hidden: key === "source" };
      paneEl.hidden = !!pane.hidden;
      title.textContent = pane.title || key;
      box.replaceChildren();
      if (shown[key] !== (pane.pending ? null : pane.text || "")) box.scrollTop = 0;
      shown[key] = pane.pending ? null : pane.text || "";
      if (pane.pending) {
        box.append(h("div", { class: "irlab-banner" },
          h("button", { "data-testid": "load-asm", text: "Show assembly",
            on: { click: () => { status.textContent = "compiling assembly…";
              model.send({ action: "asm" }); } } })));
        continue;
      }
      const loops = pane.loops || [];
      const frag = document.createDocumentFragment();
      (pane.text || "").split("\n").forEach((line, i) => {
        frag.append(h("div", { class: "irlab-irline", "data-line": i, "data-testid": "code-line",
          on: { click: () => save({ loop: loops[i] || "" }) } },
        h("span", { class: "no", text: i + 1 }),
        h("span", { class: "code" }, irHighlight(line, []))));
      });
      box.append(frag);
    }
    drawMarks(true);
  }

  /** The trace, its decision lines marked; a tuned kernel's TOPI default beside it. */
  function drawTrace() {
    const tuned = !!model.get("tuned");
    const lit = new Set(model.get("decision_lines") || []);
    traceBox.replaceChildren(...(model.get("trace") || "").split("\n").map((line, i) =>
      h("div", { class: lit.has(i) ? "decision" : "", "data-testid": lit.has(i)
        ? "decision-line" : null, text: line })));
    traceSummary.textContent = tuned
      ? "tuned: trace with its sampled decisions, beside TOPI's default" : "schedule trace";
    defaultCol.style.display = tuned ? "" : "none";
    defaultBox.textContent = tuned
      ? `${model.get("default_trace") || ""}\n\n${model.get("default_scheduled") || ""}` : "";
    if (tuned) traceDetails.open = true;
  }

  function drawMarks(scroll) {
    const marks = model.get("marks") || {};
    for (const key of LX_PANES) {
      const { box } = boxes[key];
      for (const el of box.querySelectorAll(".loop-head, .loop-body, .loop-use")) {
        el.classList.remove("loop-head", "loop-body", "loop-use");
      }
      const m = marks[key];
      if (!m) continue;
      let first = null;
      for (const kind of ["body", "use", "head"]) {
        for (const n of m[kind] || []) {
          const line = box.querySelector(`.irlab-irline[data-line="${Number(n)}"]`);
          if (!line) continue;
          line.classList.add(`loop-${kind}`);
          if (kind === "head" && first === null) first = line;
        }
      }
      if (scroll && first) {
        requestAnimationFrame(() => { box.scrollTop = first.offsetTop - box.clientHeight / 4; });
      }
    }
    loopSelect.value = model.get("loop") || "";
  }

  function drawStatus() {
    status.textContent = model.get("status") || "";
    optBox.checked = !!model.get("optimized");
  }

  kernelSelect.addEventListener("change", () => save({ kernel: kernelSelect.value }));
  loopSelect.addEventListener("change", () => save({ loop: loopSelect.value }));
  optBox.addEventListener("change", () => save({ optimized: optBox.checked }));
  const onMessage = (msg) => { if (msg && msg.event === "done") drawStatus(); };
  const handlers = {
    "change:kernels": drawKernels,
    "change:kernel": drawKernels,
    "change:loops": drawLoops,
    "change:panes": drawPanes,
    "change:trace": drawTrace,
    "change:tuned": drawTrace,
    "change:default_trace": drawTrace,
    "change:marks": () => drawMarks(true),
    "change:loop": () => { loopSelect.value = model.get("loop") || ""; },
    "change:status": drawStatus,
    "change:optimized": drawStatus,
  };
  for (const [evt, fn] of Object.entries(handlers)) model.on(evt, fn);
  model.on("msg:custom", onMessage);
  drawKernels();
  drawLoops();
  drawPanes();
  drawStatus();
  return () => {
    for (const [evt, fn] of Object.entries(handlers)) model.off(evt, fn);
    model.off("msg:custom", onMessage);
  };
}
