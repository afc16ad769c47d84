// Runs static/engine/ under Node on the cases tests/page/test_engine.py wrote (programs, weights, source ids and
// the server's traces) and compares every node; prints one JSON report. Usage: node engine_parity.mjs DIR
/* global process, performance */ // run by Node (tests/page/test_engine.py)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { browserTrace, beamSearch } from "../static/engine/decode.js";
import { compareBeam, compareTrace } from "./engine_compare.mjs";

const dir = process.argv[2];
const read = (name) => JSON.parse(readFileSync(join(dir, name), "utf8"));
const cases = read("cases.json"),
  programs = {},
  weights = {};
const report = { cases: [], ms: [] };
for (const c of cases) {
  programs[c.model] ??= read(`program-${c.model}.json`);
  weights[c.weights] ??= new Map(
    read(`${c.weights}.json`).parameters.map((p) => [p.id, { shape: p.shape, data: Float64Array.from(p.data) }]),
  );
  let ours = null,
    problems = [];
  if (c.trace) {
    const t0 = performance.now();
    ours = browserTrace(programs[c.model], weights[c.weights], c.source_ids, new Set(c.ablation));
    report.ms.push(performance.now() - t0);
    problems = compareTrace(ours, c.trace);
  }
  const beam = c.beam
    ? compareBeam(beamSearch(programs[c.model], weights[c.weights], c.source_ids), c.beam).slice(0, 5)
    : null;
  report.cases.push({
    name: c.name,
    nodes: ours ? ours.nodes.length : null,
    problems: problems.slice(0, 5),
    problem_count: problems.length,
    beam,
  });
}
process.stdout.write(JSON.stringify(report));
