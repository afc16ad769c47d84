// The stage's input: a click or tap on a cell explains it (a pointer that moves less than TAP_PX), a
// hover moves the cursor; O, C, R and N on the document (whole machine, the step's view, replay, numbers on
// the cells); with the stage focused, Tab walks the blocks in reading order, the arrows move the cursor (into
// the neighbouring block at an edge), Home/End, Enter explains, Esc closes the panel or hides the cursor.
const TAP_PX = 6;

const typing = (t) => t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));

/** Binds the stage's pointer and key events. */
export function bindInput(stage) {
  const cv = stage.renderer.domElement,
    pointer = stage.pointer;
  let down = null,
    pointers = 0;
  cv.addEventListener("pointerdown", (e) => {
    pointers++;
    down = pointers === 1 && e.button === 0 ? { x: e.clientX, y: e.clientY } : null;
    stage.el.focus({ preventScroll: true });
  });
  const up = (e) => {
    pointers = Math.max(0, pointers - 1);
    if (e.type === "pointerup" && down && stage.scene && Math.hypot(e.clientX - down.x, e.clientY - down.y) < TAP_PX) {
      const hit = pointer.hitTest(e.clientX, e.clientY); // a click or a tap, not a drag: explain the cell
      if (hit) {
        const t = pointer.cellInfo(hit.id, hit.r, hit.c);
        stage.select(t.id, t.row, t.col, { how: "click" });
      }
    }
    down = null;
  };
  cv.addEventListener("pointerup", up);
  cv.addEventListener("pointercancel", up);
  cv.addEventListener("pointermove", (e) => {
    if (down || !stage.scene || e.pointerType === "touch") return;
    const hit = pointer.hitTest(e.clientX, e.clientY),
      cur = pointer.cursor;
    if (hit && (!cur || hit.id !== cur.id || hit.r !== cur.r || hit.c !== cur.c)) pointer.setCursor(hit);
  });
  stage.el.addEventListener("keydown", (e) => onKey(stage, e));
  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    const act = {
      o: () => stage.showOverview(),
      c: () => stage.returnToStep(),
      r: () => stage.replay(),
      n: () => stage.readouts.toggle(),
    }[e.key.toLowerCase()];
    if (act) {
      act();
      e.preventDefault();
    }
  });
}

function onKey(stage, e) {
  if (!stage.scene) return;
  const pointer = stage.pointer,
    order = [...stage.blockById.keys()],
    cur = pointer.cursor;
  const move = (cell) => {
    e.preventDefault();
    e.stopPropagation();
    pointer.setCursor(cell);
  };
  if (e.key === "Enter" && cur) {
    e.preventDefault();
    const t = pointer.cellInfo(cur.id, cur.r, cur.c);
    stage.select(t.id, t.row, t.col, { how: "click", focusPanel: true });
    return;
  }
  if (e.key === "Escape" && stage.explained) {
    stage.closeExplanation();
    return;
  }
  if (e.key === "Escape") {
    pointer.hide();
    return;
  }
  if (e.key === "Tab") {
    const i = cur ? order.indexOf(cur.id) : -1,
      j = i + (e.shiftKey ? -1 : 1);
    if (j < 0 || j >= order.length) {
      pointer.cursor = null;
      pointer.mesh.visible = false;
      stage.invalidate();
      return;
    } // leave the stage
    return move({ id: order[j], r: 0, c: 0 });
  }
  const d = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] }[e.key];
  if (d) {
    if (!cur) return move({ id: order[0], r: 0, c: 0 });
    const b = stage.blockById.get(cur.id),
      r = cur.r + d[0],
      c = cur.c + d[1];
    if (r >= 0 && r < b.rows && c >= 0 && c < b.cols) return move({ id: cur.id, r, c });
    const next = neighbour(stage.blockById, b, d, cur);
    if (next) return move(next);
    e.preventDefault();
    e.stopPropagation();
  } else if (e.key === "Home" && cur) move({ id: cur.id, r: 0, c: 0 });
  else if (e.key === "End" && cur) {
    const b = stage.blockById.get(cur.id);
    move({ id: cur.id, r: b.rows - 1, c: b.cols - 1 });
  }
}

/** The nearest block beyond an edge of b in direction d (spatially), entering at the near edge. */
function neighbour(blocks, b, [dr, dc], cursor) {
  let best = null,
    bestD = Infinity;
  const cx = b.x + b.w / 2,
    cy = b.y - b.rows / 2;
  for (const o of blocks.values()) {
    if (o === b) continue;
    const ox = o.x + o.w / 2,
      oy = o.y - o.rows / 2;
    const ahead = dc ? (ox - cx) * dc > 0 : dr > 0 ? oy < cy : oy > cy;
    if (!ahead) continue;
    const dist = Math.abs(ox - cx) * (dc ? 1 : 3) + Math.abs(oy - cy) * (dc ? 3 : 1);
    if (dist < bestD) {
      bestD = dist;
      best = o;
    }
  }
  if (!best) return null;
  const r = dr ? (dr > 0 ? 0 : best.rows - 1) : Math.min(cursor.r, best.rows - 1);
  const c = dc ? (dc > 0 ? 0 : best.cols - 1) : Math.min(cursor.c, best.cols - 1);
  return { id: best.id, r, c };
}
