// The `loss` overlay a step may name (scene step `overlay`: {name, block}): the training loss of the
// trace's input, row by row, in a table over the stage (marked data-covers-stage, so the step's view
// frames its block in the band it leaves free; stage.css places it where no block lies). Per decoder row:
// the reference piece y, the smoothed target's q(y) and the model's p(y), a strip drawing q (outlined) over
// the row's p (filled bars) across the block's columns, then −Σ q ln p and −ln p(y); under it, their sum and
// mean. The numbers are the trace's `derived` figures (article/loss.py); the stage only lays them out, and
// rings each row's reference cell on the block (marks.js). Rows that did not read the reference carry no loss.
import { formatNumber } from "../js/format.js";

const SVG = "http://www.w3.org/2000/svg";
const STRIP = { w: 130, h: 16 };
const el = (tag, props = {}, ...kids) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...kids);
  return e;
};
const f = (v, d = 3) => formatNumber(v, `fixed${d}`);

export class LossView {
  constructor(stage) {
    this.stage = stage;
    this.el = el("div", { className: "stage-loss", hidden: true });
    this.el.setAttribute("data-covers-stage", "always"); // a phone's view keeps clear of it too (tour.js covered())
    this.el.setAttribute("aria-label", "training loss of this input, per output row");
    stage.el.append(this.el);
  }

  /** Shows the overlay when the step names it (and the trace has the figures); the reference rings. */
  apply(step) {
    const s = this.stage,
      o = step?.overlay,
      d = s.trace?.derived;
    if (o?.name !== "loss" || !d?.loss_rows) {
      this.el.hidden = true;
      this.el.replaceChildren();
      return [];
    }
    this.render(d, s.tensors.get(o.block));
    this.el.hidden = false;
    return d.loss_rows
      .filter((r) => r.forced)
      .map((r) => ({ id: o.block, row: r.row, col: r.reference_id, kind: "reference" }));
  }

  render(d, probs) {
    const head = el(
      "tr",
      {},
      ...["row", "reads", "target y", "q(y)", "p(y)", "q and p", "−Σ q ln p", "−ln p(y)"].map((t) =>
        el("th", { textContent: t }),
      ),
    );
    const body = d.loss_rows.filter((r) => r.forced).map((r) => this.row(r, d, probs)),
      off = d.loss_rows.filter((r) => !r.forced);
    if (off.length) {
      // the rows after the output left the reference: one line for all of them
      const a = off[0].row,
        b = off[off.length - 1].row;
      body.push(
        el(
          "tr",
          { className: "stage-loss-off" },
          el("td", { textContent: a === b ? String(a) : `${a}–${b}` }),
          el("td", { textContent: off[0].reads }),
          el("td", {
            colSpan: 6,
            textContent: "read the model\u2019s own pieces, not the reference\u2019s: not training rows, no loss",
          }),
        ),
      );
    }
    const foot = el(
      "tr",
      { className: "stage-loss-total" },
      el("td", {
        colSpan: 6,
        textContent: `sum over ${d.loss_forced_rows} of ${d.loss_reference_length} positions · mean`,
      }),
      el("td", { textContent: `${f(d.loss_sum)} · ${f(d.loss_mean)}` }),
      el("td", { textContent: `${f(d.plain_loss_sum)} · ${f(d.plain_loss_mean)}` }),
    );
    const table = el("table", {}, el("thead", {}, head), el("tbody", {}, ...body, foot));
    const caption = el("div", {
      className: "stage-loss-caption",
      textContent:
        `Smoothed target q: ${f(d.loss_q_reference, 4)} on the reference piece y (pink ring), `
        + `${f(d.loss_q_other, 4)} on each other piece. White outline: the row's largest probability, `
        + "the piece written.",
    });
    // which rows are training rows, for every input (article/loss.py)
    this.el.replaceChildren(
      caption,
      table,
      el("div", { className: "stage-loss-departs", textContent: d.loss_departs }),
    );
    Object.assign(this.el.dataset, {
      sum: String(d.loss_sum),
      mean: String(d.loss_mean),
      plainSum: String(d.plain_loss_sum),
      plainMean: String(d.plain_loss_mean),
      qReference: String(d.loss_q_reference),
      qOther: String(d.loss_q_other),
    });
  }

  row(r, d, probs) {
    const tr = el("tr");
    tr.dataset.row = String(r.row);
    Object.assign(tr.dataset, {
      reference: r.reference,
      referenceId: String(r.reference_id),
      pReference: String(r.p_reference),
      loss: String(r.loss),
      plainLoss: String(r.plain_loss),
    });
    tr.append(
      ...[String(r.row + 1), r.reads, r.reference, f(d.loss_q_reference, 4), f(r.p_reference)].map((t) =>
        el("td", { textContent: t }),
      ),
      el("td", {}, this.strip(r, d, probs)),
      el("td", { textContent: f(r.loss) }),
      el("td", { textContent: f(r.plain_loss) }),
    );
    return tr;
  }

  /** q (an outline) over p (bars) across the row's columns, both on one 0…1 scale. */
  strip(r, d, probs) {
    const svg = document.createElementNS(SVG, "svg"),
      n = probs?.shape[1] || 0,
      w = STRIP.w / Math.max(n, 1),
      H = STRIP.h;
    svg.setAttribute("viewBox", `0 0 ${STRIP.w} ${H}`);
    svg.setAttribute("preserveAspectRatio", "none");
    svg.setAttribute("aria-hidden", "true");
    let qPath = `M0 ${H}`;
    for (let v = 0; v < n; v++) {
      const p = probs.data[r.row * n + v],
        q = v === r.reference_id ? d.loss_q_reference : d.loss_q_other;
      const bar = document.createElementNS(SVG, "rect");
      const attributes = /** @type {[string, number | string][]} */ ([
        ["x", v * w],
        ["y", H - p * H],
        ["width", Math.max(w - 0.3, 0.5)],
        ["height", p * H],
        ["class", "p"],
      ]);
      for (const [k, val] of attributes) bar.setAttribute(k, String(val));
      svg.append(bar);
      qPath += ` L${v * w} ${H - q * H} L${(v + 1) * w} ${H - q * H}`;
    }
    const q = document.createElementNS(SVG, "path");
    q.setAttribute("d", `${qPath} L${STRIP.w} ${H}`);
    q.setAttribute("class", "q");
    svg.append(q);
    return svg;
  }
}
