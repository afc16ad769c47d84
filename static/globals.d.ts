// What the page's JavaScript finds on `window` and `document` without importing it, declared once for
// TypeScript's checker (tsconfig.json; nothing here runs or is bundled): the page's own objects, typed in
// types.js, and the libraries the templates load as classic scripts. The page's state is not here: it is
// js/store.js's stores, imported.

type PageState = import("./types.js").PageState;
type StageApi = import("./types.js").StageApi;

interface Window {
  /** the article's or the embed view's state, read-only (js/store.js pageView), for tests and the console;
   *  undefined on a page without them */
  anatomy: PageState;
  /** the stage (stage/main.js) */
  anatomyStage: StageApi;
  /** tests draw a figure without scrolling to it (js/figures.js) */
  anatomyFigures: { draw: (figure: Element) => unknown };
  /** tests choose a word of the attention-by-word view (js/attention-words.js) */
  anatomyWords: { choose: (...args: any[]) => unknown; chosen: () => unknown };
  /** tests check the scrolled regions' names (js/scroll-regions.js) */
  anatomyScrollRegions: { check: () => unknown };
  /** Chart.js, KaTeX, its auto-render and Swagger UI: the vendor scripts the templates load (untyped here) */
  Chart: any;
  katex: any;
  renderMathInElement: (element: Element, options?: Record<string, any>) => void;
  SwaggerUIBundle: any;
  /** the API page's Swagger UI (js/docs.js), for the console */
  ui: any;
}
