// Readouts: what the reader can read off the stage without the mouse (and in a screenshot): the token
// names of the step's subject's rows and columns (axisnames.js) and the values printed on its cells
// (cellvalues.js), in one screen-space layer of DOM text placed after every frame, like the switches;
// where the view frames a window of wide blocks, only its columns, and its label (windowed.js).
// A button with the stage's tools and the key N turn the numbers off and on. Nothing here knows the
// model: the axes, their words and the subject come from the scene.
import { bands, placeBand, NAME_FONT } from "./axisnames.js";
import { blockValues, CONDENSED } from "./cellvalues.js";
import { cellRects, projector, labelRects, overlayRects, shownRect } from "./screenboxes.js";
import { drawWindowLabel, placeWindowLabel, LABEL_FONT } from "./windowed.js";
import { placeHeadTags, headElement, paintHeadTags } from "./headnames.js";

const PHONE_WIDTH = 600,
  MIN_DESKTOP = 11,
  MIN_PHONE = 9;
const NUMBER_FONT = '600 {px}px "Inter", "Helvetica Neue", Arial, sans-serif'; // as stage.css's .readout-value

export class Readouts {
  constructor(stage) {
    this.stage = stage;
    this.on = true;
    this.values = new Map();
    this.valuesOf = null;
    this.el = Object.assign(document.createElement("div"), { className: "stage-readouts" });
    this.el.setAttribute("aria-hidden", "true"); // the inspector and the CSV say the same in words
    this.names = this.el.appendChild(document.createElement("div"));
    this.numbers = this.el.appendChild(document.createElement("div"));
    this.heads = this.el.appendChild(document.createElement("div")); // heads whose own label the view leaves out
    this.windowLabel = this.el.appendChild(
      Object.assign(document.createElement("span"), { className: "readout-window", hidden: true }),
    );
    this.button = Object.assign(document.createElement("button"), {
      type: "button",
      className: "stage-numbers",
      textContent: "Numbers",
    });
    this.button.addEventListener("click", () => this.toggle());
    stage.exports.tools.prepend(this.button);
    stage.el.append(this.el);
    this.toggle(true);
  }

  /** Numbers on the cells on or off (no argument: the other way). */
  toggle(on = !this.on) {
    this.on = on;
    this.button.setAttribute("aria-pressed", String(on));
    this.button.title = `${on ? "Hide" : "Print"} the values on the cells (N)`;
    this.button.setAttribute("aria-label", `Numbers on the cells: ${on ? "shown" : "hidden"}. ${this.button.title}`);
    this.numbers.hidden = !on;
    this.stage.invalidate();
  }

  /** The values a block draws now (compare mode: the differences), kept until the trace or the pin changes. */
  blockValues(b) {
    const s = this.stage,
      key = [s.trace, s.comparing, s.compareTrace];
    if (!this.valuesOf || this.valuesOf.some((k, i) => k !== key[i])) {
      this.values.clear();
      this.valuesOf = key;
    }
    if (!this.values.has(b.id)) this.values.set(b.id, s.compare.values(b, s.tensors));
    return this.values.get(b.id);
  }

