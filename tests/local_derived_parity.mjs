// Computes the live figures of each trace tests/page/test_local_derived.py wrote (static/compute/derived.js), through
// liveFigures (computeTrace's fetcher, each recipe asked once) and derivedFigures (the recipe handed in): the
// two must agree. Prints one JSON report: each case's figures and problems, and the URLs asked.
// Usage: node local_derived_parity.mjs DIR
/* global process, URL */ // run by Node (tests/page/test_local_derived.py)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { derivedFigures, liveFigures, liveUrl } from "../static/compute/derived.js";
import { pageTrace } from "../static/js/compact.js";

const dir = process.argv[2];
const read = (name) => JSON.parse(readFileSync(join(dir, name), "utf8"));

// computeTrace's fetcher: the recipe of the model as asked ("" the default), each URL read at most once
const asked = [];
const fetcher = {
  json: async (url) => {
    asked.push(url);
    const model = url === liveUrl() ? "" : new URL(url, "http://x").searchParams.get("model");
    return read(`recipe-${model}.json`);
  },
};

const report = [];
for (const c of read("cases.json")) {
  let problems = [],
    figures = null;
  try {
    const trace = pageTrace(c.trace); // the JSON body in the page's form, as loadTrace gives a trace
    figures = await liveFigures(trace, { fetcher, model: c.asked });
    const direct = derivedFigures(trace, read(`recipe-${c.asked}.json`));
    if (JSON.stringify(direct) !== JSON.stringify(figures)) problems.push("liveFigures ≠ derivedFigures");
  } catch (err) {
    problems = [`threw: ${err.stack}`];
  }
  report.push({ name: c.name, figures, problems });
}
process.stdout.write(JSON.stringify({ cases: report, asked }));
