// A JSON value from another and their difference (app/service/json_diff.py json_diff writes it; this is its
// json_patched): the static build's scene structure of a shape is its difference from its source length's
// base. Generic, exact: a difference is null (equal), {v} (the value), {d: {key: difference}} (an object
// with the base's keys in its order), {l: [[index, difference], …]} (a list of the base's length).

/** `base` with `diff` applied; `base` is not changed (what is unchanged is shared with it). */
export function jsonPatched(base, diff) {
  if (diff === null || diff === undefined) return base;
  if (Object.hasOwn(diff, "v")) return diff.v;
  if (Object.hasOwn(diff, "d")) {
    return Object.fromEntries(
      Object.entries(base).map(([k, v]) => [k, Object.hasOwn(diff.d, k) ? jsonPatched(v, diff.d[k]) : v]),
    );
  }
  const out = [...base];
  for (const [i, d] of diff.l) out[i] = jsonPatched(out[i], d);
  return out;
}
