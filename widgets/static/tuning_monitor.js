// tuning_monitor.js: the TuningMonitor widget (needs irlab_core.js in front of it).
// Synced traits read here: tasks, curves ({task: [[trial, GFLOPS]]}), network ([[trial, ms]]),
// accuracy ([{task, round, trial, rho, n}]), total_trials, max_trials, status, title.
// Labels are model strings: they reach the DOM as text nodes / textContent only.

const TM_COLORS = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2",
  "#db2777", "#4b5563"];
const TM_W = 560, TM_H = 210, TM_LEFT = 56, TM_BOTTOM = 28, TM_TOP = 32;

function tmText(attrs, text) {
  const node = s("text", attrs);
  node.textContent = text;
  return node;
}

function tmScale(lo, hi, a, b) {
  const span = (hi - lo) || 1;
  return (v) => a + (v - lo) * (b - a) / span;
}

/** An empty chart: axes, three y ticks, the x maximum, title and axis labels. */
function tmFrame(title, yLabel, xMax, yLo, yHi) {
  const svg = s("svg", { width: TM_W, height: TM_H, class: "irlab-tune-svg" });
  svg.append(tmText({ x: 4, y: 12, "font-weight": "bold" }, title),
    s("line", { x1: TM_LEFT, y1: TM_H - TM_BOTTOM, x2: TM_W - 8, y2: TM_H - TM_BOTTOM,
      stroke: "#9ca3af" }),
    s("line", { x1: TM_LEFT, y1: TM_TOP, x2: TM_LEFT, y2: TM_H - TM_BOTTOM, stroke: "#9ca3af" }),
    tmText({ x: (TM_LEFT + TM_W) / 2, y: TM_H - 4, "text-anchor": "middle" }, "trials"),
    tmText({ x: 4, y: TM_TOP - 8 }, yLabel),
    tmText({ x: TM_W - 8, y: TM_H - TM_BOTTOM + 12, "text-anchor": "end" }, String(xMax)));
  for (const frac of [0, 0.5, 1]) {
    const y = TM_H - TM_BOTTOM - frac * (TM_H - TM_BOTTOM - TM_TOP);
    svg.append(tmText({ x: TM_LEFT - 4, y: y + 3, "text-anchor": "end" },
      Number(yLo + frac * (yHi - yLo)).toPrecision(3)));
  }
  return svg;
}

/** Step lines of best-so-far values, one per curve, with a legend. */
function tmCurves(curves, title, yLabel, testid) {
  const entries = Object.entries(curves || {}).filter(([, pts]) => pts.length);
  const box = h("div", { class: "irlab-tune-chart", "data-testid": testid });
  if (!entries.length) return box;
  const all = entries.flatMap(([, pts]) => pts);
  const xMax = Math.max(1, ...all.map((p) => p[0]));
  const yHi = (Math.max(...all.map((p) => p[1])) * 1.05) || 1;
  const sx = tmScale(0, xMax, TM_LEFT, TM_W - 8), sy = tmScale(0, yHi, TM_H - TM_BOTTOM, TM_TOP);
  const svg = tmFrame(title, yLabel, xMax, 0, yHi);
  entries.forEach(([name, pts], i) => {
    const color = TM_COLORS[i % TM_COLORS.length];
    let d = "", last = null;
    for (const [x, y] of pts) {
      if (last !== null) d += ` L${sx(x).toFixed(1)},${sy(last).toFixed(1)}`;
      d += `${d ? " L" : "M"}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`;
      last = y;
    }
    const path = s("path", { d, fill: "none", stroke: color, "stroke-width": 1.5,
      "data-testid": "curve" });
    const tip = s("title", {});
    tip.textContent = `${name}: ${Number(last).toPrecision(4)} ${yLabel}`;
    path.append(tip);
    svg.append(path, tmText({ x: TM_W - 10, y: TM_TOP + 12 * i + 10, "text-anchor": "end",
      fill: color }, name.length > 40 ? "…" + name.slice(-39) : name));
  });
  box.append(svg);
  return box;
}

