// What the page shows for traces it did not compute itself, under Node: the page's own code
// (static/compute/page_parts.js withPageParts) over documents the caller hands in, so that a caller in
// another language (tests/in_page.py, the notebook's scene/page_scene.py) asks the one definition of every
// per-input rule instead of keeping a copy.
//
//   node scripts/page-parts.mjs < job.json > parts.json
//   job:   {documents: {url: JSON value}, cases: [{trace: a trace in its JSON form, model: as the page asks it}]}
//   parts: {cases: [{derived, scene}]}
//
// `documents` answers the addresses the page asks (the recipe, /api/live[?model=]; the shape's structure,
// /site/scene/<model>/<n>.json.gz and its difference <n>-<m>.diff.json.gz, null for none): a document at a
// .gz address is handed to the page gzip-compressed, as the server and the static folder send it.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { pageTrace } from "../static/js/compact.js";
import { withPageParts } from "../static/compute/page_parts.js";

const job = JSON.parse(readFileSync(0, "utf8"));

function documentAt(url) {
  if (!Object.hasOwn(job.documents, url)) throw new Error(`page-parts: the job holds no document for ${url}`);
  return job.documents[url];
}

const fetcher = {
  json: async (url) => documentAt(url),
  bytes: async (url) => {
    const bytes = gzipSync(JSON.stringify(documentAt(url)));
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  },
};

const cases = [];
for (const c of job.cases) {
  const trace = pageTrace(c.trace); // float32 nodes as Float32Array, as the page holds a decoded trace
  await withPageParts(trace, c.model ?? "", fetcher);
  cases.push({ derived: trace.derived, scene: trace.scene });
}
process.stdout.write(JSON.stringify({ cases }));
