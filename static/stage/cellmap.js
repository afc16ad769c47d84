// The one rule between a drawn cell (r, c of a block as the stage lays it) and a tensor element: a
// 2-D tensor drawn transposed swaps row and column; a vector lies in one drawn row or one drawn
// column, its index k given as (0, k) or (k, 0); a scalar is (0, 0); a head slice (scene.slices) is
// drawn inside the block it is cut from, `col_offset` columns in. The rule is its own inverse, so
// the inspector, the data, compare mode, the explanation and the hit test all go through `cellMap`.

/** The same cell in the other convention: drawn (r, c) → tensor (row, col) and back, with the tensor
 *  element's flat index when (a, b) are drawn coordinates. */
export function cellMap(block, a, b) {
  const shape = block.shape,
    flat = flatIndex(block, a, b);
  if (shape.length === 0) return { row: 0, col: 0, flat };
  if (shape.length === 1) return block.rows === 1 ? { row: 0, col: flat, flat } : { row: flat, col: 0, flat };
  const [row, col] = block.transposed ? [b, a] : [a, b];
  return { row, col, flat };
}

/** The tensor element's flat index of drawn cell (r, c), cellMap's `flat` without an object (the stage
 *  reads every cell of every block this way for each new input). */
export function flatIndex(block, r, c) {
  const shape = block.shape;
  if (shape.length === 0) return 0;
  if (shape.length === 1) return Math.max(r, c);
  return block.transposed ? c * shape[1] + r : r * shape[1] + c;
}

/** Tensor coordinates of a drawn cell: {row, col, flat}. */
export const tensorIndex = (block, r, c) => cellMap(block, r, c);

/** {row, col} of a tensor index (an array, rank 0–2) in the same convention (a vector as its block lies). */
export function indexCoords(block, idx) {
  if (idx.length === 2) return { row: idx[0], col: idx[1] };
  if (idx.length === 0) return { row: 0, col: 0 };
  return block && block.rows !== 1 ? { row: idx[0], col: 0 } : { row: 0, col: idx[0] };
}

/** The block a tensor is drawn in: its own, or for a head slice the block it is cut from. */
export function drawnIn(scene, blockById, id) {
  const b = blockById.get(id);
  if (b) return { block: b, slice: null };
  const s = scene?.slices.find((x) => x.id === id);
  return s ? { block: blockById.get(s.of), slice: s } : { block: null, slice: null };
}

/** A trace id (a head slice included) and tensor coordinates → the drawn cell {id, r, c}, or null. */
export function drawnCell(scene, blockById, id, row, col) {
  const s = scene?.slices.find((x) => x.id === id);
  if (s) return drawnCell(scene, blockById, s.of, row, col + s.col_offset);
  const b = blockById.get(id);
  if (!b) return null;
  const { row: r, col: c } = cellMap(b, row, col);
  return { id, r, c };
}

/** The head slice a tensor cell (row, col) of a block falls in, as "slice[row, col]", or undefined. */
export function sliceAlias(scene, block, row, col) {
  const s = scene.slices.find((x) => x.of === block.id && col >= x.col_offset && col < x.col_offset + x.cols);
  return s ? `${s.name ? `${s.name}: ` : ""}${s.id}[${row}, ${col - s.col_offset}]` : undefined;
}