/** Spearman's rho per round as dots on [-1, 1]. */
function tmAccuracy(rounds) {
  const box = h("div", { class: "irlab-tune-chart", "data-testid": "accuracy-chart" });
  if (!rounds || !rounds.length) return box;
  const xMax = Math.max(1, ...rounds.map((a) => a.trial));
  const sx = tmScale(0, xMax, TM_LEFT, TM_W - 8), sy = tmScale(-1, 1, TM_H - TM_BOTTOM, TM_TOP);
  const svg = tmFrame("cost model: rank correlation, predicted vs measured (per round)",
    "Spearman rho", xMax, -1, 1);
  svg.append(s("line", { x1: TM_LEFT, y1: sy(0), x2: TM_W - 8, y2: sy(0), stroke: "#e5e7eb" }));
  const names = [...new Set(rounds.map((a) => a.task))];
  for (const a of rounds) {
    const dot = s("circle", { cx: sx(a.trial).toFixed(1), cy: sy(a.rho).toFixed(1), r: 3,
      fill: TM_COLORS[names.indexOf(a.task) % TM_COLORS.length], "data-testid": "rho-dot" });
    const tip = s("title", {});
    tip.textContent = `${a.task} round ${a.round + 1}: rho ${a.rho.toFixed(2)} (${a.n} measured)`;
    dot.append(tip);
    svg.append(dot);
  }
  box.append(svg);
  return box;
}

function renderTuningMonitor({ model, el }) {
  const title = h("span", { class: "irlab-title" });
  const status = h("span", { class: "irlab-status", "data-testid": "status" });
  const table = h("table", { class: "irlab-run-table", "data-testid": "task-table" });
  const charts = h("div", { class: "irlab-tune-charts" });
  const root = h("div", { class: "irlab irlab-runpanel irlab-tuning", "data-testid":
    "tuning-monitor" }, h("div", { class: "irlab-toolbar" }, title, status),
  h("div", { class: "irlab-run-body" }, table, charts));
  el.replaceChildren(root);
  const num = (v, digits) => (v === null || v === undefined ? "" : Number(v).toFixed(digits));

  function drawTable() {
    const rows = model.get("tasks") || [];
    table.replaceChildren(
      h("tr", {}, ...["#", "task", "weight", "trials", "failed", "best ms", "GFLOPS", ""]
        .map((t) => h("th", { text: t }))),
      ...rows.map((r) => h("tr", { "data-testid": "task-row" },
        h("td", { text: r.id }), h("td", { text: r.name }), h("td", { text: r.weight }),
        h("td", { text: r.trials }), h("td", { text: r.failed }),
        h("td", { text: num(r.best_ms, 4) }), h("td", { text: r.gflops ? num(r.gflops, 2) : "" }),
        h("td", { class: r.error ? "fail" : "", text: (r.error || "").slice(0, 80) }))));
  }

  function drawCharts() {
    const net = model.get("network") || [];
    charts.replaceChildren(
      tmCurves(model.get("curves"), "best GFLOPS so far, per task", "GFLOPS", "task-curves"),
      tmCurves(net.length ? { "network (weighted)": net } : {},
        "whole network: weighted best latency so far", "ms", "network-curve"),
      tmAccuracy(model.get("accuracy")));
  }

  function drawStatus() {
    title.textContent = model.get("title") || "Tuning";
    const max = model.get("max_trials");
    status.textContent = `${model.get("status") || ""} · ${model.get("total_trials")}` +
      (max ? ` / ${max}` : "") + " trials";
  }

  const handlers = {
    "change:tasks": drawTable,
    "change:curves": drawCharts,
    "change:network": drawCharts,
    "change:accuracy": drawCharts,
    "change:status": drawStatus,
    "change:total_trials": drawStatus,
    "change:title": drawStatus,
  };
  for (const [evt, fn] of Object.entries(handlers)) model.on(evt, fn);
  drawTable();
  drawCharts();
  drawStatus();
  return () => { for (const [evt, fn] of Object.entries(handlers)) model.off(evt, fn); };
}
