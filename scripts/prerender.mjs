// What the page computes for one input, computed by the page's own code under Node from the trace the server
// sends, for the server to render for a reader without JavaScript (app/startup/prerender.py runs this).
//
//   node scripts/prerender.mjs KIND FOLDER
//
// FOLDER holds the input's compact trace (trace.compact, as /api/trace sends it to the page) and the model's
// live recipe (live.json, as /api/live sends it). KIND is "figures" (the article's live figures:
// static/compute/derived.js) or "topics" (the go-deeper pages' tables: static/compute/topic_tables.js). Prints
// {input, weights_version, KIND: …}.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeCompactTrace } from "../static/js/compact.js";
import { derivedFigures } from "../static/compute/derived.js";
import { allTopicTables } from "../static/compute/topic_tables.js";

const KINDS = { figures: derivedFigures, topics: allTopicTables };
const [kind, folder] = process.argv.slice(2);
if (!(kind in KINDS)) throw new Error(`prerender: no kind ${kind}; the kinds are ${Object.keys(KINDS).join(", ")}`);
const bytes = readFileSync(join(folder, "trace.compact"));
const { trace } = decodeCompactTrace(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
const recipe = JSON.parse(readFileSync(join(folder, "live.json"), "utf8"));
process.stdout.write(
  JSON.stringify({
    input: trace.input.number,
    weights_version: trace.weights_version,
    [kind]: KINDS[kind](trace, recipe),
  }),
);
