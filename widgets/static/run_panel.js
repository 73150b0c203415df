// run_panel.js: the RunPanel widget (needs irlab_core.js in front of it).
// Synced traits read here: results, node_times ({node: seconds}), kernel_of, compiler_of
// ({node: external compiler}, BYOC nodes only), compiler_colors, seed, tol, status.
// Labels are model strings: they reach the DOM as text nodes / textContent only.

function renderRunPanel({ model, el }) {
  const seedBox = h("input", { type: "number", class: "irlab-hops", "data-testid": "seed-input",
    value: model.get("seed") || 0, title: "random seed" });
  const runBtn = h("button", { "data-testid": "run-button", text: "Run",
    title: "run the module and the interpreter again" });
  const randomBtn = h("button", { "data-testid": "random-button", text: "Random inputs",
    title: "forget the given arrays: random inputs from the seed" });
  const status = h("span", { class: "irlab-status", "data-testid": "status" });
  const summary = h("div", { class: "irlab-run-summary", "data-testid": "run-summary" });
  const table = h("table", { class: "irlab-run-table", "data-testid": "run-outputs" });
  const chart = h("div", { class: "irlab-run-chart", "data-testid": "node-chart" });
  const root = h("div", { class: "irlab irlab-runpanel", "data-testid": "run-panel" },
    h("div", { class: "irlab-toolbar" }, h("span", { class: "irlab-title", text: "Run" }),
      h("span", { class: "irlab-muted", text: "seed" }), seedBox, runBtn, randomBtn, status),
    h("div", { class: "irlab-run-body" }, summary, table,
      h("div", { class: "irlab-section", text: "time per kernel node (profile)" }), chart));
  el.replaceChildren(root);

  const num = (v) => (v === null || v === undefined ? "" : fmtErr(v));

  function drawResults() {
    const r = model.get("results") || {};
    if (!r.outputs) { summary.textContent = "not run yet"; table.replaceChildren(); return; }
    const ins = (r.inputs || []).map((i) => `${i.name} ${JSON.stringify(i.shape)} ${i.dtype}`);
    // (h drops a null child; replaceChildren would show it as the text "null")
    summary.replaceChildren(...[
      h("div", { text: `inputs (${r.source || ""}): ${ins.join(", ")}` }),
      h("div", { "data-testid": "latency",
        text: `latency ${Number(r.latency_ms || 0).toFixed(3)} ms` +
          (r.latency_std_ms ? ` ± ${Number(r.latency_std_ms).toFixed(3)}` : "") }),
      r.problem ? h("div", { class: "fail", text: r.problem }) : null].filter(Boolean));
    table.replaceChildren(
      h("tr", {}, ...["output", "shape", "dtype", "max abs err", "max rel err",
        `@ ${r.tol}`].map((t) => h("th", { text: t }))),
      ...(r.outputs || []).map((o) => h("tr", { "data-testid": "output-row" },
        h("td", { text: o.index }), h("td", { text: JSON.stringify(o.shape) }),
        h("td", { text: o.dtype }), h("td", { text: num(o.max_abs) }),
        h("td", { text: num(o.max_rel) }),
        h("td", { class: o.ok === null ? "" : (o.ok ? "pass" : "fail"),
          text: o.ok === null ? "-" : (o.ok ? "pass" : "FAIL") }))));
  }

  // bar colours of external compilers' kernels (the graph view's region borders)
  const compilerBar = (c) => (model.get("compiler_colors") || {})[c] || "#16a34a";

  function drawSplit(times, compilerOf) {
    if (!Object.keys(compilerOf).length) return null;
    const per = {};
    for (const [name, secs] of times) {
      const c = compilerOf[name] || "irlab";
      per[c] = (per[c] || 0) + secs;
    }
    return h("div", { class: "irlab-muted", "data-testid": "compiler-split",
      text: "per compiler: " + Object.entries(per).sort((a, b) => b[1] - a[1])
        .map(([c, v]) => `${c} ${(v * 1e3).toFixed(3)} ms`).join(", ") });
  }

  function drawChart() {
    const times = Object.entries(model.get("node_times") || {}).sort((a, b) => b[1] - a[1]);
    const kernelOf = model.get("kernel_of") || {};
    const compilerOf = model.get("compiler_of") || {};
    chart.replaceChildren();
    if (!times.length) return;
    const split = drawSplit(times, compilerOf);
    if (split) chart.append(split);
    const row = 16, labelW = 300, width = Math.max(480, chart.clientWidth || 640);
    const top = times[0][1] || 1;
    const svg = s("svg", { width, height: times.length * row + 4, class: "irlab-run-svg" });
    times.forEach(([name, secs], i) => {
      const y = i * row;
      const w = Math.max(1, (width - labelW - 80) * secs / top);
      const compiler = compilerOf[name] || "";
      const tagged = compiler ? `[${compiler}] ${name}` : name;
      const label = s("text", { x: labelW - 4, y: y + 11, "text-anchor": "end" });
      label.textContent = tagged.length > 48 ? "…" + tagged.slice(-47) : tagged;
      const attrs = { class: "bar", x: labelW, y: y + 2, width: w.toFixed(1),
        height: row - 4, "data-testid": "node-bar" };
      if (compiler) {
        attrs.style = `fill: ${compilerBar(compiler)}`;
        attrs["data-compiler"] = compiler;
      }
      const bar = s("rect", attrs);
      const tip = s("title", {});
      tip.textContent = `${tagged} (${kernelOf[name] || name}): ${(secs * 1e3).toFixed(3)} ms`;
      bar.append(tip);
      const value = s("text", { x: (labelW + w + 4).toFixed(1), y: y + 11 });
      value.textContent = `${(secs * 1e3).toFixed(3)} ms`;
      svg.append(label, bar, value);
    });
    chart.append(svg);
  }

  function drawStatus() { status.textContent = model.get("status") || ""; }

  const send = (action) => {
    status.textContent = "running…";
    model.send({ action, seed: parseInt(seedBox.value, 10) || 0 });
  };
  runBtn.addEventListener("click", () => send("run"));
  randomBtn.addEventListener("click", () => send("random"));
  const onMessage = (msg) => { if (msg && msg.event === "done") drawStatus(); };
  const handlers = {
    "change:results": drawResults,
    "change:node_times": drawChart,
    "change:compiler_of": drawChart,
    "change:status": drawStatus,
    "change:seed": () => { seedBox.value = model.get("seed"); },
  };
  for (const [evt, fn] of Object.entries(handlers)) model.on(evt, fn);
  model.on("msg:custom", onMessage);
  drawResults();
  drawChart();
  drawStatus();
  return () => {
    for (const [evt, fn] of Object.entries(handlers)) model.off(evt, fn);
    model.off("msg:custom", onMessage);
  };
}
