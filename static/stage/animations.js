// The steps' animations, by the article's names. Each is fn(stage, cut): with cut = true (reduced
// motion, or restoring a step) it jumps to the end state; otherwise it registers a tween on the
// stage's on-demand frame loop. Uniforms do the work: uFocus lights a row/column range, uReveal
// shows rows computed so far, uDrop draws a dropout mask, uGlow pulses, connectors draw partially.

const ids = (stage, re) => [...stage.blocks.keys()].filter(id => re.test(id));
const focus = (cb, r0, r1, c0, c1) => { cb.u.uFocus.value.set(r0, r1, c0, c1); cb.u.uFocusOn.value = 1; };

function play(stage, ms, fn, cut, done) {
  if (cut) { fn(1); done?.(); stage.invalidate(); return; }
  stage.anim = stage.tween(ms, fn, done, { ease: false });
}

export const ANIMATIONS = {
  none: () => {},

  // Step 6: one cell of Q = row 1 of X against column 5 of W^Q (plus b^Q column 5).
  'one-cell': (stage, cut) => {
    const X = stage.block('src.x0'), W = stage.block('enc.0.self.W_q'), b = stage.block('enc.0.self.b_q'), Q = stage.block('enc.0.self.q');
    if (!X || !W || !Q) return;
    const R = 1, C = 5;
    focus(X, R, R, 0, 1e9); focus(W, 0, 1e9, C, C); if (b) focus(b, 0, 0, C, C); focus(Q, R, R, C, C);
    const prev = Q.mesh.geometry.getAttribute('aPrev'), val = Q.mesh.geometry.getAttribute('aVal');
    play(stage, 1600, k => {
      // first the row and column light up, then the cell rises to its value
      const e = Math.max(0, (k - 0.35) / 0.65);
      Q.u.uT.value = e; if (k === 0 || !prev.__zeroed) { prev.array.fill(0); prev.needsUpdate = true; prev.__zeroed = true; }
      X.u.uGlow.value = W.u.uGlow.value = Math.sin(Math.min(k, 0.35) / 0.35 * Math.PI) * 0.8;
    }, cut, () => { prev.array.set(val.array); prev.needsUpdate = true; prev.__zeroed = false; Q.u.uT.value = 1; stage.inspect('enc.0.self.q', R, C); });
  },

  // Step 9: each head's softmax row sweeps down while its output fills row by row.
  sweep: (stage, cut) => {
    const heads = ids(stage, /^enc\.0\.self\.h\d\.weights$/).map(id => [stage.block(id), stage.block(id.replace('.weights', '.out'))]);
    const n = heads[0]?.[0].block.rows || 1;
    play(stage, 700 * n, k => {
      const r = Math.min(n - 1, Math.floor(k * n));
      for (const [w, o] of heads) {
        if (k >= 1) { w.u.uFocusOn.value = 0; o.u.uReveal.value = 1e9; continue; }
        focus(w, r, r, 0, 1e9); o.u.uReveal.value = r + 1;
      }
    }, cut);
  },

  // Step 11: the violet rail carries X past the sub-layer; the sum and the LayerNorm fill row by row.
  residual: (stage, cut) => {
    const rail = stage.connectors?.getObjectByName('rail');
    const sum = stage.block('enc.0.self.sum'), ln = stage.block('enc.0.self.ln');
    const n = sum?.block.rows || 1;
    play(stage, 1800, k => {
      if (rail) rail.material.opacity = 0.5 + 0.5 * Math.abs(Math.sin(k * Math.PI * 3));
      if (sum) sum.u.uReveal.value = k >= 1 ? 1e9 : Math.floor(k * 2 * n);
      if (ln) ln.u.uReveal.value = k >= 1 ? 1e9 : Math.floor(Math.max(0, k * 2 - 1) * n);
    }, cut, () => { if (rail) rail.material.opacity = 0.95; });
  },

  // Step 15: the masked (later) positions pulse in dark red, the scores fill row by row.
  mask: (stage, cut) => {
    const masked = ids(stage, /^dec\.0\.self\.h\d\.masked$/).concat(['dec.mask']).map(id => stage.block(id)).filter(Boolean);
    const n = masked[0]?.block.rows || 1;
    play(stage, 2000, k => {
      for (const cb of masked) { cb.u.uGlow.value = k >= 1 ? 0 : Math.abs(Math.sin(k * Math.PI * 4)); cb.u.uReveal.value = k >= 1 ? 1e9 : Math.floor(k * n) + 1; }
    }, cut);
  },

  // Step 16: the orange arcs draw out from the memory; cross-attention weights fill in.
  arcs: (stage, cut) => {
    const arcs = stage.connectors?.getObjectByName('arc');
    const w = ids(stage, /^dec\.\d\.cross\.h\d\.weights$/).map(id => stage.block(id));
    const n = w[0]?.block.rows || 1;
    play(stage, 1800, k => {
      if (arcs) arcs.geometry.setDrawRange(0, k >= 1 ? Infinity : Math.floor(arcs.userData.vertexCount * Math.min(1, k * 1.6) / 2) * 2);
      for (const cb of w) cb.u.uReveal.value = k >= 1 ? 1e9 : Math.floor(Math.max(0, k * 2 - 1) * n);
    }, cut);
  },

  // Step 19: the decoder runs token by token; each chosen token travels the yellow loop back in.
  loop: (stage, cut) => {
    const rowsBlocks = [...stage.blocks.values()].filter(cb => !cb.block.param && /^(tgt\.|dec\.|out\.)/.test(cb.block.id) && cb.block.id !== 'out.ET');
    const loopLine = stage.connectors?.getObjectByName('loop');
    const m = stage.trace?.target_tokens?.length || 1;
    play(stage, 900 * m, k => {
      const t = Math.min(m, Math.floor(k * m) + 1);
      for (const cb of rowsBlocks) {
        // mask columns are positions too: reveal both rows and (for square decoder blocks) columns
        cb.u.uReveal.value = k >= 1 ? 1e9 : t;
      }
      if (loopLine) loopLine.material.opacity = k >= 1 ? 0.95 : 0.35 + 0.65 * Math.abs(Math.sin(k * m * Math.PI));
    }, cut);
  },

  // Step 22: a dropout mask (p = 0.1) on the first attention output: redrawn a few times, then kept.
  dropout: (stage, cut) => {
    const cb = stage.block('enc.0.self.proj');
    if (!cb) return;
    play(stage, 1600, k => { cb.u.uDrop.value = 1 + Math.min(3, Math.floor(k * 4)); }, cut);
  },

  // Step 25: every parameter block lit (highlight does the dimming); a glow passes over them.
  parameters: (stage, cut) => {
    const params = [...stage.blocks.values()].filter(cb => cb.block.param);
    play(stage, 1400, k => { for (const cb of params) cb.u.uGlow.value = k >= 1 ? 0 : Math.sin(k * Math.PI); }, cut);
  },
};
