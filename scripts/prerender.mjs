// app/prerender.py's Node half: the default input's live figures computed by the page's own code. Reads a
// job on stdin ({folder, index: {url: file}, trace: the compact trace's url, model: as the page asks it}),
// decodes the trace as the page does (static/js/compact.js) and adds the page's parts to it
// (static/local/page_parts.js); prints {figures}. A document the index lacks is an error that names it.
/* global process */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeCompactTrace } from "../static/js/compact.js";
import { withPageParts } from "../static/local/page_parts.js";

const job = JSON.parse(readFileSync(0, "utf8"));
const file = (url) => {
  if (!(url in job.index)) throw new Error(`prerender: no document for ${url}`);
  const bytes = readFileSync(join(job.folder, job.index[url]));
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
};
const fetcher = {
  json: async (url) => JSON.parse(new TextDecoder().decode(file(url))),
  bytes: async (url) => file(url),
};
const { trace } = decodeCompactTrace(file(job.trace));
await withPageParts(trace, job.model, fetcher);
process.stdout.write(JSON.stringify({ figures: trace.derived }));
