// graph_view.js: the GraphView widget (needs irlab_core.js in front of it).
// Synced traits read here: graph (laid-out payload), ir, title, status, selected, search,
// collapsed, focus, hops, step, step_names and changed_steps (a pass trace's steps: the step
// control); `_static` is set by the HTML export's model shim (no kernel:
// collapsing, which needs a new layout, is hidden there).

function renderGraphView({ model, el }) {
  const isStatic = !!model.get("_static");
  const save = (pairs) => {
    for (const [k, v] of Object.entries(pairs)) model.set(k, v);
    model.save_changes();
  };
  let matches = [], matchPos = -1, searchTimer = null;
  // Search hits inside collapsed groups: id -> the collapsed groups hiding it; a jump to one
  // expands them (the kernel lays the graph out again) and selects it once it is drawn.
  let hiddenHits = new Map(), pending = "";

  const searchBox = h("input", { type: "search", class: "irlab-search", "data-testid": "search-box",
    placeholder: "search op / name / id", value: model.get("search") || "" });
  const count = h("span", { class: "irlab-count", "data-testid": "search-count" });
  const prevBtn = h("button", { "data-testid": "search-prev", text: "‹",
    title: "previous match" });
  const nextBtn = h("button", { "data-testid": "search-next", text: "›",
    title: "next match (Enter)" });
  const fitBtn = h("button", { "data-testid": "fit-button", text: "Fit",
    title: "fit to view (f)" });
  const collapseBtn = h("button", { "data-testid": "collapse-all", text: "Collapse groups",
    title: "draw each layer and fused function as one node" });
  const expandBtn = h("button", { "data-testid": "expand-all", text: "Expand all" });
  const hoodBox = h("input", { type: "checkbox", "data-testid": "neighbourhood-toggle" });
  const weightsBox = h("input", { type: "checkbox", "data-testid": "weights-toggle",
    checked: !!model.get("weights") });
  const hopsBox = h("input", { type: "number", class: "irlab-hops", min: 1, max: 50,
    value: model.get("hops") || 2, "data-testid": "hops-input", title: "hops" });
  const title = h("span", { class: "irlab-title", "data-testid": "graph-title" });
  // The step control: which step of the pass trace the graph shows (the explorer's graph tab).
  const stepBack = h("button", { "data-testid": "graph-step-prev", text: "◀",
    title: "back to the previous pass that changed the program" });
  const stepOn = h("button", { "data-testid": "graph-step-next", text: "▶",
    title: "on to the next pass that changed the program (the slider reaches every step)" });
  const stepSlider = h("input", { type: "range", class: "irlab-slider", min: 0, value: 0,
    "data-testid": "graph-step-slider", title: "step of the pass pipeline" });
  const stepLabel = h("span", { class: "irlab-step-label", "data-testid": "graph-step-label" });
  const stepBar = h("span", { class: "irlab-graph-steps", "data-testid": "graph-step-control" },
    stepBack, stepSlider, stepOn, stepLabel);
  const status = h("span", { class: "irlab-status", "data-testid": "status" });
  const inspector = h("div", { class: "irlab-inspector", "data-testid": "inspector" });
  const irPane = h("div", { class: "irlab-ir", "data-testid": "ir-pane" });
  const canvas = new GraphCanvas({
    bigAbove: IRLAB_CANVAS_ABOVE,  // thousands of nodes: culled near, painted on a canvas far
    onSelect: (id, dbl) => {
      const node = canvas.data.get(id);
      if (dbl && node && node.kind === "cluster" && !isStatic) {
        expand(id);
      } else select(id);
    },
    onCluster: (cid) => {
      if (!isStatic) save({ collapsed: [...(model.get("collapsed") || []), cid] });
    },
  });

  const toolbar = h("div", { class: "irlab-toolbar" }, isStatic ? null : stepBar, title,
    searchBox, count, prevBtn, nextBtn,
    fitBtn, isStatic ? null : collapseBtn, isStatic ? null : expandBtn,
    h("label", { class: "irlab-check", title: "show only the nodes near the selected one" },
      hoodBox, "neighbourhood"), hopsBox,
    isStatic ? null : h("label", { class: "irlab-check",
      title: "draw constants and weights as nodes (folded into their users otherwise)" },
    weightsBox, "weights"), status);
  const root = h("div", { class: "irlab irlab-graphview", "data-testid": "graph-view",
    tabIndex: 0 },
    toolbar,
    h("div", { class: "irlab-body" }, canvas.el,
      h("div", { class: "irlab-side" }, h("div", { class: "irlab-section", text: "Inspector" }),
        inspector, h("div", { class: "irlab-section", text: "IR" }), irPane)));
  el.replaceChildren(root);

  function layout() { return model.get("graph") || null; }

  function expand(id) {
    save({ collapsed: (model.get("collapsed") || []).filter((c) => c !== id) });
  }

  function select(id) {
    const pairs = { selected: id || "" };
    if (model.get("focus") && id) pairs.focus = id;  // the neighbourhood follows the selection
    save(pairs);
    drawSelection(true);
  }

  function drawSelection(scroll) {
    const lay = layout();
    const id = model.get("selected") || "";
    canvas.mark({ selected: id, matches: new Set(matches), current: matches[matchPos] });
    renderInspector(inspector, lay, id, {
      onSelect: (other) => { select(other); canvas.centerOn(other); },
      onStep: (i) => save({ step: i }),
      irText: model.get("ir") || "",
      extra: (node) => node.kind === "cluster" && !isStatic ? h("button", {
        "data-testid": "expand-cluster", text: "Expand this function",
        on: { click: () => expand(node.id) },
      }) : null,
    });
    const node = canvas.data && canvas.data.get(id);
    markIRLine(irPane, node ? node.line : null, scroll);
  }

  function findHidden(lay, query) {
    const q = String(query || "").trim().toLowerCase();
    const found = new Map();
    if (!q || !lay) return found;
    for (const n of lay.nodes) {
      for (const [id, title, name, op, hiddenIn] of n.hidden || []) {
        if (id.toLowerCase() === q || [title, name, op].some((f) => f.toLowerCase().includes(q))) {
          found.set(id, { group: n.id, hiddenIn });
        }
      }
    }
    return found;
  }

  function drawSearch(jump) {
    const lay = layout();
    hiddenHits = findHidden(lay, searchBox.value);
    matches = [...matchNodes(lay, searchBox.value), ...hiddenHits.keys()];
    if (pending && matches.includes(pending)) matchPos = matches.indexOf(pending);
    if (matchPos >= matches.length) matchPos = matches.length ? 0 : -1;
    if (jump && matches.length) {
      const id = matches[matchPos];
      const hidden = hiddenHits.get(id);
      if (!hidden) {
        canvas.centerOn(id);
        select(id);
      } else if (isStatic) {  // no kernel to lay the group out expanded: its node
        canvas.centerOn(hidden.group);
        select(hidden.group);
      } else {
        pending = id;
        const shut = (model.get("collapsed") || []).filter((c) => !hidden.hiddenIn.includes(c));
        save({ collapsed: shut });
      }
    }
    count.textContent = searchBox.value.trim()
      ? (matches.length ? `${matchPos + 1} / ${matches.length}` : "no match") : "";
    const marked = new Set(matches);
    for (const hit of hiddenHits.values()) marked.add(hit.group);  // the group holding a hit
    canvas.mark({ selected: model.get("selected") || "", matches: marked,
      current: matches[matchPos] });
  }

  function selectPending() {
    if (!pending || !canvas.has(pending)) return;
    const id = pending;
    pending = "";
    canvas.centerOn(id);
    select(id);
  }

  function step(delta) {
    if (!matches.length) { drawSearch(false); if (!matches.length) return; }
    matchPos = (matchPos + delta + matches.length) % matches.length;
    drawSearch(true);
  }

  function drawFocus() {
    const focus = model.get("focus") || "";
    hoodBox.checked = !!focus;
    const lay = layout();
    if (focus && lay && canvas.has(focus)) {
      canvas.showOnly(neighbourhood(lay, focus, Number(model.get("hops")) || 2));
    } else if (canvas.visible) canvas.showOnly(null);
  }

  function drawStatus() {
    const lay = layout();
    const parts = [model.get("status") || ""];
    if (lay && lay.warning) parts.push(`simple layout: ${lay.warning}`);
    else if (lay && lay.engine === "layered") parts.push("layered layout");
    if (lay) parts.push(`${lay.nodes.length} nodes`);
    status.textContent = parts.filter(Boolean).join(" · ");
    title.textContent = model.get("title") || "";
    const hasClusters = lay && ((lay.clusters || []).length ||
      lay.nodes.some((n) => n.kind === "cluster"));
    collapseBtn.disabled = !hasClusters;
    expandBtn.disabled = !(model.get("collapsed") || []).length;
    // A pass trace's step (the explorer's graph tab) is drawn from the trace's own graphs.
    weightsBox.disabled = (model.get("step") ?? -1) >= 0;
    if (weightsBox.parentElement) {  // no checkbox on a static page
      weightsBox.parentElement.title = weightsBox.disabled
        ? "the pass trace's graphs: PassStepper(..., fold_weights=False) draws weights as nodes"
        : "draw constants and weights as nodes (folded into their users otherwise)";
    }
  }

  function drawSteps() {
    const names = model.get("step_names") || [];
    const at = model.get("step") ?? -1;
    stepBar.style.display = names.length > 1 ? "" : "none";
    stepSlider.max = String(Math.max(0, names.length - 1));
    stepSlider.value = String(Math.max(0, at));
    stepBack.disabled = at <= 0;
    stepOn.disabled = at >= names.length - 1;
    stepLabel.textContent = names.length ? `step ${Math.max(0, at)} / ${names.length - 1}` : "";
  }

  /** The next (dir 1) or previous (-1) step that changed the program; the ends otherwise. */
  function changedStep(dir) {
    const at = model.get("step") ?? 0;
    const last = Math.max(0, (model.get("step_names") || []).length - 1);
    const changed = model.get("changed_steps") || [];
    if (dir > 0) return changed.find((i) => i > at) ?? last;
    return [...changed].reverse().find((i) => i < at) ?? 0;
  }

  function goStep(i) {
    const names = model.get("step_names") || [];
    const to = clamp(i, 0, Math.max(0, names.length - 1));
    if (to !== (model.get("step") ?? -1)) save({ step: to });
  }

  function drawGraph() {
    canvas.setLayout(layout());
    drawFocus();
    drawSearch(false);
    drawSelection(false);
    drawStatus();
    selectPending();
  }

  function drawIR() {
    renderIR(irPane, model.get("ir") || "", (line) => {
      const lay = layout();
      if (!lay) return;
      const onLine = lay.nodes.filter((n) => n.line === line);
      const pick = onLine.find((n) => n.kind === "call") || onLine[0];
      if (pick) { select(pick.id); canvas.centerOn(pick.id); }
    });
    drawSelection(false);
  }

  searchBox.addEventListener("input", () => {
    matchPos = 0;
    drawSearch(false);
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => save({ search: searchBox.value }), 150);
  });
  searchBox.addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); step(e.shiftKey ? -1 : 1); }
    if (e.key === "Escape") { searchBox.value = ""; drawSearch(false); save({ search: "" }); }
  });
  prevBtn.addEventListener("click", () => step(-1));
  nextBtn.addEventListener("click", () => step(1));
  fitBtn.addEventListener("click", () => canvas.fit());
  stepBack.addEventListener("click", () => goStep(changedStep(-1)));
  stepOn.addEventListener("click", () => goStep(changedStep(1)));
  stepSlider.addEventListener("change", () => goStep(parseInt(stepSlider.value, 10) || 0));
  collapseBtn.addEventListener("click", () => {
    const lay = layout();
    const top = (lay && lay.top_clusters) || [];
    save({ collapsed: [...new Set([...(model.get("collapsed") || []), ...top])] });
  });
  expandBtn.addEventListener("click", () => save({ collapsed: [] }));
  hoodBox.addEventListener("change", () => {
    const sel = model.get("selected") || "";
    if (hoodBox.checked && !sel) {
      hoodBox.checked = false;
      status.textContent = "select a node first";
      return;
    }
    save({ focus: hoodBox.checked ? sel : "" });
    drawFocus();
  });
  weightsBox.addEventListener("change", () => save({ weights: weightsBox.checked }));
  hopsBox.addEventListener("change", () => {
    save({ hops: clamp(parseInt(hopsBox.value, 10) || 2, 1, 50) });
    drawFocus();
  });
  root.addEventListener("keydown", (e) => {
    if (e.target.closest("input, select, textarea")) return;
    if (e.key === "/") { e.preventDefault(); searchBox.focus(); }
    else if (e.key === "f") canvas.fit();
    else if (e.key === "Escape") select("");
  });

  const handlers = {
    "change:graph": drawGraph,
    "change:ir": drawIR,
    "change:selected": () => drawSelection(true),
    "change:focus": drawFocus,
    "change:hops": () => { hopsBox.value = model.get("hops"); drawFocus(); },
    "change:status": drawStatus,
    "change:title": drawStatus,
    "change:step": () => { drawStatus(); drawSteps(); },
    "change:step_names": drawSteps,
    "change:collapsed": drawStatus,
    "change:weights": () => { weightsBox.checked = !!model.get("weights"); },
    "change:search": () => {
      if (searchBox.value !== (model.get("search") || "")) {
        searchBox.value = model.get("search") || "";
        drawSearch(false);
      }
    },
  };
  for (const [evt, fn] of Object.entries(handlers)) model.on(evt, fn);
  drawGraph();
  drawIR();
  drawSteps();
  return () => {
    for (const [evt, fn] of Object.entries(handlers)) model.off(evt, fn);
    if (canvas.resize) canvas.resize.disconnect();
  };
}
