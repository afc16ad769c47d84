// The training time machine (step 21 of the article): a scrubber over the training snapshots the server
// lists, beside a chart of the training loss and the held-out scores at each snapshot.
//
// Dragging the scrubber asks the page for the current input on that snapshot (anatomy.setCheckpoint): the
// stage redraws with its weights and the page's live values with its output. The last position is the
// trained model. A link with checkpoint=N, or another way of setting it, moves the scrubber too.

import { COLORS, Chart, slot, xy } from "./figure-kit.js";
import { formatNumber } from "./format.js";
import { askedSnapshot, shownTrace, snapshot } from "./store.js";

// A dashed vertical line at the step the scrubber shows (markerStep(): null when it shows the trained model,
// drawn at the last step).
function markerLine(markerStep, last) {
  return {
    id: "tmMarker",
    afterDatasetsDraw(chart) {
      const x = chart.scales.x.getPixelForValue(markerStep() ?? last),
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
}

// The chart's lines: the training loss at every logged step, the two held-out scores at each snapshot.
function snapshotDatasets(d, steps) {
  const per = (key) =>
    xy(
      steps,
      d.snapshots.map((s) => s[key]),
    ).filter((p) => p.y !== null);
  return [
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
  ];
}

// The chart in the figure's slot (null when the figure has none), with the marker line drawn over it.
function snapshotChart(fig, d, steps, marker) {
  const canvas = slot(
    fig,
    "snapshots",
    "training loss, and held-out exact match and alignment of reordered pieces at each snapshot",
    260,
  );
  return (
    canvas
    && new Chart(canvas, {
      type: "line",
      plugins: [marker],
      data: { datasets: snapshotDatasets(d, steps) },
      options: {
        parsing: false,
        interaction: { mode: "nearest", intersect: false },
        scales: {
          x: { type: "linear", min: 0, max: steps.at(-1), title: { display: true, text: "training step" } },
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
    })
  );
}

const pct = (v) => (v === null || v === undefined ? "–" : formatNumber(v, "pct1"));

// What the model writes for the page's input, when the page's trace `t` is of the snapshot shown (step `s`).
function writtenOnSnapshot(t, s) {
  if (!t || (t.checkpoint ?? null) !== s) return "";
  const pieces = t.input.german_pieces || [],
    long = pieces.length > 8; // an early snapshot babbles to the length limit
  const written = long
    ? `${pieces.slice(0, 6).join(" ")} … (${formatNumber(pieces.length, "int")} pieces)`
    : pieces.join(" ");
  const verdict = t.input.correct ? " (correct)" : " (wrong)";
  return ` For ${formatNumber(t.input.number, "text")} it writes “${written}”${verdict}.`;
}

// The readout under the scrubber: the snapshot (step `s`, null: the trained model), its scores (`row`) and, when
// the page's trace is of it, what it writes.
function readoutText(s, row, t) {
  const snapshot =
    s === null
      ? "the trained model (the average of the last five checkpoints)"
      : `step ${formatNumber(s, "int")}${s === 0 ? " (the initialisation)" : ""}`;
  const scores =
    `held-out exact match ${pct(row.heldout_exact_match)}, `
    + `best head on reordered pieces ${pct(row.best_head_reordered)}.`;
  return `${snapshot}: ${scores}${writtenOnSnapshot(t, s)}`;
}

export function timeMachine(fig, d) {
  const range = fig.querySelector(".tm-scrubber"),
    readout = fig.querySelector(".tm-readout");
  const reset = fig.querySelector(".tm-reset");
  const steps = d.snapshots.map((s) => s.step);
  let marker = null; // the snapshot's step on the chart; null: the trained model
  const chart = snapshotChart(
    fig,
    d,
    steps,
    markerLine(() => marker, steps.at(-1)),
  );
  if (!range) return;
  const stepAt = (i) => (i >= steps.length ? null : steps[i]);
  const say = () => {
    const s = stepAt(Number(range.value)),
      row = s === null ? d.averaged : d.snapshots[Number(range.value)];
    readout.textContent = readoutText(s, row, shownTrace.get());
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
    timer = setTimeout(() => askedSnapshot.set(marker), 150);
  });
  reset?.addEventListener("click", () => {
    show(null);
    askedSnapshot.set(null);
  });
  snapshot.subscribe(show);
  shownTrace.subscribe(say);
  range.disabled = false;
  if (reset) reset.disabled = false;
  show(snapshot.get());
}
