// The page's one form of a trace (static/js/compact.js) against the JSON form's document: each float32
// node's data a Float32Array whose every value is exactly Math.fround of the JSON's number (the very
// float32 the JSON's shortest digits stand for), −∞ where the JSON has null; every other node's data, and
// every other field of each node and of the header, the JSON's, keys in the same order.
// Shared by the Node tests of the compact decoder and the NDJSON reader (test_trace_bytes.py,
// test_trace_stream.py); plain JavaScript, so a page may run it too.

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** Where float32 node `x` (the page's form) is not the JSON's `want` values, as text; null where it is. */
function float32Problem(x, want) {
  if (!(x.data instanceof Float32Array)) return `${x.id}: not a Float32Array`;
  if (x.data.length !== want.length) return `${x.id}: ${x.data.length} values ≠ ${want.length}`;
  for (let i = 0; i < want.length; i++) {
    const v = x.data[i],
      w = want[i];
    if (w === null ? v !== -Infinity : !Object.is(v, Math.fround(w))) return `${x.id}[${i}]: ${v} ≠ fround(${w})`;
  }
  return null;
}

/** Every difference of `page` (a trace as the page holds it) from `doc` (the JSON form, as JSON.parse gives it). */
export function formProblems(page, doc) {
  const problems = [],
    head = (t) => ({ ...t, nodes: undefined });
  if (!same(head(page), head(doc))) problems.push("the header differs");
  if (page.nodes.length !== doc.nodes.length) problems.push(`${page.nodes.length} nodes ≠ ${doc.nodes.length}`);
  doc.nodes.forEach((want, i) => {
    const x = page.nodes[i];
    if (!x) return;
    if (!same(Object.keys(x), Object.keys(want)) || !same({ ...x, data: null }, { ...want, data: null })) {
      problems.push(`${want.id}: its fields differ`);
    } else if (want.dtype === "float32") {
      const p = float32Problem(x, want.data);
      if (p) problems.push(p);
    } else if (!Array.isArray(x.data) || !same(x.data, want.data)) {
      problems.push(`${want.id}: ${JSON.stringify(x.data).slice(0, 60)} ≠ the JSON's`);
    }
  });
  return problems;
}
