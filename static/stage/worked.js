// The worked attention row of steps 6–9, computed on the stage: a card at the stage's foot with that
// row's arithmetic (its query and one key, their products and sum; q·k times the scale for every key;
// the softmax's weights; the weights that mix the value rows, and the output row they sum to: step 9's
// view holds V, so the value rows are read on the stage, each lit in turn), and the cells it reads lit
// in their blocks as it goes. The scene says which row (scene.worked: the trace ids, the row,
// the key it rests on most, the head's columns, the scale; step.animation.worked: the phase a step
// shows); every number is read from the trace's tensors, none is known here. R replays it.
import { formatNumber } from "../js/format.js";
import { chosenWorked } from "../js/store.js";
import { positioned } from "./axisnames.js";

const STEP_MS = 420; // one key (or one value row) at a time
const QK_MS = 1700; // step 6: after its one cell of Q has risen (animations.js one-cell), the row's query and keys
const fmt = (v) => formatNumber(v, "fixed3").replace("-", "\u2212");

/** Row `r` of a 2-D tensor, `cols` entries from column `c0`. */
function rowOf(t, r, c0 = 0, n = t.shape[1]) {
  return Array.from({ length: n }, (_, i) => t.data[r * t.shape[1] + c0 + i]);
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A number cell the tests read back: data-name (q, k, qk, dot, raw, score, weight, plain, out), data-i. */
function num(name, i, v) {
  const e = el("span", "wk-n", fmt(v));
  e.dataset.name = name;
  e.dataset.i = String(i);
  e.dataset.value = String(v);
  return e;
}

function vector(name, values, label, cls = "") {
  const line = el("div", `wk-line ${cls}`);
  line.append(el("span", "wk-key", label), ...values.map((v, i) => num(name, i, v)));
  return line;
}

export class WorkedCard {
  constructor(stage) {
    this.stage = stage;
    this.el = el("div", "stage-worked");
    this.el.hidden = true;
    this.fold(); // a lasting overlay: the step's view keeps clear of it (tour.js covered())
    this.el.setAttribute("aria-label", "the worked attention row");
    this.anim = null;
    this.chosen = null; // the reader's fold, once they chose one
  }

  /** Open unless the reader folded it; until they choose, a phone's short stage shows only its title. */
  get open() {
    return this.chosen ?? !window.matchMedia?.("(max-width: 760px)")?.matches;
  }

  /** Folded (one line), the card is kept clear of on a phone's stage too ("always") where the step's subject
   *  has token names on its columns: they go under it, at the stage's foot; open, or where nothing is named
   *  under the subject (step 6's Q), only where the stage has height to spare (tour.js covered()). */
  fold(step = this.step) {
    this.step = step;
    const s = this.stage,
      named = (step?.subject || []).some((id) => s.blockById?.get(id)?.col_axis);
    this.el.dataset.coversStage = !this.open && named ? "always" : "";
  }

  /** The card's title: a button that folds the numbers away (and back). */
  title(text) {
    const b = el("button", "wk-title", `${this.open ? "▾" : "▸"} ${text}`);
    b.type = "button";
    b.setAttribute("aria-expanded", String(this.open));
    b.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") e.stopPropagation();
    }); // the button's, not the stage's
    b.addEventListener("click", () => {
      this.chosen = !this.open;
      this.el.classList.toggle("wk-closed", !this.open);
      this.fold();
      this.stage.el.style.setProperty("--worked-h", `${this.el.offsetHeight + 6}px`);
      b.textContent = `${this.open ? "▾" : "▸"} ${text}`;
      b.setAttribute("aria-expanded", String(this.open));
    });
    return b;
  }

  /** The numbers of the row, read from the trace's tensors. */
  numbers(w) {
    const T = (id) => this.stage.tensors.get(id);
    const q = T(w.q),
      k = T(w.k),
      s = T(w.scores),
      a = T(w.weights),
      o = T(w.out);
    if (!q || !k || !s || !a || !o) return null;
    const n = s.shape[1],
      keys = Array.from({ length: n }, (_, j) => rowOf(k, j));
    const qr = rowOf(q, w.row),
      raw = keys.map((kj) => kj.reduce((sum, x, i) => sum + x * qr[i], 0));
    const scores = rowOf(s, w.row),
      m = Math.max(...raw),
      e = raw.map((x) => Math.exp(x - m)),
      z = e.reduce((p, x) => p + x, 0);
    return { n, q: qr, keys, raw, scores, weights: rowOf(a, w.row), plain: e.map((x) => x / z), out: rowOf(o, w.row) };
  }

  /** Shows the card for a step (hidden where the step walks no row), before its view is framed. */
  show(step) {
    this.fill(step);
    // the inspector stands above the card, not on it (stage.css: --worked-h)
    this.stage.el.style.setProperty("--worked-h", this.el.hidden ? "0px" : `${this.el.offsetHeight + 6}px`);
  }

  hide() {
    this.stop();
    this.el.hidden = true;
    this.stage.el.style.setProperty("--worked-h", "0px");
  }

  fill(step) {
    const w = this.stage.scene?.worked,
      phase = step?.animation?.worked;
    this.el.hidden = !w || !phase || !w.q;
    if (this.el.hidden) return;
    const d = this.numbers(w);
    if (!d) {
      this.el.hidden = true;
      return;
    }
    // rows counted from 1, as the reader counts them; a key whose token repeats named with its position
    const words = this.stage.scene.axes[w.axis] || [],
      tokens = positioned(words),
      word = (j) => words[j] ?? `row ${j + 1}`,
      tok = (j) => tokens[j] ?? `row ${j + 1}`;
    this.el.dataset.phase = phase;
    this.el.dataset.row = String(w.row);
    this.el.dataset.key = String(w.key);
    this.el.classList.toggle("wk-closed", !this.open);
    this.fold(step);
    const title = this.title(`${w.name} · row ${w.row + 1} (${word(w.row)}) asks`);
    this.el.replaceChildren(title, ...this[phase](d, w, tok), this.chooser(w, d.n, word));
    this.rows = [...this.el.querySelectorAll(".wk-step")];
  }

  /** A teacher's choice of the row to follow: the head and the row (the page runs the input again with it and
   *  keeps it in the address), and the way back to the rule's row. */
  chooser(w, n, tok) {
    const line = el("div", "wk-choose");
    const pick = (name, options, value) => {
      const s = /** @type {HTMLSelectElement} */ (el("select"));
      s.dataset.choose = name;
      s.setAttribute("aria-label", `the worked row's ${name}`);
      s.append(...options.map(([v, text]) => Object.assign(el("option", "", text), { value: String(v) })));
      s.value = String(value);
      s.addEventListener("keydown", (e) => e.stopPropagation()); // its arrows, not the stage's
      return s;
    };
    const heads = Array.from({ length: w.heads || 1 }, (_, h) => [h, `head ${h + 1}`]);
    const head = pick("head", heads, w.head - 1),
      row = pick(
        "row",
        Array.from({ length: n }, (_, r) => [r, `row ${r + 1} (${tok(r)})`]),
        w.row,
      );
    const ask = () => chosenWorked.set({ head: Number(head.value), row: Number(row.value) });
    head.addEventListener("change", ask);
    row.addEventListener("change", ask);
    const back = el("button", "wk-rule", "the rule's row");
    back.type = "button";
    back.disabled = w.rule !== "chosen";
    back.addEventListener("click", () => chosenWorked.set(null));
    line.append(el("span", "wk-key", w.rule === "chosen" ? "chosen row" : "follow another"), head, row, back);
    return line;
  }

  qk(d, w, tok) {
    return [
      vector("q", d.q, `q = Q[${w.row + 1}]`),
      vector("k", d.keys[w.key], `k = K[${w.key + 1}] ${tok(w.key)}`),
      el(
        "div",
        "wk-note",
        `each key row of K (this head's ${d.q.length} columns) is lit; steps 7–9 hold q against each`,
      ),
    ];
  }

  scores(d, w, tok) {
    const pair = [
      vector("q", d.q, "q"),
      vector("k", d.keys[w.key], `k ${tok(w.key)}`),
      vector(
        "qk",
        d.q.map((x, i) => x * d.keys[w.key][i]),
        "q·k terms",
      ),
    ];
    const sum = el("div", "wk-line");
    sum.append(
      el("span", "wk-key", "Σ = q·k"),
      num("dot", w.key, d.raw[w.key]),
      el("span", "wk-op", `× ${fmt(w.scale)} =`),
      num("score", w.key, d.scores[w.key]),
    );
    const table = this.columns(
      ["key", "q·k/√d_k", "softmax"],
      d.n,
      (j) => [tok(j), num("score", j, d.scores[j]), num("weight", j, d.weights[j])],
      w.key,
    );
    return [...pair, sum, table];
  }

  scale(d, w, tok) {
    return [
      this.columns(
        ["key", "q·k", "q·k/√d_k", "weight", "without ÷√d_k"],
        d.n,
        (j) => [
          tok(j),
          num("raw", j, d.raw[j]),
          num("score", j, d.scores[j]),
          num("weight", j, d.weights[j]),
          num("plain", j, d.plain[j]),
        ],
        w.key,
      ),
    ];
  }

  /** Step 9: the weight of each key's value row (each row lit in V on the stage as its weight appears,
   *  `light`), and their weighted sum, the output row; the value rows themselves are V's cells in view. */
  sum(d, w, tok) {
    const mix = this.columns(["value row", "weight"], d.n, (j) => [tok(j), num("weight", j, d.weights[j])], w.key);
    return [mix, vector("out", d.out, "Σ = output row", "wk-step wk-out")];
  }

  /** A table turned on its side: one column per key (a key's numbers under its name, each column revealed
   *  in turn by the animation, the key the row rests on marked), the quantities down the left; the columns
   *  wrap where the stage is narrow. As many lines as quantities, not as keys: the card leaves the step's
   *  view its room (a six-digit input has eleven keys; tour.js covered()). */
  columns(heads, n, cells, mark) {
    const box = el("div", "wk-cols"),
      head = el("div", "wk-col wk-heads");
    head.append(...heads.map((h) => el("div", "wk-h", h)));
    box.append(head);
    for (let j = 0; j < n; j++) {
      const col = el("div", `wk-col wk-step${j === mark ? " wk-mark" : ""}`);
      col.dataset.j = String(j);
      for (const c of cells(j)) {
        const d = el("div", "wk-c");
        d.append(typeof c === "string" ? document.createTextNode(c) : c);
        col.append(d);
      }
      box.append(col);
    }
    return box;
  }

  stop() {
    if (this.anim) {
      this.stage.tweens.delete(this.anim);
      this.anim = null;
    }
  }

  /** The phase's animation: the keys (or value rows) in turn, each lit in its block as its line appears. */
  play(step, cut) {
    this.stop();
    if (this.el.hidden || !this.rows) return;
    const w = this.stage.scene.worked,
      phase = step.animation.worked,
      rows = this.rows,
      n = rows.length;
    const at = (k) => {
      const shown = k >= 1 ? n : Math.floor(k * (n + 1));
      rows.forEach((r, i) => r.classList.toggle("wk-hidden", i >= shown));
      this.light(w, phase, Math.min(shown, n) - 1, k >= 1);
    };
    if (cut) {
      at(1);
      return;
    }
    at(0);
    const ms = phase === "qk" ? QK_MS : STEP_MS * (n + 1);
    this.anim = this.stage.tween(
      ms,
      at,
      () => {
        this.anim = null;
      },
      { ease: false },
    );
  }

  /** Lights the row's cells: its query, the key `j` reached (all keys at the end), its scores and weights. */
  light(w, phase, j, end) {
    const s = this.stage,
      f = s.cells,
      r = w.row,
      n = s.tensors.get(w.scores)?.shape[1] || 0;
    const rect = (id, r0, r1, c0, c1) => {
      const a = s.resolve(id, r0, c0),
        b = s.resolve(id, r1, c1);
      return a && b
        ? { id: a.id, rect: [Math.min(a.r, b.r), Math.max(a.r, b.r), Math.min(a.c, b.c), Math.max(a.c, b.c)] }
        : null;
    };
    const dk = s.tensors.get(w.q)?.shape[1] || 1,
      sets = [];
    if (phase === "sum") {
      // the value row of the key reached, in the head's columns of V; at the end the sweep frames the scene's rects
      const [c0, cols] = w.v_cols,
        x = !end && j >= 0 && rect(w.v_full, j, j, c0, c0 + cols - 1);
      if (x && f.has(x.id)) {
        f.set(x.id, { focus: x.rect });
        s.invalidate();
      }
      return;
    }
    if (phase === "qk" && !end) return;
    sets.push(rect(w.q, r, r, 0, dk - 1));
    if (phase === "qk") sets.push(rect(w.k, 0, n - 1, 0, dk - 1));
    else {
      const upto = end ? n - 1 : Math.max(0, j);
      sets.push(end ? rect(w.k, 0, n - 1, 0, dk - 1) : rect(w.k, upto, upto, 0, dk - 1));
      if (j >= 0 || end) sets.push(rect(w.scores, r, r, 0, upto));
      if (end || phase === "scale") sets.push(rect(w.weights, r, r, 0, end ? n - 1 : upto));
    }
    for (const x of sets) if (x && f.has(x.id)) f.set(x.id, { focus: x.rect });
    s.invalidate();
  }
}
