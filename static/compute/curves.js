// The scene's curves (the input's threads, the structure's memory arcs), drawn here only: evenly spaced
// points along each quadratic Bézier curve, to 3 decimals, a half rounded to the even digit.

/** x rounded to the nearest integer, halves to the even one. */
export function rint(x) {
  const r = Math.round(x); // halves up
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** x to `decimals` decimals. */
export function roundTo(x, decimals) {
  const f = 10 ** decimals;
  return rint(x * f) / f;
}

/** n + 1 points evenly from 0 to 1. */
function linspace(n) {
  const step = 1 / n;
  return Array.from({ length: n + 1 }, (_, i) => (i === n ? 1 : i * step));
}

/** Quadratic Bézier curves from each a[i] through control c[i] to e[i], n + 1 points each, to 3 decimals. */
export function beziers(a, c, e, n) {
  const ts = linspace(n);
  return a.map((start, i) =>
    ts.map((t) => {
      const u = 1 - t;
      return start.map((s, k) => roundTo(u * u * s + 2 * u * t * c[i][k] + t * t * e[i][k], 3));
    }),
  );
}