  /** After every frame: the names and the numbers where the camera shows the subject now. */
  place() {
    const s = this.stage,
      W = s.el.clientWidth,
      H = s.el.clientHeight;
    // a phone frames a part
    const subject = (s.tour.framed || s.step?.subject || []).map((id) => s.blockById.get(id)).filter(Boolean);
    if (!s.scene || !W || !subject.length || !s.decor?.visible) {
      this.show(this.names, []);
      this.show(this.numbers, []);
      this.show(this.heads, []);
      drawWindowLabel(this.windowLabel, null);
      return;
    }
    const px = projector(s),
      minPx = Math.max(W < PHONE_WIDTH ? MIN_PHONE : MIN_DESKTOP, s.textFloor || 0), // presenter mode's floor
      gap = s.scene.cell.head_gap;
    const windowed = new Set(s.windowed || []),
      win = windowed.size ? s.tour.framedWindow : null; // a window of wide blocks
    const cols = (b) => (win && windowed.has(b.id) ? win.cols : null);
    const rects = subject.map((b) => shownRect(px, b, cols(b), gap)),
      own = new Set(subject.map((b) => b.id));
    // names and tags keep off every other block's cells in view too (the scores under step 9's weights, a
    // neighbouring head) where the view leaves room for that; where it does not, only off the subject's
    const others = cellRects(s).filter((r) => !own.has(r.id));
    const obstacles = [...labelRects(s), ...overlayRects(s, this.el), ...rects];
    const label =
      win
      && placeWindowLabel(
        win.label,
        rects.reduce((a, r) => (r.y0 < a.y0 ? r : a)),
        obstacles,
        W,
        H,
      );
    drawWindowLabel(this.windowLabel, label);
    if (label) obstacles.push(label.rect);
    const all = bands(s.scene, subject, { windowed, cols: win?.cols, lit: new Set(s.step?.lit || []) });
    const names = placeNames(all, px, gap, obstacles, others, W, H, minPx);
    this.show(this.names, names, nameElement);
    const heads = placeHeadTags(s, px, cols, obstacles, W, H, minPx, others); // heads named: their labels, else tags
    this.show(this.heads, heads, headElement);
    const numbers = [];
    if (this.on) {
      for (const b of subject) {
        const got = blockValues(s, b, this.blockValues(b), px);
        const [c0, c1] = cols(b) || [0, Infinity];
        // an open exercise's cells (veiled: tensor coordinates) print nothing until it is answered
        const veiled = (c) => (b.transposed ? s.cells.isVeiled(b.id, c.c, c.r) : s.cells.isVeiled(b.id, c.r, c.c));
        for (const c of got?.cells || [])
          if (c.x >= 0 && c.x <= W && c.y >= 0 && c.y <= H && c.c >= c0 && c.c <= c1 && !veiled(c))
            numbers.push({ ...c, size: got.size, id: b.id });
      }
    }
    this.show(this.numbers, numbers, numberElement);
    this.shown = { names, numbers: this.on ? numbers : [], label, heads };
  }

  /** The names and numbers shown now, drawn into a 2-D canvas of the stage at k device pixels per CSS px
   *  (the PNG export: what the reader sees, names and numbers included). */
  paint(ctx, k) {
    const { names = [], numbers = [], label, heads = [] } = this.shown || {};
    ctx.save();
    ctx.lineJoin = "round";
    ctx.fillStyle = "#ece8df";
    ctx.strokeStyle = "rgba(16, 18, 22, 0.9)";
    if (label) {
      // the window's label, as stage.css draws it
      ctx.save();
      ctx.font = LABEL_FONT.replace("{px}", String(label.size * k));
      ctx.fillStyle = "#f1c27d";
      ctx.lineWidth = 3 * k;
      ctx.textAlign = "right";
      ctx.textBaseline = "middle";
      const y = ((label.rect.y0 + label.rect.y1) / 2) * k,
        x = (label.rect.x1 - 2) * k;
      ctx.strokeText(label.text, x, y);
      ctx.fillText(label.text, x, y);
      ctx.restore();
    }
    paintHeadTags(ctx, k, heads);
    for (const n of names) {
      const r = n.rect,
        upright = n.axis === "col";
      ctx.save();
      ctx.font = NAME_FONT.replace("{px}", String(n.size * k));
      ctx.lineWidth = 3 * k;
      ctx.textBaseline = "middle";
      if (upright) {
        const down = n.side === "before";
        ctx.translate(((r.x0 + r.x1) / 2) * k, (down ? r.y0 + 2 : r.y1 - 2) * k);
        ctx.rotate(down ? Math.PI / 2 : -Math.PI / 2);
        ctx.textAlign = "left";
      } else {
        ctx.textAlign = n.side === "before" ? "right" : "left";
        ctx.translate((n.side === "before" ? r.x1 - 2 : r.x0 + 2) * k, ((r.y0 + r.y1) / 2) * k);
      }
      ctx.strokeText(n.word, 0, 0);
      ctx.fillText(n.word, 0, 0);
      ctx.restore();
    }
    ctx.fillStyle = "#fff";
    ctx.strokeStyle = "rgba(0, 0, 0, 0.85)";
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    for (const c of numbers) {
      ctx.save();
      ctx.font = NUMBER_FONT.replace("{px}", String(c.size * k));
      ctx.lineWidth = 2.5 * k;
      ctx.translate(c.x * k, c.y * k);
      ctx.scale(CONDENSED, 1);
      ctx.strokeText(c.text, 0, 0);
      ctx.fillText(c.text, 0, 0);
      ctx.restore();
    }
    ctx.restore();
  }

