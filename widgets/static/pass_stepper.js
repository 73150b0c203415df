// pass_stepper.js: the PassStepper widget (needs irlab_core.js in front of it).
// Synced traits read here: steps, step, base, hide_unchanged, hide_types, pass_search, current
// (the resolved pair: texts, diff rows, union layout), selected, first_bad, pipeline,
// available_passes, status, view. Actions go to Python as messages ({action: ...}); the HTML
// export's model shim sets `_static` and answers step/base changes from embedded data.

function renderPassStepper({ model, el }) {
  const isStatic = !!model.get("_static");
  const save = (pairs) => {
    for (const [k, v] of Object.entries(pairs)) model.set(k, v);
    model.save_changes();
  };
  const expanded = new Set();  // unfolded runs of unchanged lines, for the shown pair
  let foldsOf = null;

  // -- toolbar -----------------------------------------------------------------------------------
  const passSearch = h("input", { type: "search", class: "irlab-search",
    "data-testid": "pass-search", placeholder: "filter passes",
    value: model.get("pass_search") || "" });
  const hideBox = h("input", { type: "checkbox", "data-testid": "hide-unchanged",
    checked: !!model.get("hide_unchanged") });
  // Python recomputes the diff without type annotations: not on a static page.
  const typesBox = h("input", { type: "checkbox", "data-testid": "hide-types",
    checked: !!model.get("hide_types") });
  const prevBtn = h("button", { "data-testid": "step-prev", text: "▲",
    title: "previous step (k, ↑)" });
  const nextBtn = h("button", { "data-testid": "step-next", text: "▼",
    title: "next step (j, ↓)" });
  const slider = h("input", { type: "range", class: "irlab-slider", "data-testid": "step-slider",
    min: 0, max: 0, step: 1, value: 0 });
  const stepLabel = h("span", { class: "irlab-step-label", "data-testid": "step-label" });
  const baseSelect = h("select", { "data-testid": "base-select", title: "diff against" });
  const numericsBtn = h("button", { "data-testid": "numerics-button", text: "Check numerics",
    title: "run the interpreter after every step on the same inputs" });
  const status = h("span", { class: "irlab-status", "data-testid": "status" });
  const views = [["side", "Side by side"], ["unified", "Unified"],
    ["graphs", "Graph before | after"], ["union", "Graph diff"]];
  const viewBtns = new Map(views.map(([v, label]) => [v, h("button", { class: "irlab-tab",
    "data-testid": `view-${v}`, text: label, on: { click: () => save({ view: v }) } })]));

  // -- panes -------------------------------------------------------------------------------------
  const passList = h("div", { class: "irlab-passlist", "data-testid": "pass-list", tabIndex: 0 });
  const inspector = h("div", { class: "irlab-inspector", "data-testid": "inspector" });
  const pipelineBox = h("div", { class: "irlab-pipeline-items" });
  const addSelect = h("select", { "data-testid": "pipeline-add-select" });
  const pipeline = h("details", { class: "irlab-pipeline", "data-testid": "pipeline-editor" },
    h("summary", { text: "Pipeline (edit and re-run)" }), pipelineBox,
    h("div", { class: "irlab-toolbar" }, addSelect,
      h("button", { "data-testid": "pipeline-add", text: "Add",
        on: { click: () => addSelect.value &&
          model.send({ action: "pipeline", op: "add", name: addSelect.value }) } }),
      h("button", { "data-testid": "rerun-button", text: "Re-run",
        on: { click: () => {
          status.textContent = "running the pipeline…";
          model.send({ action: "rerun" });
        } } })));
  const header = h("div", { class: "irlab-step-header", "data-testid": "step-header" });
  const diffBox = h("div", { class: "irlab-diffbox", "data-testid": "diff-view" });
  const panzoom = new PanZoom();
  const onSelect = (id) => save({ selected: id });
  // Above BIG nodes a pane draws the cheap way (irlab_core.js's BigDrawing): switching steps
  // then costs about the same on ResNet-50's 1,100-node graphs as on small ones.
  const BIG = 400;
  const paneA = new GraphCanvas({ panzoom, side: "a", onSelect, testid: "graph-before",
    bigAbove: BIG });
  const paneB = new GraphCanvas({ panzoom, side: "b", onSelect, testid: "graph-after",
    bigAbove: BIG });
  const paneU = new GraphCanvas({ onSelect, testid: "graph-union", bigAbove: BIG });
  const legend = h("div", { class: "irlab-legend" },
    h("span", { class: "irlab-badge state-added", text: "added" }),
    h("span", { class: "irlab-badge state-removed", text: "removed" }),
    h("span", { class: "irlab-badge state-changed", text: "changed" }),
    h("button", { "data-testid": "graph-fit", text: "Fit",
      on: { click: () => { paneA.fit(); paneB.fit(); paneU.fit(); } } }));
  const beforeTitle = h("div", { class: "irlab-pane-title", "data-testid": "graph-before-title" });
  const split = h("div", { class: "irlab-split" },
    h("div", { class: "irlab-pane" }, beforeTitle, paneA.el),
    h("div", { class: "irlab-pane" },
      h("div", { class: "irlab-pane-title", text: "after" }), paneB.el));
  const unionBox = h("div", { class: "irlab-pane" }, paneU.el);
  const graphBox = h("div", { class: "irlab-graphbox", "data-testid": "graph-diff" },
    legend, split, unionBox);

  const root = h("div", { class: "irlab irlab-stepper", "data-testid": "pass-stepper",
    tabIndex: 0 },
    h("div", { class: "irlab-toolbar" }, passSearch,
      h("label", { class: "irlab-check" }, hideBox, "hide unchanged"),
      isStatic ? null : h("label", { class: "irlab-check",
        title: "leave the /* ty=... */ annotations out of the programs and the diff" },
      typesBox, "hide types"),
      prevBtn, nextBtn, slider, stepLabel,
      h("label", { class: "irlab-check" }, "diff vs", baseSelect),
      isStatic ? null : numericsBtn, status),
    h("div", { class: "irlab-body" },
      h("div", { class: "irlab-left" }, passList, isStatic ? null : pipeline,
        h("div", { class: "irlab-section", text: "Inspector" }), inspector),
      h("div", { class: "irlab-main" }, header,
        h("div", { class: "irlab-tabs" }, [...viewBtns.values()]), diffBox, graphBox)));
  el.replaceChildren(root);

  // -- the step list -----------------------------------------------------------------------------
  let rows = new Map();

  function steps() { return model.get("steps") || []; }

  function visibleSteps() {
    const q = String(model.get("pass_search") || "").trim().toLowerCase();
    const hide = !!model.get("hide_unchanged");
    return steps().filter((r) => r.i === 0 ||
      ((!hide || r.changed) && (!q || r.name.toLowerCase().includes(q)))).map((r) => r.i);
  }

  function buildList() {
    rows = new Map();
    const hasErrors = steps().some((r) => r.error !== null && r.error !== undefined);
    const items = steps().map((r) => {
      const row = h("div", { class: "irlab-pass", "data-testid": "pass-item", "data-step": r.i,
        "data-depth": r.depth, "data-changed": r.changed ? "true" : "false",
        "data-name": r.name, title: `${r.name}: ${r.nodes} nodes, ${r.ops} ops` +
          (r.changed ? "" : " (no change)") },
      h("span", { class: "mark", text: r.i === model.get("first_bad") ? "⚠" : r.i === 0 ? "◆"
        : r.changed ? "●" : "○" }),
      h("span", { class: "name", style: { paddingLeft: `${r.depth * 14}px` }, text: r.name }),
      // errors only where a pass changed the program (unchanged ones repeat the last)
      hasErrors ? h("span", { class: "err", "data-testid": "pass-error",
        title: "max relative error",
        text: r.error === null || r.error === undefined || !r.changed ? ""
          : fmtErr(r.error) }) : null,
      h("span", { class: "time", text: r.i === 0 ? "" : fmtMs(r.ms) }));
      row.addEventListener("click", (e) => {
        if (e.altKey || e.shiftKey) save({ base: r.i === model.get("step") ? -1 : r.i });
        else save({ step: r.i });
      });
      rows.set(r.i, row);
      return row;
    });
    passList.replaceChildren(...items);
    // a static page offers the bases it holds diffs against; the notebook, every step
    const bases = isStatic ? new Set(model.get("bases") || []) : null;
    baseSelect.replaceChildren(h("option", { value: "-1", text: "input of this pass" }),
      ...steps().filter((r) => !bases || bases.has(r.i))
        .map((r) => h("option", { value: String(r.i), text: `${r.i}: ${r.name}` })));
    markList(true);
  }

  function markList(scroll) {
    const cur = model.get("step"), base = model.get("base"), bad = model.get("first_bad");
    const vis = new Set(visibleSteps());
    for (const [i, row] of rows) {
      row.classList.toggle("selected", i === cur);
      row.classList.toggle("base", i === base);
      row.classList.toggle("hidden", !vis.has(i));
      row.classList.toggle("bad", i === bad);
      row.toggleAttribute("data-first-bad", i === bad);
    }
    const order = [...vis];
    slider.max = String(Math.max(0, order.length - 1));
    const pos = order.indexOf(cur);
    slider.value = String(pos < 0 ? 0 : pos);
    const r = steps()[cur];
    stepLabel.textContent = r ? `step ${cur} / ${steps().length - 1}` : "";
    baseSelect.value = String(base === undefined ? -1 : base);
    const row = rows.get(cur);
    if (scroll && row) {
      // next frame: reading positions now would force a layout of the changed panes
      requestAnimationFrame(() => {
        const top = row.offsetTop - passList.offsetTop;
        if (top < passList.scrollTop || top > passList.scrollTop + passList.clientHeight - 20) {
          passList.scrollTop = top - passList.clientHeight / 3;
        }
      });
    }
  }

  function move(delta) {
    const order = visibleSteps();
    if (!order.length) return;
    const cur = model.get("step");
    let pos = order.indexOf(cur);
    if (pos < 0) {
      // the current step is filtered out: go to the nearest visible one in that direction
      const after = order.findIndex((i) => i > cur);
      if (delta > 0) pos = after < 0 ? order.length - 1 : after;
      else pos = after < 0 ? order.length - 1 : Math.max(0, after - 1);
    } else pos = clamp(pos + delta, 0, order.length - 1);
    save({ step: order[pos] });
  }

  // -- the pipeline editor -----------------------------------------------------------------------
  function buildPipeline() {
    const entries = model.get("pipeline") || [];
    const send = (op, i) => {
      status.textContent = "running the edited pipeline…";
      model.send({ action: "pipeline", op, index: i });
    };
    const button = (testid, text, title, click) => h("button", { "data-testid": testid, text,
      title, on: { click } });
    pipelineBox.replaceChildren(...entries.map((p) => h("div", {
      class: "irlab-pipeline-item" + (p.enabled ? "" : " disabled") + (p.group ? " in-group" : ""),
      "data-testid": "pipeline-item", "data-entry": p.i, "data-name": p.name,
      title: p.group ? `runs inside ${p.group} (opt level ${p.opt_level})` : "called directly" },
    h("input", { type: "checkbox", checked: !!p.enabled, "data-testid": "pipeline-toggle",
      title: p.enabled ? "disable" : "enable", on: { change: () => send("toggle", p.i) } }),
    h("span", { class: "name", text: p.name }),
    p.custom ? h("span", { class: "irlab-badge", text: "yours" }) : null,
    button("pipeline-up", "↑", "move up", () => send("up", p.i)),
    button("pipeline-down", "↓", "move down", () => send("down", p.i)),
    button("pipeline-remove", "✕", "remove", () => send("remove", p.i)))));
    addSelect.replaceChildren(...(model.get("available_passes") || [])
      .map((n) => h("option", { value: n, text: n })));
  }

  // -- the selected pair -------------------------------------------------------------------------
  function current() { return model.get("current") || {}; }

  function drawHeader() {
    const cur = current();
    header.replaceChildren();
    if (cur.missing) {
      header.append(h("span", { class: "irlab-muted",
        text: `This pair (${cur.key}) is not in the export.` }));
      return;
    }
    const st = cur.stats || {};
    const nodes = st.nodes || {};
    header.append(h("strong", { "data-testid": "step-title",
      text: `${cur.step}: ${cur.title || ""}` }),
      h("span", { class: "irlab-muted", text: ` ${fmtMs(cur.ms)} · vs ${cur.base_label || ""}` }),
      h("span", { class: "irlab-stat", "data-testid": "step-stats",
        text: ` · lines −${st.removed || 0} +${st.added || 0} ~${st.replaced || 0}` +
          ` · nodes +${nodes.added || 0} −${nodes.removed || 0} ~${nodes.changed || 0}` }));
    const row = steps()[cur.step];
    if (row && row.error !== null && row.error !== undefined) {
      const bad = cur.step === model.get("first_bad") ? " bad" : "";
      header.append(h("span", { class: "irlab-stat" + bad,
        text: ` · max abs error ${fmtErr(row.abs_error)}, rel ${fmtErr(row.error)}` }));
    }
  }

  function drawView() {
    const view = model.get("view") || "side";
    for (const [v, b] of viewBtns) b.classList.toggle("active", v === view);
    const cur = current();
    const isGraph = view === "graphs" || view === "union";
    diffBox.style.display = isGraph ? "none" : "";
    graphBox.style.display = isGraph ? "" : "none";
    split.style.display = view === "graphs" ? "" : "none";
    unionBox.style.display = view === "union" ? "" : "none";
    if (cur.missing) { diffBox.replaceChildren(); return; }
    if (!isGraph) {
      if (foldsOf !== cur.key) { expanded.clear(); foldsOf = cur.key; }
      drawDiff(cur, view === "unified" ? "unified" : "side");
      drawSelection();
    } else {
      beforeTitle.textContent = cur.base_label || "before";
      // open on what the pass changed (Fit shows everything)
      const changed = cur.graph ? cur.graph.nodes.filter((n) => n.state).map((n) => n.id) : [];
      if (view === "graphs") {
        paneA.setLayout(cur.graph, changed);
        paneB.setLayout(cur.graph, changed);
      } else paneU.setLayout(cur.graph, changed);
      drawSelection();
    }
  }

  // Drawn diffs, kept for going back and forth between steps: a 1,000-line program is
  // ~40 ms of building rows (a long one builds the rows in view first: renderDiff). An entry
  // is only used for the very same two texts.
  const diffCache = new Map();

  function drawDiff(cur, mode) {
    const key = `${cur.key}|${mode}|${[...expanded].sort((x, y) => x - y).join(",")}`;
    let hit = diffCache.get(key);
    if (hit && (hit.a !== cur.text_a || hit.b !== cur.text_b ||
      hit.n !== (cur.rows || []).length)) hit = null;
    if (!hit) {
      const holder = h("div");
      renderDiff(holder, cur, mode, expanded, drawView, diffBox);
      hit = { a: cur.text_a, b: cur.text_b, n: (cur.rows || []).length,
        nodes: [...holder.childNodes] };
    }
    diffCache.delete(key);
    diffCache.set(key, hit);
    while (diffCache.size > 8) diffCache.delete(diffCache.keys().next().value);
    diffBox.setAttribute("data-mode", mode);
    diffBox.replaceChildren(...hit.nodes);
    for (const table of diffBox.querySelectorAll(".irlab-diff")) {
      if (table.resumeFill) table.resumeFill();
    }
  }

  function drawSelection() {
    const id = model.get("selected") || "";
    const cur = current();
    for (const pane of [paneA, paneB, paneU]) if (pane.layout) pane.mark({ selected: id });
    const node = cur.graph && cur.graph.nodes.find((n) => n.id === id);
    renderInspector(inspector, cur.graph, id, {
      onSelect: (other) => save({ selected: other }),
      onStep: (i) => save({ step: i, base: -1 }),
      irText: node && node.state === "removed" ? cur.text_a : cur.text_b,
    });
  }

  function drawStatus() {
    const parts = [model.get("status") || ""];
    const g = current().graph;
    if (g && g.warning) parts.push(`simple layout: ${g.warning}`);
    status.textContent = parts.filter(Boolean).join(" · ");
  }

  function drawCurrent() { drawHeader(); drawView(); drawStatus(); }

  // -- events ------------------------------------------------------------------------------------
  passSearch.addEventListener("input", () => {
    save({ pass_search: passSearch.value });
    markList(false);
  });
  hideBox.addEventListener("change", () => {
    save({ hide_unchanged: hideBox.checked });
    markList(false);
  });
  typesBox.addEventListener("change", () => save({ hide_types: typesBox.checked }));
  prevBtn.addEventListener("click", () => move(-1));
  nextBtn.addEventListener("click", () => move(1));
  slider.addEventListener("input", () => {
    const order = visibleSteps();
    const i = order[clamp(parseInt(slider.value, 10) || 0, 0, order.length - 1)];
    if (i !== undefined && i !== model.get("step")) save({ step: i });
  });
  baseSelect.addEventListener("change", () => save({ base: parseInt(baseSelect.value, 10) }));
  numericsBtn.addEventListener("click", () => {
    status.textContent = "running the interpreter after every step…";
    model.send({ action: "numerics" });
  });
  root.addEventListener("keydown", (e) => {
    if (e.target.closest("input, select, textarea")) return;
    if (["ArrowDown", "ArrowRight", "j"].includes(e.key)) { e.preventDefault(); move(1); }
    else if (["ArrowUp", "ArrowLeft", "k"].includes(e.key)) { e.preventDefault(); move(-1); }
    else if (e.key === "Home") { e.preventDefault(); save({ step: 0 }); }
    else if (e.key === "End") {
      e.preventDefault();
      const order = visibleSteps();
      save({ step: order[order.length - 1] });
    }
  });

  const handlers = {
    "change:steps": () => { buildList(); drawHeader(); },
    "change:step": () => markList(true),
    "change:base": () => markList(false),
    "change:first_bad": () => { buildList(); drawHeader(); },
    "change:hide_unchanged": () => {
      hideBox.checked = !!model.get("hide_unchanged");
      markList(false);
    },
    "change:hide_types": () => { typesBox.checked = !!model.get("hide_types"); },
    "change:pass_search": () => {
      const q = model.get("pass_search") || "";
      if (passSearch.value !== q) passSearch.value = q;
      markList(false);
    },
    "change:current": drawCurrent,
    "change:view": drawView,
    "change:selected": drawSelection,
    "change:status": drawStatus,
    "change:pipeline": buildPipeline,
    "change:available_passes": buildPipeline,
  };
  const onMessage = (msg) => { if (msg && msg.event === "done") drawStatus(); };
  model.on("msg:custom", onMessage);
  for (const [evt, fn] of Object.entries(handlers)) model.on(evt, fn);
  buildList();
  buildPipeline();
  drawCurrent();
  return () => {
    for (const [evt, fn] of Object.entries(handlers)) model.off(evt, fn);
    model.off("msg:custom", onMessage);
    for (const pane of [paneA, paneB, paneU]) if (pane.resize) pane.resize.disconnect();
  };
}
