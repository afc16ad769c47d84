// The parity rule between a trace computed by static/engine/ and the server's (the same rule as
// tests/program_cases.py `close`): header token lists equal; per node the same id, op, inputs, attrs,
// shape and dtype; values to 1e-5 absolute and relative, widened by 1e-6 of the tensor's largest
// magnitude; −∞ exactly where the server has −∞. Shared by the Node test and the Chromium test.
export const ATOL = 1e-5,
  RTOL = 1e-5,
  SCALE = 1e-6;

const canonical = (v) =>
  JSON.stringify(v, (k, x) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((key) => [key, x[key]]),
        )
      : x,
  );

function valueProblem(ours, theirs) {
  const want = Array.from(theirs, (v) => (v === null ? -Infinity : Number(v)));
  if (ours.length !== want.length) return `has ${ours.length} values, the server ${want.length}`;
  let scale = 0;
  for (const w of want) if (Number.isFinite(w)) scale = Math.max(scale, Math.abs(w));
  for (let i = 0; i < want.length; i++) {
    const a = ours[i],
      w = want[i];
    if (Number.isFinite(w) !== Number.isFinite(a) || (!Number.isFinite(w) && a !== w))
      return `element ${i}: ${a}, the server ${w}`;
    if (Number.isFinite(w) && !(Math.abs(a - w) <= ATOL + RTOL * Math.abs(w) + SCALE * scale))
      return `element ${i}: ${a}, the server ${w}`;
  }
  return null;
}

/** Every difference between our trace and the server's, as text (none: equal). */
export function compareTrace(ours, theirs) {
  const problems = [];
  for (const key of ["source_tokens", "target_tokens", "output_tokens", "ablation"]) {
    if (canonical(ours[key]) !== canonical(theirs[key]))
      problems.push(`${key}: ${canonical(ours[key])} ≠ ${canonical(theirs[key])}`);
  }
  if (ours.nodes.length !== theirs.nodes.length)
    problems.push(`${ours.nodes.length} nodes, the server ${theirs.nodes.length}`);
  const count = Math.min(ours.nodes.length, theirs.nodes.length);
  for (let i = 0; i < count; i++) {
    const a = ours.nodes[i],
      b = theirs.nodes[i];
    for (const key of ["id", "op", "inputs", "attrs", "shape", "dtype"]) {
      if (canonical(a[key]) !== canonical(b[key] ?? {}))
        problems.push(`node ${i} (${b.id}) ${key}: ${canonical(a[key])} ≠ ${canonical(b[key])}`);
    }
    const bad = valueProblem(a.data, b.data);
    if (bad) problems.push(`node ${b.id} ${bad}`);
  }
  return problems;
}

const near = (a, b) => (a === null ? b === null : b !== null && Math.abs(a - b) <= ATOL + RTOL * Math.abs(b));

/** Every difference between our beam table and /api/beam's: per step, slot by slot, the same log p, length
 *  penalty and score to the rule, and the same tokens — unless the server's hypothesis in that slot is tied
 *  with another of its step exactly (float32 ties, e.g. pieces whose logits are equal in float32, which
 *  torch's topk orders as it likes while float64 tells them apart). */
export function compareBeam(ours, theirs) {
  const problems = [];
  const hyps = (where, a, b, all) => {
    if (a.length !== b.length) {
      problems.push(`${where}: ${a.length} hypotheses, the server ${b.length}`);
      return;
    }
    a.forEach((h, i) => {
      const s = b[i],
        tied = all.filter((x) => x.log_prob === s.log_prob).length > 1;
      if (!near(h.log_prob, s.log_prob) || !near(h.length_penalty, s.length_penalty) || !near(h.score, s.score))
        problems.push(`${where}[${i}]: ${JSON.stringify(h)} ≠ ${JSON.stringify(s)}`);
      else if (h.tokens.join(" ") !== s.tokens.join(" ") && !tied)
        problems.push(`${where}[${i}]: ${h.tokens.join(" ")} ≠ ${s.tokens.join(" ")}`);
    });
  };
  if (ours.steps.length !== theirs.steps.length)
    problems.push(`${ours.steps.length} steps, the server ${theirs.steps.length}`);
  ours.steps.slice(0, theirs.steps.length).forEach((s, k) => {
    const t = theirs.steps[k],
      all = [...t.alive, ...t.finished];
    hyps(`step ${t.step} alive`, s.alive, t.alive, all);
    hyps(`step ${t.step} finished`, s.finished, t.finished, all);
  });
  hyps("finished", ours.finished, theirs.finished, theirs.finished);
  hyps("best", [ours.best], [theirs.best], [theirs.best]);
  return problems;
}
