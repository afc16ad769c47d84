// What the page's JavaScript finds on `window` and `document` without importing it, declared once for
// TypeScript's checker (tsconfig.json; nothing here runs or is bundled): the page's own objects, typed in
// types.js, the libraries the templates load as classic scripts, and the page's events with their details.

type PageState = import("./types.js").PageState;
type StageApi = import("./types.js").StageApi;
type Trace = import("./types.js").Trace;
type CellAddress = import("./types.js").CellAddress;

interface Window {
  /** the article's or the embed view's state (js/page/state.js, js/embed.js); undefined on a page without them */
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

interface DocumentEventMap {
  "anatomy:trace": CustomEvent<Trace>;
  "anatomy:step": CustomEvent<import("./types.js").StepDetail>;
  "anatomy:compare": CustomEvent<Trace | null>;
  "anatomy:select": CustomEvent<CellAddress>;
  "anatomy:explain": CustomEvent<CellAddress | null>;
  "anatomy:checkpoint": CustomEvent<{ checkpoint: string | null }>;
  "anatomy:source": CustomEvent<{ source: string }>;
  "anatomy:ablate": CustomEvent<{ ablation: string[] }>;
}
