// Typeset the formulas the server left as \( … \) and \[ … \] (Python-Markdown's arithmatex),
// with the local KaTeX. Classic deferred scripts (katex, auto-render) have run before modules.
// A display formula wider than its column (the long ones are broken into lines in content/steps/*.md;
// what is still too wide at a narrow column) is scaled down to fit: KaTeX sizes everything in em, so
// a smaller font size shrinks it evenly, and the column never scrolls sideways.
const options = {
  delimiters: [
    { left: "\\[", right: "\\]", display: true },
    { left: "\\(", right: "\\)", display: false },
  ],
  throwOnError: false,
};
const MIN_SCALE = 0.5; // under it a formula would be too small to read: it scrolls instead

/** Each display formula at its natural size, then shrunk by the share its column lacks. */
export function fitFormulas(root = document) {
  const boxes = [...root.querySelectorAll(".arithmatex")]
    .map((box) => /** @type {[Element, HTMLElement | null]} */ ([box, box.querySelector(".katex-display")]))
    .filter(([, k]) => k);
  for (const [, k] of boxes) k.style.fontSize = "";
  const natural = boxes.map(([box]) => [box.clientWidth, box.scrollWidth]); // all reads before any write
  boxes.forEach(([, k], i) => {
    const [room, width] = natural[i];
    if (room > 0 && width > room + 1)
      k.style.fontSize = `${Math.round(Math.max(MIN_SCALE, (room - 2) / width) * 10000) / 100}%`;
  });
}

if (window.renderMathInElement) {
  for (const el of document.querySelectorAll(".arithmatex")) window.renderMathInElement(el, options);
  let width = 0,
    pending = 0;
  const soon = () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => fitFormulas());
  };
  fitFormulas();
  document.fonts?.ready.then(soon);
  const column = document.getElementById("article") || document.body;
  new ResizeObserver(() => {
    if (column.clientWidth !== width) {
      width = column.clientWidth;
      soon();
    }
  }).observe(column);
}
