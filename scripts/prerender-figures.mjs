// The article's live figures of one input, computed by the page's own code under Node from the trace the
// server sends, for the server to fill into the article for a reader without JavaScript (app/startup/prerender.py
// runs this; app/main.py reads it at start-up).
//
//   node scripts/prerender-figures.mjs FOLDER [INPUT]
//
// FOLDER holds the input's compact trace (trace.compact, as /api/trace sends it to the page) and the live
// recipe at the file the static build writes it to (static/js/site.js sitePath). Prints {input,
// weights_version, figures} (static/local/derived.js, as static/local/page_parts.js adds them to a trace).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeCompactTrace } from "../static/js/compact.js";
import { sitePath } from "../static/js/site.js";
import { liveFigures } from "../static/local/derived.js";

const [folder] = process.argv.slice(2);
const fetcher = { json: async (url) => JSON.parse(readFileSync(join(folder, sitePath(url).slice(1)), "utf8")) };
const bytes = readFileSync(join(folder, "trace.compact"));
const { trace } = decodeCompactTrace(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
process.stdout.write(JSON.stringify({ input: trace.input.number, weights_version: trace.weights_version,
  figures: await liveFigures(trace, { fetcher, model: "" }) }));
