// A value the page holds and others follow (Transformer Explainer's stores, src/store/index.ts): get, set and
// subscribe, so that no module reaches into another's variables or a global for it. No DOM here: the page, the
// embed view and the stage share the one instance (the bundle's shared chunk keeps a module single).
//
//   store(initial) → { get(), set(value), subscribe(listener) → unsubscribe }
//
// set() tells every listener, in the order they subscribed, even when the value is the one held (a trace
// shown again is shown again); subscribe() does not call the listener with the value held now: a late
// subscriber reads get() once itself (the stage's first trace).

/** @template T  @param {T} initial
 *  @returns {{get: () => T, set: (value: T) => void, subscribe: (listener: (value: T) => void) => () => void}} */
export function store(initial) {
  let value = initial;
  const listeners = new Set();
  return {
    get: () => value,
    set(next) {
      value = next;
      for (const listener of [...listeners]) listener(value);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The trace on show (null until the first): set by the page (page/run.js) or the embed view (embed.js) once a
 *  trace is the page's, followed by the stage (stage/main.js).
 *  @type {ReturnType<typeof store<import("../types.js").Trace | null>>} */
export const shownTrace = store(null);

/** window.anatomy's `trace` as a read-only view of shownTrace (the page's code, its tests and the console read
 *  it there); assigning to it throws, so the store stays the one place the trace on show is set. */
export function withShownTrace(view) {
  return Object.defineProperty(view, "trace", { get: shownTrace.get, enumerable: true });
}
