// The article's charts, drawn from the data the server computes (/api/figures/NAME, /api/beam; in the
// static build the folder's copies, and the beam table computed in the browser: ./api.js decides).
//
// The server renders every <figure data-figure="NAME"> with its data as tables, its caption and an
// empty `.chart-slot` per chart (templates/figures/), so the page reads without scripts. Here
// FIGURES[NAME](figure, data) draws a chart into each slot, keyed by the slot's data-chart; a figure
// whose tables are the whole story (the rotation check, the parameter count, the head gallery) has
// no slot. Charts use Chart.js (the UMD build, loaded by ./charts.js before the first chart is drawn);
// the positional-encoding heatmap is a canvas drawn by heatmap() below. Every value
// drawn is real: nothing here computes a number the server did not send, except formatting.

import { fetchJson } from "./api.js";
import { drawBeam } from "./beam-figure.js";
import { chartLibrary } from "./charts.js";
import { COLORS, Chart, SERIES, h, int, lineChart, slot, useChart, xy } from "./figure-kit.js";
import { formatNumber } from "./format.js";
import { timeMachine } from "./time-machine.js";
import { shownTrace } from "./store.js";

document.documentElement.classList.add("js"); // chart slots keep room for their charts (article.css)

// ---- the positional-encoding heatmap (Chart.js has none) -----------------------------------------

function heatmap(canvas, values, { xLabel, yLabel }) {
  const rows = values.length,
    cols = values[0].length;
  const left = 34,
    top = 8,
    bottom = 34,
    right = 8;
  const draw = () => {
    const width = canvas.parentElement.clientWidth,
      height = canvas.parentElement.clientHeight;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = width * dpr;
    canvas.height = height * dpr;
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
    const ctx = canvas.getContext("2d");
    ctx.scale(dpr, dpr);
    ctx.clearRect(0, 0, width, height);
    const cw = (width - left - right) / cols,
      ch = (height - top - bottom) / rows;
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const v = values[r][c]; // −1 … 1: blue … white … orange
        const t = Math.abs(v),
          [R, G, B] = v < 0 ? [31, 90, 166] : [192, 102, 26];
        ctx.fillStyle = `rgb(${255 + (R - 255) * t},${255 + (G - 255) * t},${255 + (B - 255) * t})`;
        ctx.fillRect(left + c * cw, top + r * ch, Math.ceil(cw), Math.ceil(ch));
      }
    }
    ctx.fillStyle = COLORS.ink;
    ctx.font = "11px system-ui, sans-serif";
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (let r = 0; r < rows; r += 10) ctx.fillText(int(r), left - 4, top + (r + 0.5) * ch);
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (let c = 0; c < cols; c += 8) ctx.fillText(int(c), left + (c + 0.5) * cw, height - bottom + 3);
    ctx.fillText(xLabel, left + (width - left - right) / 2, height - bottom + 17);
    ctx.save();
    ctx.translate(10, top + (height - top - bottom) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = "middle";
    ctx.fillText(yLabel, 0, 0);
    ctx.restore();
  };
  draw();
  new ResizeObserver(draw).observe(canvas.parentElement);
}

// ---- the figures, one per name -------------------------------------------------------------------

// Seeds as points, means as bars, one row per variant (horizontal bars keep long labels legible).
function seedBars(canvas, c) {
  const seeds = Math.max(0, ...c.values.map((v) => v.length));
  const datasets = /** @type {Record<string, any>[]} */ ([
    {
      type: "bar",
      label: "mean",
      data: c.mean,
      backgroundColor: "rgba(122,63,176,0.35)",
      borderColor: COLORS.violet,
      borderWidth: 1,
    },
  ]);
  for (let s = 0; s < seeds; s++) {
    datasets.push({
      type: "scatter",
      label: `seed ${s + 1}`,
      // a scatter point may not be null
      data: c.values.flatMap((v, i) => (v[s] == null ? [] : [{ y: c.labels[i], x: v[s] }])),
      backgroundColor: SERIES[(s + 1) % SERIES.length],
      pointRadius: 4,
    });
  }
  new Chart(canvas, {
    type: "bar",
    data: { labels: c.labels, datasets },
    options: {
      indexAxis: "y",
      scales: {
        x: { title: { display: true, text: c.metric.replaceAll("_", " ") } },
        y: { type: "category", ticks: { autoSkip: false } },
      },
      plugins: { legend: { labels: { boxWidth: 12 } } },
    },
  });
}