  /** What the names keep clear of, as place() saw it last: the labels' and the overlays' boxes (stage px). */
  obstacles() {
    return { labels: labelRects(this.stage), overlays: overlayRects(this.stage, this.el) };
  }

  /** The pool of a layer's elements: one per item, each drawn by `draw`, the rest hidden. */
  show(layer, items, draw) {
    const els = layer.children;
    while (els.length < items.length) layer.append(document.createElement("span"));
    items.forEach((it, i) => {
      if (els[i].hidden) els[i].hidden = false;
      draw(els[i], it);
    });
    for (let i = items.length; i < els.length; i++) if (!els[i].hidden) els[i].hidden = true;
  }
}

function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** Writes what changed only (a frame moves hundreds of these; unchanged writes still cost style work). */
function update(el, key, write) {
  if (el.drawn !== key) {
    el.drawn = key;
    write();
  }
}

/** Each band's names, clear of the obstacles and of the other blocks' cells where they fit so, else clear of the
 *  obstacles alone (each name pushed to `obstacles`): [{index, word, rect, axis, side, size, ids}]. */
function placeNames(all, px, gap, obstacles, others, W, H, minPx) {
  const names = [];
  for (const band of all) {
    const placed =
      placeBand(band, px, gap, obstacles, W, H, minPx, others)
      || placeBand({ ...band, mates: [] }, px, gap, obstacles, W, H, minPx);
    if (!placed) continue;
    const ids = band.blocks.map((b) => b.id).join(" ");
    for (const n of placed.names) {
      names.push({ ...n, axis: band.axis, side: placed.side, size: placed.size, ids });
      obstacles.push(n.rect);
    }
  }
  return names;
}

/** A token name in its rectangle: rows read left to right, columns upright (reading away from the block). */
function nameElement(el, n) {
  const r = n.rect,
    w = r.x1 - r.x0,
    h = r.y1 - r.y0,
    upright = n.axis === "col";
  update(el, [n.axis, n.side, n.index, n.word, n.ids, n.size, r.x0, r.y0, w, h].join("|"), () => {
    el.className = `readout-name readout-${n.axis}${upright ? ` readout-${n.side === "before" ? "down" : "up"}` : ""}`;
    setText(el, n.word);
    Object.assign(el.dataset, { axis: n.axis, index: String(n.index), word: n.word, blocks: n.ids });
    Object.assign(el.style, {
      font: NAME_FONT.replace("{px}", n.size),
      lineHeight: `${upright ? w : h}px`,
      width: `${w}px`,
      height: `${h}px`,
      textAlign: upright ? "start" : n.side === "before" ? "right" : "left",
      transform: `translate(${r.x0}px, ${r.y0}px)${upright && n.side !== "before" ? " rotate(180deg)" : ""}`,
    });
  });
}

/** A value on its cell, centred, a little condensed so that four characters fit. */
function numberElement(el, c) {
  update(el, [c.id, c.r, c.c, c.text, c.size, c.x, c.y].join("|"), () => {
    el.className = "readout-value";
    setText(el, c.text);
    Object.assign(el.dataset, { block: c.id, r: String(c.r), c: String(c.c) });
    Object.assign(el.style, {
      fontSize: `${c.size}px`,
      transform: `translate(${c.x}px, ${c.y}px) translate(-50%, -50%) scaleX(${CONDENSED})`,
    });
  });
}
