// The explanation panel: one cell's formula with its numbers (KaTeX), the trace's value beside the one
// recomputed in float64, the input cells it was computed from (each a button: "where did this come
// from?"), the path walked so far (a breadcrumb back), and the exports of this cell and its block.
// It renders what the stage hands it (a view model); it computes nothing. It carries data-id, data-row,
// data-col, data-value, data-recomputed (and data-op, data-difference, data-compare-value) like the
// inspector, and announces each new cell in an aria-live line.
import { formatNumber } from "../js/format.js";

const fmt = (v, f = "sig8") =>
  v === -Infinity ? "−∞" : v === undefined ? "–" : formatNumber(v, Number.isInteger(v) ? "text" : f);

/** A scene label (^{…} superscript, _{…} subscript) as DOM nodes. */
export function richText(text) {
  const frag = document.createDocumentFragment(),
    re = /([\^_])\{([^}]*)\}/g;
  let last = 0,
    m;
  while ((m = re.exec(text))) {
    if (m.index > last) frag.append(text.slice(last, m.index));
    const el = document.createElement(m[1] === "^" ? "sup" : "sub");
    el.textContent = m[2];
    frag.append(el);
    last = re.lastIndex;
  }
  if (last < text.length) frag.append(text.slice(last));
  return frag;
}

/** An argument's name as the formula writes it (LaTeX: \\gamma, X^{(2)}) as text. */
const argText = (a) => richText(a.replace(/\\gamma/g, "γ").replace(/\\beta/g, "β"));

const h = (tag, props = {}, ...kids) => {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") el.className = v;
    else if (k === "data") Object.assign(el.dataset, v);
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) el.setAttribute(k, v === true ? "" : v);
  }
  el.append(...kids.filter((k) => k !== null && k !== undefined));
  return el;
};

/** "matches to 3·10^-8", "matches exactly", or "differs by …" (a value the page cannot reproduce). */
export function agreement(value, recomputed) {
  if (value === recomputed) return { ok: true, text: "matches exactly", diff: 0 };
  const d = Math.abs(recomputed - value);
  if (!Number.isFinite(d)) return { ok: false, text: "does not match", diff: d };
  const ok = d <= 1e-5 * Math.max(1, Math.abs(value));
  return { ok, text: `${ok ? "matches to" : "differs by"} ${formatNumber(d, "sci0")}`, diff: d };
}

/** The formula typeset by KaTeX, or its LaTeX as code when KaTeX is absent or fails. */
function formulaBox({ ex, katex }) {
  const formula = h("div", { class: "explain-formula" });
  if (katex) {
    try {
      katex.render(ex.formula, formula, { displayMode: true, throwOnError: false });
    } catch {
      formula.append(h("code", {}, ex.formula));
    }
  } else formula.append(h("code", {}, ex.formula));
  return formula;
}

/** The trace's value beside the one recomputed here, or why a given value has no computation. */
function checkLine(ex, agree) {
  const given = ex.op === "Constant" ? "a constant of the trace" : "a learned parameter";
  return h(
    "p",
    { class: `explain-check ${agree.ok ? "ok" : "bad"}` },
    ex.given
      ? `value ${fmt(ex.value)} — given, not computed (${given})`
      : `trace ${fmt(ex.value)} · recomputed here in float64 ${fmt(ex.recomputed, "sig9")} · ${agree.text}`,
  );
}

/** The same cell for the compared input, and the difference; none when no input is compared. */
function compareLine({ ex, compare }) {
  if (!compare) return null;
  if (compare.value === undefined)
    return h("p", { class: "explain-compare" }, `input ${compare.input} has no such cell`);
  const difference = `difference ${compare.a} − ${compare.input} = ${fmt(ex.value - compare.value, "sig5")}`;
  return h("p", { class: "explain-compare" }, `input ${compare.input}: ${fmt(compare.value)} · ${difference}`);
}

/** The aria-live line that announces the cell. */
function liveText({ ex, titleText }, agree) {
  const how = ex.given ? "Given." : `${ex.op} of ${ex.inputs.length} input cells; recomputed, ${agree.text}.`;
  return `${titleText} [${ex.index.join(", ")}] = ${fmt(ex.value, "sig5")}. ${how}`;
}

