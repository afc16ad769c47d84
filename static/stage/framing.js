// How a step's subject sits on the stage's screen, for the tour (./tour.js framing()) and the tests
// (tests/stage/test_framing.py through window.anatomyStage.framing): the blocks' box as shares of the stage, and the
// median cell's size in CSS pixels.
import { projector, shownRect } from "./screenboxes.js";

/** How the given blocks sit on screen: their bounding box (clipped) as shares of the stage, and the
 *  median cell's size in CSS pixels; of a window of wide blocks, only the columns it shows. */
export function framing(tour, ids) {
  const s = tour.stage,
    rect = s.renderer.domElement.getBoundingClientRect(),
    W = rect.width,
    H = rect.height;
  const onStage = projector(s),
    px = (v) => onStage(v.x, v.y, v.z);
  let x0 = Infinity,
    x1 = -Infinity,
    y0 = Infinity,
    y1 = -Infinity;
  const sizes = [];
  for (const id of ids) {
    const b = s.blockById.get(id);
    if (!b) continue;
    const win = s.windowed?.includes(id) ? tour.framedWindow.cols : null,
      gap = s.scene.cell.head_gap; // a window: its columns
    const r = shownRect(onStage, b, win, gap);
    x0 = Math.min(x0, r.x0);
    x1 = Math.max(x1, r.x1);
    y0 = Math.min(y0, r.y0);
    y1 = Math.max(y1, r.y1);
    sizes.push([cellPx(s, b, px), b.rows * b.cols]);
  }
  sizes.sort((a, b) => a[0] - b[0]);
  const total = sizes.reduce((sum, [, n]) => sum + n, 0);
  let acc = 0,
    median = 0;
  for (const [size, n] of sizes) {
    acc += n;
    if (acc >= total / 2) {
      median = size;
      break;
    }
  }
  const w = Math.max(0, Math.min(W, x1) - Math.max(0, x0)),
    h = Math.max(0, Math.min(H, y1) - Math.max(0, y0));
  const cover = tour.covered();
  return {
    stageWidth: W,
    stageHeight: H,
    covered: cover.top + cover.bottom,
    areaShare: (w * h) / (W * H),
    widthShare: w / W,
    heightShare: h / H,
    medianCellPx: median,
    clipped: x0 < -1 || y0 < -1 || x1 > W + 1 || y1 > H + 1,
  };
}

/** A cell's on-screen size at a block's middle: the geometric mean of its projected pitch. */
function cellPx(s, b, px) {
  const centre = (r, c) => px(s.pointer.cellCentre(b, r, c));
  const r = Math.floor(b.rows / 2),
    c = Math.floor(b.cols / 2),
    c2 = c + 1 < b.cols ? c + 1 : c - 1,
    r2 = r + 1 < b.rows ? r + 1 : r - 1;
  const p = centre(r, c),
    pc = c2 >= 0 ? centre(r, c2) : null,
    pr = r2 >= 0 ? centre(r2, c) : null;
  const dx = pc ? Math.hypot(pc[0] - p[0], pc[1] - p[1]) : null,
    dy = pr ? Math.hypot(pr[0] - p[0], pr[1] - p[1]) : null;
  return dx && dy ? Math.sqrt(dx * dy) : dx || dy || 0;
}