// Accuracy against input length, one line per variant (mean), each seed a point.
function lengthChart(canvas, c) {
  const words = [...new Set(c.series.words.map(String))];
  const variants = [...new Set(c.series.variant)];
  const datasets = [];
  variants.forEach((v, k) => {
    const color = SERIES[k % SERIES.length];
    const rows = c.labels.map((_, i) => i).filter((i) => c.series.variant[i] === v);
    datasets.push({
      type: "line",
      label: v,
      borderColor: color,
      backgroundColor: color,
      pointRadius: 0,
      data: words.map((w) => {
        const i = rows.find((j) => String(c.series.words[j]) === w);
        return i === undefined ? null : c.mean[i];
      }),
    });
    datasets.push({
      type: "scatter",
      label: `${v} seeds`,
      backgroundColor: color,
      pointRadius: 3,
      data: rows.flatMap((i) => c.values[i].map((y) => ({ x: String(c.series.words[i]), y }))),
    });
  });
  new Chart(canvas, {
    type: "line",
    data: { labels: words, datasets },
    options: {
      scales: {
        x: { type: "category", title: { display: true, text: "English words in the input" } },
        y: { min: 0, max: 1, title: { display: true, text: c.metric.replaceAll("_", " ") } },
      },
      plugins: { legend: { labels: { boxWidth: 12, filter: (item) => !item.text.endsWith(" seeds") } } },
    },
  });
}
const FIGURES = {
  "pe-pattern"(fig, d) {
    const box = fig.querySelector('.chart-slot[data-chart="heatmap"]');
    if (!box) return;
    const canvas = h("canvas", {
      role: "img",
      "aria-label": `PE table, ${int(d.positions)} positions by ${int(d.d_model)} dimensions`,
    });
    const holder = h("div", { class: "chart heatmap" }, canvas);
    box.replaceChildren(
      holder,
      h(
        "p",
        { class: "legend" },
        h("span", { class: "swatch neg" }),
        " −1 ",
        h("span", { class: "swatch zero" }),
        " 0 ",
        h("span", { class: "swatch pos" }),
        " +1",
      ),
    );
    heatmap(canvas, d.values, { xLabel: "dimension i (even: sin, odd: cos)", yLabel: "position" });
  },
  "softmax-saturation"(fig, d) {
    for (const [key, label] of [
      ["max_weight", "largest softmax weight"],
      ["gradient", "Σ p(1 − p)"],
    ]) {
      const canvas = slot(fig, key, `${label} against d_k`, 220);
      if (!canvas) continue;
      lineChart(canvas, {
        datasets: [
          { label: "q·k / √d_k", data: xy(d.d_k, d.scaled[key]), pointRadius: 2 },
          { label: "q·k unscaled", data: xy(d.d_k, d.unscaled[key]), pointRadius: 2 },
        ],
        x: "d_k",
        y: label,
        logX: true,
      });
    }
  },
  "attention-stat"(fig, d) {
    const labels = d.self.flatMap((heads, l) => heads.map((_, k) => `layer ${l + 1} · head ${k + 1}`));
    const canvas = slot(fig, "bars", "Mean largest weight per row, per layer and head", 240);
    if (!canvas) return;
    new Chart(canvas, {
      type: "bar",
      data: {
        labels,
        datasets: [
          { label: "encoder self-attention", data: d.self.flat(), backgroundColor: COLORS.violet },
          { label: "cross-attention", data: d.cross.flat(), backgroundColor: COLORS.orange },
          {
            type: "line",
            label: `uniform over the source (≈${formatNumber(d.uniform_over_source, "fixed2")})`,
            data: labels.map(() => d.uniform_over_source),
            borderColor: COLORS.muted,
            borderDash: [4, 4],
            pointRadius: 0,
            borderWidth: 1.5,
          },
        ],
      },
      options: {
        scales: {
          y: { min: 0, max: 1, title: { display: true, text: "mean largest weight" } },
          x: { ticks: { maxRotation: 60, autoSkip: false } },
        },
        plugins: { legend: { labels: { boxWidth: 12 } } },
      },
    });
  },
  "lr-schedule"(fig, d) {
    for (const [key, label] of [
      ["paper_base", "paper base (d 512)"],
      ["miniature", `miniature (d ${int(d.miniature.d_model)})`],
    ]) {
      const s = d[key];
      const canvas = slot(fig, key, `learning rate, ${label}`, 220);
      if (!canvas) continue;
      lineChart(canvas, {
        datasets: [
          {
            label: `${label}: peak ${formatNumber(s.peak_lr, "sci1")} at step ${int(s.peak_step)}`,
            data: xy(s.step, s.lr),
          },
        ],
        x: "training step",
        y: "learning rate",
      });
    }
  },
  "training-curves"(fig, d) {
    const a = slot(fig, "loss", "training loss and held-out exact match against step", 220);
    const b = slot(fig, "lr", "learning rate against step", 220);
    if (a)
      lineChart(a, {
        datasets: [
          { label: "training loss (smoothed labels)", data: xy(d.step, d.loss), yAxisID: "y" },
          {
            label: "held-out exact match",
            data: xy(d.eval_step, d.heldout_exact_match),
            yAxisID: "y2",
            pointRadius: 3,
          },
        ],
        x: "step",
        y: "loss",
        y2: "exact match",
      });
    if (b)
      lineChart(b, {
        datasets: [{ label: "learning rate", data: xy(d.step, d.lr), borderColor: COLORS.teal }],
        x: "step",
        y: "learning rate",
      });
  },
  "time-machine"(fig, d) {
    timeMachine(fig, d);
  },
  "pe-rotation"() {}, // a table: the server drew it
  "param-count"() {},
  "head-gallery"() {},
};