export class ExplainPanel {
  /** handlers: go(cell, how), back(i), close(), copy(), csv(), hover(cell | null) */
  constructor(handlers) {
    this.on = handlers;
    this.el = h("section", {
      class: "explain-panel",
      role: "region",
      "aria-label": "Where this value comes from",
      hidden: true,
    });
    this.el.addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation();
        this.on.close(true);
      }
    });
    this.live = h("p", { class: "explain-live visually-hidden", "aria-live": "polite", "aria-atomic": "true" });
    this.body = h("div", { class: "explain-body" });
    this.el.append(this.live, this.body);
    document.body.appendChild(this.el);
  }

  get open() {
    return !this.el.hidden;
  }

  hide() {
    this.el.hidden = true;
    this.body.replaceChildren();
    for (const k of Object.keys(this.el.dataset)) delete this.el.dataset[k];
  }

  focus() {
    this.el.querySelector(".explain-title")?.focus({ preventScroll: true });
  }

  cellButton(cell, text) {
    const name = `${cell.part ? `${cell.part}: ` : ""}${cell.id}[${cell.row}, ${cell.col}] = ${fmt(cell.value)}`;
    return h(
      "button",
      {
        type: "button",
        class: "explain-cell",
        title: name,
        "aria-label": `${name}: explain this input`,
        data: { id: cell.id, row: String(cell.row), col: String(cell.col) },
        onclick: () => this.on.go(cell, "input"),
        onmouseenter: () => this.on.hover(cell),
        onmouseleave: () => this.on.hover(null),
        onfocus: () => this.on.hover(cell),
        onblur: () => this.on.hover(null),
      },
      ...[text].flat(),
    );
  }

  /** vm: {ex, title, lines, groups, trail, compare, katex} (see Stage.panelModel). */
  show(vm) {
    const { ex } = vm,
      agree = agreement(ex.value, ex.recomputed);
    this.markCell(vm, agree);
    this.body.replaceChildren(
      ...[
        h("div", { class: "explain-head" }, this.title(vm), this.closeButton()),
        ...vm.lines.map((l, i) => h("p", { class: i ? "explain-desc explain-id" : "explain-desc" }, l)),
        this.trail(vm),
        formulaBox(vm),
        checkLine(ex, agree),
        compareLine(vm),
        this.inputs(vm),
        this.actions(),
      ].filter(Boolean),
    );
    this.live.textContent = liveText(vm, agree);
    this.el.hidden = false;
  }

  /** The panel's data-* attributes: the cell shown, its values, and the compared input's value if any. */
  markCell({ ex, compare }, agree) {
    Object.assign(this.el.dataset, {
      id: ex.id,
      row: String(ex.row),
      col: String(ex.col),
      op: ex.op,
      value: String(ex.value),
      recomputed: String(ex.recomputed),
      difference: String(agree.diff),
      given: String(ex.given),
    });
    if (compare)
      Object.assign(this.el.dataset, {
        compareInput: String(compare.input),
        compareValue: String(compare.value ?? "absent"),
      });
    else {
      delete this.el.dataset.compareInput;
      delete this.el.dataset.compareValue;
    }
  }

  title(vm) {
    // the part, as a reader counts it
    const part = vm.part ? h("span", { class: "explain-part" }, `${vm.part} · `) : null;
    return h(
      "h2",
      { class: "explain-title", tabindex: "-1" },
      part,
      richText(vm.title),
      h("span", { class: "explain-index" }, ` [${vm.ex.index.join(", ")}]`),
    );
  }

  closeButton() {
    return h(
      "button",
      {
        type: "button",
        class: "explain-close",
        "aria-label": "Close the explanation (Esc)",
        title: "Close (Esc)",
        onclick: () => this.on.close(true),
      },
      "×",
    );
  }

  /** The path walked so far, each earlier cell a button back to it; none for the first cell. */
  trail(vm) {
    if (vm.trail.length <= 1) return null;
    return h(
      "nav",
      { class: "explain-trail", "aria-label": "The path walked back" },
      h(
        "ol",
        {},
        ...vm.trail.map((c, i) =>
          h(
            "li",
            {},
            i === vm.trailIndex
              ? h("span", { "aria-current": "step" }, richText(c.text))
              : h(
                  "button",
                  {
                    type: "button",
                    data: { id: c.id, row: String(c.row), col: String(c.col) },
                    onclick: () => this.on.back(i),
                  },
                  richText(c.text),
                ),
          ),
        ),
      ),
    );
  }

  /** The input cells by argument, each a button, and the largest terms of a sum; a leaf's note instead. */
  inputs(vm) {
    const { ex } = vm;
    if (!vm.groups.length) return h("p", { class: "explain-leaf" }, vm.leaf);
    return h(
      "div",
      { class: "explain-inputs" },
      h("h3", {}, `Computed from ${ex.inputs.length} input cell${ex.inputs.length === 1 ? "" : "s"}`),
      ...vm.groups.map((g) =>
        h(
          "div",
          { class: "explain-group" },
          h(
            "p",
            { class: "explain-group-head" },
            h("span", { class: "explain-arg" }, argText(g.arg)),
            " = ",
            richText(g.label),
            g.part ? ` · ${g.part}` : "",
            ` · ${g.where}`,
            h("span", { class: "explain-id" }, ` ${g.id}`),
          ),
          h("div", { class: "explain-cells" }, ...g.cells.map((c) => this.cellButton(c, c.text))),
        ),
      ),
      this.largestTerms(vm),
    );
  }

  largestTerms(vm) {
    if (!vm.top.length) return null;
    return h(
      "div",
      { class: "explain-top" },
      h("h3", {}, "Largest terms"),
      h(
        "ol",
        {},
        ...vm.top.map((t) =>
          h(
            "li",
            {},
            ...t.parts.flatMap((p, i) => [
              i ? " · " : "",
              this.cellButton(p, [argText(p.arg), `[${p.index.join(", ")}]`]),
            ]),
            ` = ${fmt(t.value, "sig4")}`,
          ),
        ),
      ),
    );
  }

  actions() {
    return h(
      "div",
      { class: "explain-actions" },
      h("button", { type: "button", class: "explain-copy", onclick: () => this.on.copy() }, "Copy formula as LaTeX"),
      h("button", { type: "button", class: "explain-csv", onclick: () => this.on.csv() }, "CSV of this block"),
    );
  }

  /** The formula as text to copy by hand, when the clipboard is refused. */
  showCopyFallback(text) {
    const box = h("textarea", {
      class: "explain-latex",
      readonly: true,
      rows: "4",
      "aria-label": "The formula as LaTeX: copy it",
    });
    box.value = text;
    this.body.querySelector(".explain-latex")?.remove();
    this.body.querySelector(".explain-actions")?.after(box);
    box.focus();
    box.select();
  }

  flash(button, text) {
    const b = this.body.querySelector(button);
    if (!b) return;
    const was = b.textContent;
    b.textContent = text;
    b.dataset.done = "true";
    setTimeout(() => {
      b.textContent = was;
      delete b.dataset.done;
    }, 1500);
  }
}
