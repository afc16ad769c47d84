// Computes the live figures of each trace tests/test_local_derived.py wrote (static/local/derived.js) and
// compares them with the server's `derived` by ./local_compare.mjs's rule (numbers to 1e-9 of their size).
// Prints one JSON report. Usage: node local_derived_parity.mjs DIR
/* global process, URL */  // run by Node (tests/test_local_derived.py)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { derivedFigures, liveFigures, liveUrl } from "../static/local/derived.js";
import { pageTrace } from "../static/js/compact.js";
import { differences, FIGURES_RELATIVE } from "./local_compare.mjs";

const dir = process.argv[2];
const read = (name) => JSON.parse(readFileSync(join(dir, name), "utf8"));

// computeTrace's fetcher: the recipe of the model as asked ("" the default), each URL read at most once
const asked = [];
const fetcher = { json: async (url) => {
  asked.push(url);
  const model = url === liveUrl() ? "" : new URL(url, "http://x").searchParams.get("model");
  return read(`recipe-${model}.json`);
} };

const report = [];
for (const c of read("cases.json")) {
  let problems;
  try {
    const trace = pageTrace(c.trace);  // the JSON body in the page's form, as loadTrace gives a trace
    const ours = await liveFigures(trace, { fetcher, model: c.asked });
    problems = differences(ours, c.trace.derived, "derived", [], { relative: FIGURES_RELATIVE });
    const direct = derivedFigures(trace, read(`recipe-${c.asked}.json`));
    if (JSON.stringify(direct) !== JSON.stringify(ours)) problems.push("liveFigures ≠ derivedFigures");
  } catch (err) {
    problems = [`threw: ${err.stack}`];
  }
  report.push({ name: c.name, problem_count: problems.length, problems: problems.slice(0, 5) });
}
process.stdout.write(JSON.stringify({ cases: report, asked }));
