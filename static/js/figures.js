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

import { fetchJson, loadBeam, traceSource } from "./api.js";
import { chartLibrary } from "./charts.js";
import { formatNumber } from "./format.js";

let Chart = null; // Chart.js (./charts.js), set before the first chart is drawn
document.documentElement.classList.add("js"); // chart slots keep room for their charts (article.css)
const COLORS = {
  violet: "#7a3fb0",
  orange: "#c0661a",
  teal: "#1f7f74",
  ink: "#1d2024",
  muted: "#5b6470",
  blue: "#1f5aa6",
};
const SERIES = [COLORS.violet, COLORS.orange, COLORS.teal, COLORS.blue, "#a23b5b", "#6b7a1f"];

const int = (v) => formatNumber(v, "int");
const fixed3 = (v) => formatNumber(v, "fixed3");

// ---- small DOM helpers ---------------------------------------------------------------------------

function h(tag, attrs = {}, ...children) {
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
function slot(figure, key, label, height = 240) {
  const box = figure.querySelector(`.chart-slot[data-chart="${key}"]`);
  if (!box) return null;
  const canvas = h("canvas", { role: "img", "aria-label": label });
  box.replaceChildren(canvas);
  box.style.height = `${height}px`;
  return canvas;
}

/** @param {HTMLCanvasElement} canvas
 *  @param {{labels?: any[], datasets: object[], x: string, y: string, y2?: string, legend?: boolean, logX?: boolean}} chart */
function lineChart(canvas, { labels, datasets, x, y, y2, legend = true, logX = false }) {
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

const xy = (xs, ys) => xs.map((x, i) => ({ x, y: ys[i] }));

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

function table(head, rows, attrs = {}) {
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
      data: c.values.flatMap((v, i) => (v[s] == null ? [] : [{ y: c.labels[i], x: v[s] }])), // a scatter point may not be null
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

// ---- the training time machine (step 21): a scrubber over the snapshots the server lists -----------------

// Dragging the scrubber asks the page for the current input on that snapshot (anatomy.setCheckpoint): the
// stage redraws with its weights and the page's live values with its output. The last position is the
// trained model. A link with checkpoint=N, or another way of setting it, moves the scrubber too.
function timeMachine(fig, d) {
  const range = fig.querySelector(".tm-scrubber"),
    readout = fig.querySelector(".tm-readout");
  const reset = fig.querySelector(".tm-reset");
  const steps = d.snapshots.map((s) => s.step),
    last = steps.at(-1);
  let marker = null; // the snapshot's step on the chart; null: the trained model
  const markerLine = {
    id: "tmMarker",
    afterDatasetsDraw(chart) {
      const x = chart.scales.x.getPixelForValue(marker ?? last),
        { top, bottom } = chart.chartArea,
        ctx = chart.ctx;
      ctx.save();
      ctx.strokeStyle = COLORS.ink;
      ctx.setLineDash([4, 3]);
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, bottom);
      ctx.stroke();
      ctx.restore();
    },
  };
  const canvas = slot(
    fig,
    "snapshots",
    "training loss, and held-out exact match and alignment of reordered pieces at each snapshot",
    260,
  );
  const per = (key) =>
    xy(
      steps,
      d.snapshots.map((s) => s[key]),
    ).filter((p) => p.y !== null);
  const chart =
    canvas
    && new Chart(canvas, {
      type: "line",
      plugins: [markerLine],
      data: {
        datasets: [
          {
            label: "training loss (smoothed labels)",
            data: xy(d.log_step, d.log_loss),
            yAxisID: "y",
            borderColor: COLORS.violet,
            pointRadius: 0,
            borderWidth: 2,
          },
          {
            label: "held-out exact match",
            data: per("heldout_exact_match"),
            yAxisID: "y2",
            borderColor: COLORS.orange,
            backgroundColor: COLORS.orange,
            pointRadius: 3,
            borderWidth: 2,
          },
          {
            label: "best last-layer cross-attention head, reordered pieces",
            data: per("best_head_reordered"),
            yAxisID: "y2",
            borderColor: COLORS.teal,
            backgroundColor: COLORS.teal,
            pointRadius: 3,
            borderWidth: 2,
          },
        ],
      },
      options: {
        parsing: false,
        interaction: { mode: "nearest", intersect: false },
        scales: {
          x: { type: "linear", min: 0, max: last, title: { display: true, text: "training step" } },
          y: { title: { display: true, text: "loss" } },
          y2: {
            position: "right",
            min: 0,
            max: 1,
            title: { display: true, text: "share of held-out numbers or pieces" },
            grid: { drawOnChartArea: false },
          },
        },
        plugins: { legend: { labels: { boxWidth: 14 } } },
      },
    });
  if (!range) return;
  const stepAt = (i) => (i >= steps.length ? null : steps[i]);
  const pct = (v) => (v === null || v === undefined ? "–" : formatNumber(v, "pct1"));
  const say = () => {
    const s = stepAt(Number(range.value)),
      row = s === null ? d.averaged : d.snapshots[Number(range.value)];
    const t = window.anatomy?.trace;
    const pieces = t?.input.german_pieces || [],
      long = pieces.length > 8; // an early snapshot babbles to the length limit
    const written = long
      ? `${pieces.slice(0, 6).join(" ")} … (${formatNumber(pieces.length, "int")} pieces)`
      : pieces.join(" ");
    const shown =
      t && (t.checkpoint ?? null) === s
        ? ` For ${formatNumber(t.input.number, "text")} it writes “${written}”${t.input.correct ? " (correct)" : " (wrong)"}.`
        : "";
    readout.textContent = `${s === null ? "the trained model (the average of the last five checkpoints)" : `step ${formatNumber(s, "int")}${s === 0 ? " (the initialisation)" : ""}`}: held-out exact match ${pct(row.heldout_exact_match)}, best head on reordered pieces ${pct(row.best_head_reordered)}.${shown}`;
    range.setAttribute("aria-valuetext", s === null ? "trained model" : `step ${s}`);
  };
  const show = (checkpoint) => {
    const i = checkpoint === null || checkpoint === undefined ? steps.length : steps.indexOf(Number(checkpoint));
    if (i < 0) return;
    range.value = String(i);
    marker = stepAt(i);
    chart?.update("none");
    say();
  };
  let timer = 0;
  range.addEventListener("input", () => {
    marker = stepAt(Number(range.value));
    chart?.update("none");
    say();
    clearTimeout(timer); // while dragging, only the position the hand rests on is fetched
    timer = setTimeout(() => window.anatomy?.setCheckpoint(marker), 150);
  });
  reset?.addEventListener("click", () => {
    show(null);
    window.anatomy?.setCheckpoint(null);
  });
  document.addEventListener("anatomy:checkpoint", (e) => show(e.detail.checkpoint));
  document.addEventListener("anatomy:trace", say);
  range.disabled = false;
  if (reset) reset.disabled = false;
  show(window.anatomy?.checkpoint ?? null);
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

// ---- the live beam search (step 19): the server drew the page's input; each new input is redrawn here

const tokens = (t) => t.join(" ");

function beamStep(step, best) {
  const rows = [];
  const isBest = (hyp) => tokens(hyp.tokens) === tokens(best.tokens);
  for (const hyp of step.alive) {
    rows.push(
      h(
        "tr",
        { class: "alive", "data-tokens": tokens(hyp.tokens) },
        h("td", {}, "alive"),
        h("td", {}, tokens(hyp.tokens)),
        h("td", { class: "num" }, fixed3(hyp.log_prob)),
        h("td", { class: "num" }, "–"),
        h("td", { class: "num" }, "–"),
      ),
    );
  }
  for (const hyp of step.finished) {
    rows.push(
      h(
        "tr",
        { class: `finished${isBest(hyp) ? " winner" : ""}`, "data-tokens": tokens(hyp.tokens) },
        h("td", {}, isBest(hyp) ? "finished ★" : "finished"),
        h("td", {}, tokens(hyp.tokens)),
        h("td", { class: "num" }, fixed3(hyp.log_prob)),
        h("td", { class: "num" }, fixed3(hyp.length_penalty)),
        h("td", { class: "num" }, fixed3(hyp.score)),
      ),
    );
  }
  return h(
    "div",
    { class: "beam-step", "data-step": step.step },
    h("h3", {}, `Turn ${int(step.step)}`),
    h("div", { class: "table-scroll" }, table(["kind", "output so far", "log p", "lp(Y)", "score"], rows)),
  );
}

// The table's data: the server's address, or, when the browser computed it (the static build, the server
// unreachable), the document itself as a file to save (the address would answer nothing here).
let beamFile = null;
function beamData(b, link) {
  if (traceSource() === "server") return h("a", { href: link }, link);
  if (beamFile) URL.revokeObjectURL(beamFile);
  beamFile = URL.createObjectURL(new Blob([JSON.stringify(b, null, 1)], { type: "application/json" }));
  return h("a", { href: beamFile, download: `beam-${b.number}.json` }, `${link} as computed in your browser`);
}

// The beam search (here or the server's) after the stage's next picture, which it held back 140 ms (bench_new_input.py)
const afterNextFrame = () =>
  new Promise((done) => {
    requestAnimationFrame(() => setTimeout(done, 0));
    setTimeout(done, 250);
  });
let beamSeq = 0;
async function drawBeam(fig, number) {
  if (Number(fig.querySelector(".beam-best")?.dataset.number) === number) {
    fig.dataset.number = String(number);
    return;
  }
  const seq = ++beamSeq;
  fig.setAttribute("aria-busy", "true");
  if ((await afterNextFrame(), seq !== beamSeq)) return; // a newer input's table is on its way
  try {
    const b = await loadBeam(number);
    if (seq !== beamSeq) return;
    const best = b.best;
    const link = `/api/beam?input=${b.number}`;
    fig.replaceChildren(
      h(
        "p",
        { class: "beam-best", "data-number": b.number },
        "Beam ",
        int(b.beam_size),
        ", α = ",
        formatNumber(b.alpha),
        " on ",
        h("strong", {}, b.source_tokens.filter((t) => t !== "</s>").join(" ")),
        ": the winner is ",
        h("strong", { class: "winner-tokens" }, tokens(best.tokens)),
        ` (${b.german}), score ${fixed3(best.log_prob)} / ${fixed3(best.length_penalty)} = ${fixed3(best.score)}.`,
      ),
      ...b.steps.map((s) => beamStep(s, best)),
      h(
        "figcaption",
        {},
        "Every turn of the search: the alive beams with their total log-probability, the finished outputs with the length penalty and the score; ★ marks the winner. ",
        h(
          "span",
          { class: "reproduce" },
          "Data: ",
          beamData(b, link),
          "; reproduce (with the server running): ",
          h("code", {}, `curl "localhost:8000${link}"`),
        ),
      ),
    );
    fig.dataset.number = String(b.number);
  } catch (err) {
    if (seq === beamSeq)
      fig.replaceChildren(h("p", { class: "not-run" }, `The beam search could not be loaded: ${err.message}`));
  } finally {
    if (seq === beamSeq) fig.removeAttribute("aria-busy");
  }
}

// ---- start ---------------------------------------------------------------------------------------

async function drawFigure(fig) {
  const name = fig.dataset.figure;
  const draw = FIGURES[name] || (name.startsWith("research-") ? drawResearch : undefined);
  if (!draw || fig.dataset.drawn) return;
  if (!fig.querySelector(".chart-slot")) {
    fig.dataset.drawn = "true";
    return;
  } // tables only: the server drew them
  fig.dataset.drawn = "pending";
  try {
    const [{ data }, library] = await Promise.all([fetchJson(`/api/figures/${name}`), chartLibrary(COLORS.ink)]);
    Chart = library;
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
  document.addEventListener("anatomy:trace", (e) => drawBeam(beamFigure, e.detail.input.number));
  if (window.anatomy?.trace) drawBeam(beamFigure, window.anatomy.trace.input.number);
}

window.anatomyFigures = { draw: drawFigure }; // tests draw a figure without scrolling to it
