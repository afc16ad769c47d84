// tests/in_page.py's Node half: what the page shows for each served trace, computed by the page's own code.
// Reads a job on stdin ({folder, index: {url: file}, cases: [{trace: its compact url, model: as asked}]}),
// decodes each trace as the page does (static/js/compact.js) and adds the page's parts to it
// (static/local/page_parts.js). Writes {cases: [{derived, scene}]} as JSON to the file named in `out`.
/* global TextDecoder */  // run by Node (tests/in_page.py)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeCompactTrace } from '../static/js/compact.js';
import { withPageParts } from '../static/local/page_parts.js';

const job = JSON.parse(readFileSync(0, 'utf8'));
const file = (url) => {
  if (!(url in job.index)) throw new Error(`tests/in_page.py wrote no document for ${url}`);
  const bytes = readFileSync(join(job.folder, job.index[url]));
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
};
const fetcher = {
  json: async (url) => JSON.parse(new TextDecoder().decode(file(url))),
  bytes: async (url) => file(url),
};
const cases = [];
for (const c of job.cases) {
  const { trace } = decodeCompactTrace(file(c.trace));
  await withPageParts(trace, c.model, fetcher);
  cases.push({ derived: trace.derived, scene: trace.scene });
}
writeFileSync(job.out, JSON.stringify({ cases }));
