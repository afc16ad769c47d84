// Where each block's cells stand in the one instanced mesh (cells.js): each column's x (a head's columns
// followed by a gap), the instance arrays written for a layout, and what decides that a layout is the same.

export const NEG_INF = -1e30; // a masked score (−∞; null in the trace)

/** Each column's x in the world, once per block (a block's fields are slow to read per cell). */
function columnsX(b, headGap) {
  const xs = new Float64Array(b.cols);
  for (let c = 0; c < b.cols; c++) xs[c] = b.x + colX(b, c, headGap) + 0.5;
  return xs;
}

/** x of column c in a block's local frame: one gap of `headGap` after every `gapEvery` columns. */
export function colX(block, c, headGap) {
  return c + (block.gap_every ? Math.floor(c / block.gap_every) * headGap : 0);
}

/** The inverse: the column under local x, or −1 in a gap or outside. */
export function colAt(block, lx, headGap) {
  if (lx < 0 || lx >= block.w) return -1;
  if (!block.gap_every) return Math.floor(lx);
  const period = block.gap_every + headGap,
    slice = Math.floor(lx / period),
    within = lx - slice * period;
  if (within >= block.gap_every) return -1;
  const c = slice * block.gap_every + Math.floor(within);
  return c < block.cols ? c : -1;
}

/** Writes block `b`'s cells (block row i) into the instance arrays from instance `k` on, each with its
 *  position and value now and before (the previous layout `prev`: its cell at the same row and column, or
 *  zero where it had none); returns the next instance. */
export function layCells(b, i, vs, prev, k, headGap, { pos, val, rc, blk }) {
  const rows = b.rows,
    cols = b.cols;
  const xs = columnsX(b, headGap),
    pb = prev?.block,
    pRows = pb ? pb.rows : 0,
    pCols = pb ? pb.cols : 0;
  const pxs = pb ? columnsX(pb, headGap) : null,
    drawnBefore = prev ? prev.drawn : null;
  for (let r = 0; r < rows; r++) {
    const y = b.y - r - 0.5,
      py0 = pb ? pb.y - r - 0.5 : 0;
    for (let c = 0; c < cols; c++, k++) {
      const x = xs[c],
        v = vs[r * cols + c];
      const nv = v === -Infinity ? NEG_INF : v;
      let px = x,
        py = y,
        pv = nv;
      if (drawnBefore) {
        if (r < pRows && c < pCols) {
          px = pxs[c];
          py = py0;
          const o = drawnBefore[r * pCols + c];
          pv = o === -Infinity ? NEG_INF : o;
        } else pv = 0;
      }
      pos[4 * k] = x;
      pos[4 * k + 1] = y;
      pos[4 * k + 2] = px;
      pos[4 * k + 3] = py;
      val[2 * k] = nv;
      val[2 * k + 1] = pv;
      rc[2 * k] = r;
      rc[2 * k + 1] = c;
      blk[k] = i;
    }
  }
  return k;
}

/** What decides where a block's cells stand (and so which instance is which cell). */
export const layoutOf = (b) =>
  `${b.id} ${b.rows} ${b.cols} ${b.x} ${b.y} ${b.kind} ${b.transposed ? 1 : 0} ${b.gap_every || 0}`;
