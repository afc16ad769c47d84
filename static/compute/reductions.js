// The few reductions the live figures use, in float64 over the trace's float32 values: one plain order of
// operations, the page's own (a figure is printed to a few decimals, far above any order's rounding).

/** Σ of `values`. */
export function sum(values) {
  let total = 0;
  for (const x of values) total += x;
  return total;
}

export const mean = (values) => sum(values) / values.length;

/** The population's standard deviation (ddof 0), as LayerNorm uses it. */
export function std(values) {
  const m = mean(values);
  let squares = 0;
  for (const x of values) squares += (x - m) * (x - m);
  return Math.sqrt(squares / values.length);
}

/** The Euclidean length of a row. */
export const norm = (row) => Math.sqrt(sum(row.map((x) => x * x)));

/** The first index of the largest (argmax) or smallest (argmin) value. */
export function argmax(values) {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

export function argmin(values) {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] < values[best]) best = i;
  return best;
}

export const max = (values) => values[argmax(values)];

/** softmax(row): e^(x − max x), divided by its sum. */
export function softmax(row) {
  const top = max(row);
  const e = row.map((x) => Math.exp(x - top));
  const total = sum(e);
  return e.map((x) => x / total);
}
