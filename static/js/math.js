// Typeset the formulas the server left as \( … \) and \[ … \] (Python-Markdown's arithmatex),
// with the local KaTeX. Classic deferred scripts (katex, auto-render) have run before modules.
const options = {
  delimiters: [
    { left: "\\[", right: "\\]", display: true },
    { left: "\\(", right: "\\)", display: false },
  ],
  throwOnError: false,
};

if (window.renderMathInElement) {
  for (const el of document.querySelectorAll(".arithmatex")) window.renderMathInElement(el, options);
}
