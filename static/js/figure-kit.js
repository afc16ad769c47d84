// The figures' drawing kit, shared by ./figures.js, ./time-machine.js and ./beam-figure.js: the page's
// colours, a small element builder, a chart's canvas in its figure's slot, a line chart with the page's
// defaults, and a table. `Chart` is Chart.js (./charts.js loads it), set by useChart() before the first
// chart is drawn; the modules that import it see it once set (an ES module's export is a live binding).

import { formatNumber } from "./format.js";

/** @type {any} */
export let Chart = null;
/** Chart.js, loaded (./charts.js): every chart drawn afterwards uses it. */
export function useChart(library) {
  Chart = library;
}

export const COLORS = {
  violet: "#7a3fb0",
  orange: "#c0661a",
  teal: "#1f7f74",
  ink: "#1d2024",
  muted: "#5b6470",
  blue: "#1f5aa6",
};
export const SERIES = [COLORS.violet, COLORS.orange, COLORS.teal, COLORS.blue, "#a23b5b", "#6b7a1f"];

export const int = (v) => formatNumber(v, "int");
export const fixed3 = (v) => formatNumber(v, "fixed3");

// ---- small DOM helpers ---------------------------------------------------------------------------

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "html")
      el.innerHTML = v; // only for HTML the server rendered from our own Markdown
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c);
  return el;
}

// The canvas for one chart, in the figure's slot of that name (the server placed the slots).
export function slot(figure, key, label, height = 240) {
  const box = figure.querySelector(`.chart-slot[data-chart="${key}"]`);
  if (!box) return null;
  const canvas = h("canvas", { role: "img", "aria-label": label });
  box.replaceChildren(canvas);
  box.style.height = `${height}px`;
  return canvas;
}

/** @param {HTMLCanvasElement} canvas
 *  @param {{labels?: any[], datasets: object[], x: string, y: string, y2?: string, legend?: boolean,
 *    logX?: boolean}} chart */
export function lineChart(canvas, { labels, datasets, x, y, y2, legend = true, logX = false }) {
  const scales = {
    x: {
      type: logX ? "logarithmic" : "linear",
      title: { display: !!x, text: x },
      ticks: { maxTicksLimit: 8 },
      // powers of 4 on a log axis: 1, 4, 16, … 1 024 (Chart.js's own choice crowds at the right end)
      afterBuildTicks: logX
        ? (axis) => {
            axis.ticks = [1, 4, 16, 64, 256, 1024].map((value) => ({ value }));
          }
        : undefined,
    },
    y: { title: { display: !!y, text: y } },
  };
  if (y2) scales.y2 = { position: "right", title: { display: true, text: y2 }, grid: { drawOnChartArea: false } };
  return new Chart(canvas, {
    type: "line",
    data: {
      labels,
      datasets: datasets.map((d, i) => ({
        borderColor: SERIES[i % SERIES.length],
        backgroundColor: SERIES[i % SERIES.length],
        pointRadius: 0,
        borderWidth: 2,
        ...d,
      })),
    },
    options: {
      parsing: labels ? undefined : false,
      scales,
      interaction: { mode: "nearest", intersect: false },
      plugins: { legend: { display: legend, labels: { boxWidth: 14 } } },
    },
  });
}

export const xy = (xs, ys) => xs.map((x, i) => ({ x, y: ys[i] }));

export function table(head, rows, attrs = {}) {
  return h(
    "table",
    { class: "figure-table", ...attrs },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        head.map((c) => h("th", { scope: "col" }, c)),
      ),
    ),
    h(
      "tbody",
      {},
      rows.map((r) =>
        r instanceof HTMLElement
          ? r
          : h(
              "tr",
              {},
              r.map((c) => h("td", {}, c)),
            ),
      ),
    ),
  );
}
