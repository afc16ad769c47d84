// bench/bench_local_trace.py's Node half: computeTrace (static/compute/trace.js) for the given inputs, one after
// another, the program, number words and weights fetched once before (warm-up inputs), each timed whole and
// in its parts: the engine's decoding and graph (browserTrace), and the rest (the header, the lens summary,
// every value in the decoded form); beside it, the served way: the same input's compact trace asked of the
// server (a new input: recorded, scene built) and decoded. Prints one JSON report.   node bench_local_trace.mjs BASE_URL N1,N2,…
/* global process, fetch, performance */  // run by Node
import { computeTrace, programUrl, weightsUrl } from '../static/compute/trace.js';
import { browserTrace } from '../static/engine/decode.js';
import { parseSafetensors } from '../static/engine/safetensors.js';
import { numberWords } from '../static/js/numbers.js';
import { decodeCompactTrace } from '../static/js/compact.js';
import { COMPACT, traceUrl } from '../static/js/api.js';

const [base, list] = process.argv.slice(2);
const numbers = list.split(',').map(Number);
const fetcher = {
  json: async url => (await fetch(base + url)).json(),
  bytes: async url => (await fetch(base + url, { headers: { Accept: 'application/octet-stream' } })).arrayBuffer(),
};
for (const n of ['7', '123456', '987654', '700007']) await computeTrace(n, { scene: null }, fetcher);  // the documents fetched, the code compiled
const program = await fetcher.json(programUrl()), words = numberWords(await fetcher.json('/api/numbers'));
const weights = parseSafetensors(await fetcher.bytes(weightsUrl(program, null)));
const report = { whole: [], engine: [], served: [], nodes: 0 };
for (const n of numbers) {
  let t0 = performance.now();  // the served page's way: the compact trace asked of the server (cold) and decoded
  decodeCompactTrace(await (await fetch(base + traceUrl(String(n)), { headers: { Accept: COMPACT } })).arrayBuffer());
  report.served.push(performance.now() - t0);
  t0 = performance.now();
  const trace = await computeTrace(String(n), { scene: null }, fetcher);
  report.whole.push(performance.now() - t0);
  t0 = performance.now();
  browserTrace(program, weights, words.sourceIds(n), new Set(), words.ids(words.germanPieces(n)));
  report.engine.push(performance.now() - t0);
  report.nodes += trace.nodes.length;
}
process.stdout.write(JSON.stringify(report));
