// The few numpy reductions the article's live figures use, in numpy's own order of operations, so that a
// figure computed here is the server's to the last bit where it feeds a printed digit or a comparison.
//
// numpy sums pairwise (numpy/_core/src/umath/loops_utils.h.src): fewer than 8 terms one by one, up to 128
// in 8 interleaved partial sums, more split in halves. A float32 array's sum, mean and std stay in
// float32 (each step rounded: `f32`); a float64 one's in float64. A reduction starts from the identity 0.

const BLOCK = 128;
export const f32 = Math.fround;
const addF64 = (a, b) => a + b;
const addF32 = (a, b) => f32(a + b);

function pairwise(a, at, n, add) {
  if (n < 8) {
    let res = -0;
    for (let i = 0; i < n; i++) res = add(res, a[at + i]);
    return res;
  }
  if (n <= BLOCK) {
    const r = [];
    for (let j = 0; j < 8; j++) r.push(a[at + j]);
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] = add(r[j], a[at + i + j]);
    let res = add(add(add(r[0], r[1]), add(r[2], r[3])), add(add(r[4], r[5]), add(r[6], r[7])));
    for (; i < n; i++) res = add(res, a[at + i]);
    return res;
  }
  let half = Math.floor(n / 2);
  half -= half % 8;
  return add(pairwise(a, at, half, add), pairwise(a, at + half, n - half, add));
}

/** Σ of `values` (an array) as numpy's add.reduce sums it; `float32`: every step rounded to float32. */
export function sum(values, float32 = false) {
  const add = float32 ? addF32 : addF64;
  return add(0, pairwise(values, 0, values.length, add));
}

export const mean = (values, float32 = false) => float32 ? f32(sum(values, true) / values.length)
  : sum(values) / values.length;

/** numpy's std (the population's, ddof 0): the mean, the squared deviations, their mean, its root. */
export function std(values, float32 = false) {
  const round = float32 ? f32 : (x) => x;
  const m = mean(values, float32);
  const squares = values.map((x) => { const d = round(x - m); return round(d * d); });
  return round(Math.sqrt(mean(squares, float32)));
}

/** np.linalg.norm(rows, axis=-1) of float64 rows: the root of each row's pairwise sum of squares. */
export const norm = (row) => Math.sqrt(sum(row.map((x) => x * x)));

/** The first index of the largest (argmax) or smallest (argmin) value, as numpy's. */
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

/** lessons.softmax: e^(x − max x), divided by its (pairwise) sum. */
export function softmax(row) {
  const top = max(row);
  const e = row.map((x) => Math.exp(x - top));
  const total = sum(e);
  return e.map((x) => x / total);
}
