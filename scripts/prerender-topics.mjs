// The go-deeper pages' per-input tables of one input, computed by the page's own code under Node, for the
// server to render for a reader without JavaScript (app/startup/prerender.py runs this; app/routes/deeper.py reads it).
//
//   node scripts/prerender-topics.mjs FOLDER [INPUT]   (INPUT: the page's default, 42)
//
// FOLDER holds the input's compact trace (trace.compact, as /api/trace sends it to the page) and the live
// recipe at the file the static build writes it to (static/js/site.js sitePath: /api/live →
// site/api/live/index.json). Prints {input, weights_version, topics: {slug: tables}}
// (static/local/topic_tables.js), for the default model.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sitePath } from "../static/js/site.js";
import { liveUrl } from "../static/local/derived.js";
import { allTopicTables } from "../static/local/topic_tables.js";
import { decodeCompactTrace } from "../static/js/compact.js";

const [folder] = process.argv.slice(2);
const file = (url, binary) => readFileSync(join(folder, sitePath(url, { binary }).slice(1)));
const fetcher = {
  json: async (url) => JSON.parse(file(url, false).toString("utf8")),
  bytes: async (url) => {
    const b = Buffer.from(file(url, true));
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  },
};

const compact = readFileSync(join(folder, "trace.compact"));
const { trace } = decodeCompactTrace(compact.buffer.slice(compact.byteOffset, compact.byteOffset + compact.byteLength));
const recipe = await fetcher.json(liveUrl());
process.stdout.write(JSON.stringify({ input: trace.input.number, weights_version: trace.weights_version,
  topics: allTopicTables(trace, recipe) }));