// Every research-desk figure (research-NAME: a view file the desk wrote) is drawn alike, from its parts' charts.
function drawResearch(fig, d) {
  (d.parts || []).forEach((part, i) => {
    const c = part.chart;
    if (!c || part.status !== "results") return;
    const byLength = c.series.words.every((w) => w !== null) && c.series.variant.every((v) => v);
    const canvas = slot(
      fig,
      String(i),
      `${c.metric}: mean of the seeds (bars or lines) and each seed (points)`,
      byLength ? 240 : Math.max(200, 26 * c.labels.length + 60),
    );
    if (canvas) (byLength ? lengthChart : seedBars)(canvas, c);
  });
}
// ---- start ---------------------------------------------------------------------------------------

async function drawFigure(fig) {
  const name = fig.dataset.figure;
  const draw = FIGURES[name] || (name.startsWith("research-") ? drawResearch : undefined);
  if (!draw || fig.dataset.drawn) return;
  if (!fig.querySelector(".chart-slot")) {
    fig.dataset.drawn = "true"; // tables only: the server drew them
    return;
  }
  fig.dataset.drawn = "pending";
  try {
    const [{ data }, library] = await Promise.all([fetchJson(`/api/figures/${name}`), chartLibrary(COLORS.ink)]);
    useChart(library);
    draw(fig, data);
    fig.dataset.drawn = "true";
  } catch (err) {
    // the server's tables stay; only the chart is missing
    fig.prepend(h("p", { class: "not-run" }, `The chart could not be drawn: ${err.message}`));
    fig.dataset.drawn = "error";
  }
}

// Draw each figure when it comes near view (the article is long; most readers see a few). On a
// phone the article scrolls in its own pane, which is then the observer's root.
const article = document.getElementById("article");
let lazy = null;

function observeFigures() {
  const ownScroller = article && getComputedStyle(article).overflowY !== "visible";
  lazy?.disconnect();
  lazy = new IntersectionObserver(
    (entries) => {
      for (const e of entries) {
        if (!e.isIntersecting) continue;
        lazy.unobserve(e.target);
        drawFigure(e.target);
      }
    },
    { root: ownScroller ? article : null, rootMargin: "1000px 0px" },
  );
  for (const fig of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("figure[data-figure]"))) {
    if (fig.dataset.figure !== "beam" && !fig.dataset.drawn) lazy.observe(fig);
  }
}
observeFigures();
window.matchMedia("(max-width: 760px)").addEventListener("change", observeFigures);

const beamFigure = document.querySelector('figure[data-figure="beam"]');
if (beamFigure) {
  shownTrace.follow((trace) => drawBeam(beamFigure, trace.input.number));
}

window.anatomyFigures = { draw: drawFigure }; // tests draw a figure without scrolling to it
