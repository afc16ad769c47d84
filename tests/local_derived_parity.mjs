// Computes the live figures of each trace tests/test_local_derived.py wrote (static/local/derived.js) and
// compares them with the server's `derived`: strings and flags exactly, numbers to 1e-9 of their size.
// Prints one JSON report. Usage: node local_derived_parity.mjs DIR
/* global process, URL */  // run by Node (tests/test_local_derived.py)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { derivedFigures, liveFigures, liveUrl } from "../static/local/derived.js";

const RELATIVE = 1e-9;
const dir = process.argv[2];
const read = (name) => JSON.parse(readFileSync(join(dir, name), "utf8"));

function differences(ours, theirs, path, out) {
  if (typeof theirs === "number" && typeof ours === "number") {
    if (!(ours === theirs || Math.abs(ours - theirs) <= RELATIVE * Math.max(Math.abs(ours), Math.abs(theirs)))) {
      out.push(`${path}: ${ours} ≠ ${theirs}`);
    }
  } else if (Array.isArray(theirs) && Array.isArray(ours)) {
    if (ours.length !== theirs.length) out.push(`${path}: ${ours.length} items ≠ ${theirs.length}`);
    else theirs.forEach((x, i) => differences(ours[i], x, `${path}[${i}]`, out));
  } else if (theirs && ours && typeof theirs === "object" && typeof ours === "object") {
    const keys = new Set([...Object.keys(ours), ...Object.keys(theirs)]);
    for (const k of keys) {
      if (!(k in ours) || !(k in theirs)) out.push(`${path}.${k}: only in ${k in ours ? "ours" : "the server's"}`);
      else differences(ours[k], theirs[k], `${path}.${k}`, out);
    }
  } else if (ours !== theirs) {
    out.push(`${path}: ${JSON.stringify(ours)} ≠ ${JSON.stringify(theirs)}`);
  }
  return out;
}

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
    const ours = await liveFigures(c.trace, { fetcher, model: c.asked });
    problems = differences(ours, c.trace.derived, "derived", []);
    const direct = derivedFigures(c.trace, read(`recipe-${c.asked}.json`));
    if (JSON.stringify(direct) !== JSON.stringify(ours)) problems.push("liveFigures ≠ derivedFigures");
  } catch (err) {
    problems = [`threw: ${err.stack}`];
  }
  report.push({ name: c.name, problem_count: problems.length, problems: problems.slice(0, 5) });
}
process.stdout.write(JSON.stringify({ cases: report, asked }));
