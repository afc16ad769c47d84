// What the page holds, as values others follow (Transformer Explainer's stores, src/store/index.ts): get, set
// and subscribe, so that no module reaches into another's variables, a global or a DOM event for them. No DOM
// here: the article (js/page/), the embed view (embed.js), the figures and the stage (stage/main.js) share the
// one instance of each store (the bundle's shared chunk keeps a module single).
//
//   store(initial) → { get(), set(value), subscribe(listener) → unsubscribe, follow(listener) → unsubscribe }
//
// set() tells every listener, in the order they subscribed, even when the value is the one held (a trace
// shown again is shown again); subscribe() does not call the listener with the value held now: follow() does
// (unless it is null), for a module that loads after the value was set (the stage's first trace).

/** @template T  @typedef {{get: () => T, set: (value: T) => void, subscribe: (listener: (value: T) => void) =>
 *  () => void, follow: (listener: (value: T) => void) => () => void}} Store */

/** @template T  @param {T} initial  @returns {Store<T>} */
export function store(initial) {
  let value = initial;
  const listeners = new Set();
  const subscribe = (listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  };
  return {
    get: () => value,
    set(next) {
      value = next;
      for (const listener of [...listeners]) listener(value);
    },
    subscribe,
    follow(listener) {
      if (value !== null && value !== undefined) listener(value);
      return subscribe(listener);
    },
  };
}

/** @typedef {import("../types.js").Trace} Trace  @typedef {import("../types.js").CellAddress} CellAddress */

// What the page shows. The parts switched off and "ready" are the trace's own (its `ablation`; a trace at all).

/** The trace on show (null until the first): set by the article (page/run.js) or the embed view (embed.js).
 *  @type {Store<Trace | null>} */
export const shownTrace = store(null);
/** The step in view (page/steps.js; the embed view's one step). @type {Store<{step: number} | null>} */
export const stepInView = store(null);
/** The pinned input's trace, which the stage compares with (page/compare.js), or null. @type {Store<Trace | null>} */
export const pinnedTrace = store(null);
/** The training snapshot the page runs on, its step as the address writes it (null: the trained model): set
 *  when the reader chooses one, and set back when it is refused (page/run.js setCheckpoint).
 *  @type {Store<string | null>} */
export const snapshot = store(null);
/** The cell the stage explains, or null (stage/explaining.js). @type {Store<CellAddress | null>} */
export const explainedCell = store(null);
/** Where the traces come from: "server", "browser" (the static build), "busy" or "offline" (api.js).
 *  @type {Store<string>} */
export const numbersSource = store("server");
/** The model's document (GET /api/model: its figures), once fetched (page.js).
 *  @type {Store<Record<string, any> | null>} */
export const modelDocument = store(null);
/** Whether what computing in the browser needs is kept for offline (page.js). @type {Store<boolean>} */
export const offlineReady = store(false);

// What a part of the page asks of the one that holds the input, which answers by running it: the stage's
// switches and step 29's table (ablation.js answerSwitches), the time machine and the stage's "trained model"
// (page/run.js), a linked cell for the stage to explain (page/compare.js → stage/main.js).

/** The parts to switch off. @type {Store<string[]>} */
export const askedParts = store([]);
/** A training snapshot to run on (null: the trained model). @type {Store<string | number | null>} */
export const askedSnapshot = store(null);
/** A cell to explain (a link's, an exercise's). @type {Store<CellAddress | null>} */
export const askedCell = store(null);
/** The worked row of steps 6–9 a reader chose on the stage ({head, row}, from 0), or null for the rule's: the
 *  page runs the input again with it and keeps it in the address (worked=head:row).
 *  @type {Store<{head: number, row: number} | null>} */
export const chosenWorked = store(null);
/** The cells the open exercises ask about ({id, rows: [r0, r1], cols: [c0, c1]}, tensor coordinates), which the
 *  stage draws veiled (no colour, value or outline) until they are answered (page/exercises.js).
 *  @type {Store<{id: string, rows: number[], cols: number[]}[]>} */
export const veiledCells = store([]);
/** The least type size of the stage's names, in CSS px (0: their own): presenter mode's, for a projector
 *  (page/present.js). @type {Store<number>} */
export const stageTextFloor = store(0);

const STORES = {
  shownTrace,
  stepInView,
  pinnedTrace,
  snapshot,
  explainedCell,
  numbersSource,
  modelDocument,
  offlineReady,
  askedParts,
  askedSnapshot,
  askedCell,
  chosenWorked,
  veiledCells,
  stageTextFloor,
};

// window.anatomy's names for the stores' values, read-only
const READS = {
  trace: shownTrace.get,
  ready: () => shownTrace.get() !== null,
  ablation: () => shownTrace.get()?.ablation ?? [],
  step: () => stepInView.get()?.step ?? null,
  stepDetail: stepInView.get,
  compareTrace: pinnedTrace.get,
  checkpoint: snapshot.get,
  cell: explainedCell.get,
  cellDetail: askedCell.get,
  source: numbersSource.get,
  model: modelDocument.get,
  offlineReady: offlineReady.get,
};

/** window.anatomy (page/state.js, embed.js): the stores' values as read-only fields, and the stores themselves
 *  (`stores`), for the tests and the console; assigning to a field throws, so a store stays the one place each
 *  value is set. The page's functions (goTo, setCheckpoint, …) are added to it by their modules.
 *  @returns {import("../types.js").PageState} */
export function pageView() {
  const view = { stores: STORES };
  for (const [name, get] of Object.entries(READS)) Object.defineProperty(view, name, { get, enumerable: true });
  return /** @type {any} */ (view);
}
