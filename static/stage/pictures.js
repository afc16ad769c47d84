// The handout's pictures (static/js/handout.js): the stage at each step as a reader sees it settled there
// (the camera cut to the step's view, the step's animation at its end), for the trace on the stage, each
// a PNG Blob with the token names and numbers painted over it (export.js), and copies of the cards the
// step shows over the stage (the worked row of steps 6–9, the loss table of step 20), which the PNG does
// not hold: the canvas has the cells only, the cards are text. Meanwhile the overlays are hidden, so that
// each view frames the whole picture instead of keeping clear of them. The step and the cell that were on
// show come back afterwards. Nothing here knows what a step shows: the scene's tour says it.

/** The cards over the stage now, as copies to print beside its picture: open, with no buttons (a card's
 *  title is one), not marked as covering the stage (the views keep clear of the originals only). */
function cards(stage) {
  return [stage.worked.el, stage.lossView.el]
    .filter((el) => !el.hidden)
    .map((el) => {
      const copy = el.cloneNode(true);
      copy.classList.remove("wk-closed");
      copy.removeAttribute("data-covers-stage");
      for (const bt of copy.querySelectorAll("button"))
        bt.replaceWith(
          Object.assign(document.createElement("p"), {
            className: bt.className,
            textContent: bt.textContent.replace(/^[▾▸]\s*/, ""),
          }),
        );
      for (const hidden of copy.querySelectorAll(".wk-hidden")) hidden.classList.remove("wk-hidden");
      return copy;
    });
}

/** [{step, png (Blob), width, height (device px), cards: [Element]}] for the given step numbers, in
 *  order; onStep(step, done) after each. Resolves to null if the trace changed meanwhile.
 *  @param {import('./stage.js').Stage} stage
 *  @param {number[]} steps
 *  @param {(step: number, done: number) => void} [onStep] */
export async function stepPictures(stage, steps, onStep = () => {}) {
  const back = stage.stepNo,
    trace = stage.trace,
    cell = stage.explained && { ...stage.explained };
  const out = [],
    gl = stage.renderer.domElement,
    root = document.documentElement;
  root.classList.add("stage-picturing"); // before the first view is framed: stage.css
  try {
    for (const step of steps) {
      stage.applyStep({ step }, { cut: true, animate: false });
      // the settled frame itself (the readouts placed for it), read before the buffer is cleared
      const canvas = await new Promise((resolve) =>
        stage.view.whenSettled(() => resolve(stage.exports.composed(true))),
      );
      if (stage.trace !== trace) return null;
      const png = new Promise((resolve) => canvas.toBlob(resolve, "image/png")); // encoding while the next step draws
      out.push({ step, png, width: gl.width, height: gl.height, cards: cards(stage) });
      onStep(step, out.length);
    }
    for (const p of out) p.png = await p.png;
  } finally {
    root.classList.remove("stage-picturing");
    stage.applyStep({ step: back }, { cut: true, animate: false });
    if (cell && stage.trace === trace) stage.select(cell.id, cell.row, cell.col, { how: "link" });
  }
  return out;
}
