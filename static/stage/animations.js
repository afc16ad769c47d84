// The steps' animations, by name; the scene names the blocks each one moves (step.animation =
// {name, …targets}). Each is fn(stage, targets, cut): with cut = true (reduced motion, or restoring a
// step) it jumps to its end state; otherwise it runs as a tween on the stage's on-demand frame loop.
// They change block state only (focus, reveal, glow, dropout, value time): the GPU does the drawing.
import { restingOpacity } from "./connectors.js";

const ALL = 1e9;

function play(stage, ms, fn, cut, done) {
  if (cut) {
    fn(1);
    done?.();
    stage.invalidate();
    return;
  }
  stage.anim = stage.tween(ms, fn, done, { ease: false });
}

export const ANIMATIONS = {
  none: () => {},
  // steps 7 and 8: the worked row's keys in turn, its scores and weights (worked.js lights them, with its card)
  "worked-scores": () => {},
  "worked-scale": () => {},

  // One cell of the output first: its row of X and column of W (and of b) light up, then the cell rises (no
  // inspector opens over it: it would cover W and the cell's neighbours; the worked card prints the row).
  "one-cell": (stage, a, cut) => {
    const f = stage.cells;
    if (!f.has(a.x) || !f.has(a.w) || !f.has(a.out)) return;
    f.set(a.x, { focus: [a.row, a.row, 0, ALL] });
    f.set(a.w, { focus: [0, ALL, a.col, a.col] });
    f.set(a.b, { focus: [0, 0, a.col, a.col] });
    f.set(a.out, { focus: [a.row, a.row, a.col, a.col], fromZero: true });
    play(
      stage,
      1600,
      (k) => {
        const e = Math.max(0, (k - 0.35) / 0.65),
          g = Math.sin((Math.min(k, 0.35) / 0.35) * Math.PI) * 0.8;
        f.set(a.out, { t: e });
        f.set(a.x, { glow: g });
        f.set(a.w, { glow: g });
      },
      cut,
      () => f.set(a.out, { t: 1, fromZero: false }),
    );
  },

  // Each head's softmax row sweeps down while its output fills row by row; at the end the cells the
  // scene names (one rectangle per block: the worked row) stay framed, the rest of those blocks dimmed.
  sweep: (stage, a, cut) => {
    const f = stage.cells,
      n = f.entry(a.pairs[0]?.[0])?.block.rows || 1;
    play(
      stage,
      700 * n,
      (k) => {
        const r = Math.min(n - 1, Math.floor(k * n));
        for (const [w, o] of a.pairs) {
          if (k >= 1) {
            f.set(w, { focus: null });
            f.set(o, { reveal: ALL });
            continue;
          }
          f.set(w, { focus: [r, r, 0, ALL] });
          f.set(o, { reveal: r + 1 });
        }
        if (k >= 1) for (const [id, rect] of a.rects || []) if (f.has(id)) f.set(id, { focus: rect });
      },
      cut,
    );
  },

  // The violet rail carries X past the sub-layer; the sum and the LayerNorm fill row by row.
  residual: (stage, a, cut) => {
    const f = stage.cells,
      rail = stage.connector("rail"),
      n = f.entry(a.sum)?.block.rows || 1;
    play(
      stage,
      1800,
      (k) => {
        if (rail) rail.material.opacity = 0.5 + 0.5 * Math.abs(Math.sin(k * Math.PI * 3));
        f.set(a.sum, { reveal: k >= 1 ? ALL : Math.floor(k * 2 * n) });
        f.set(a.ln, { reveal: k >= 1 ? ALL : Math.floor(Math.max(0, k * 2 - 1) * n) });
      },
      cut,
      () => {
        if (rail) rail.material.opacity = restingOpacity("rail");
      },
    );
  },

  // The masked (later) positions pulse, the scores fill row by row.
  mask: (stage, a, cut) => {
    const f = stage.cells,
      n = f.entry(a.blocks[0])?.block.rows || 1;
    play(
      stage,
      2000,
      (k) => {
        for (const id of a.blocks)
          f.set(id, {
            glow: k >= 1 ? 0 : Math.abs(Math.sin(k * Math.PI * 4)),
            reveal: k >= 1 ? ALL : Math.floor(k * n) + 1,
          });
      },
      cut,
    );
  },

  // The orange arcs draw out from the memory; the cross-attention weights fill in.
  arcs: (stage, a, cut) => {
    const f = stage.cells,
      arcs = stage.connector("arc"),
      n = f.entry(a.blocks[0])?.block.rows || 1;
    play(
      stage,
      1800,
      (k) => {
        if (arcs)
          arcs.geometry.setDrawRange(
            0,
            k >= 1 ? Infinity : Math.floor((arcs.userData.vertexCount * Math.min(1, k * 1.6)) / 2) * 2,
          );
        for (const id of a.blocks) f.set(id, { reveal: k >= 1 ? ALL : Math.floor(Math.max(0, k * 2 - 1) * n) });
      },
      cut,
    );
  },

  // The decoder runs token by token; each chosen token travels the yellow loop back in.
  loop: (stage, a, cut) => {
    const f = stage.cells,
      loop = stage.connector("loop"),
      m = stage.scene.axes.target.length || 1;
    play(
      stage,
      900 * m,
      (k) => {
        const t = Math.min(m, Math.floor(k * m) + 1);
        for (const id of a.blocks) f.set(id, { reveal: k >= 1 ? ALL : t });
        stage.marks?.reveal(k >= 1 ? ALL : t); // a ring only on a row already computed
        if (loop)
          loop.material.opacity = k >= 1 ? restingOpacity("loop") : 0.35 + 0.65 * Math.abs(Math.sin(k * m * Math.PI));
      },
      cut,
    );
  },

  // A dropout mask (p = 0.1) on one block: redrawn a few times, then kept.
  dropout: (stage, a, cut) => {
    play(stage, 1600, (k) => stage.cells.set(a.block, { drop: 1 + Math.min(3, Math.floor(k * 4)) }), cut);
  },

  // Every parameter block glows once (the step's highlight dims everything computed).
  parameters: (stage, a, cut) => {
    play(
      stage,
      1400,
      (k) => {
        for (const id of a.blocks) stage.cells.set(id, { glow: k >= 1 ? 0 : Math.sin(k * Math.PI) });
      },
      cut,
    );
  },
};
