// The one client of the app's API: traces (the compact form, the NDJSON stream or one JSON document),
// the weights (safetensors bytes, fetched once per URL) and the other JSON documents, with a refusal read
// one way: the server's own message (detail.message) and the HTTP status on the Error.
//
//   fetchCompactTrace(url, { onHeader, signal }) → Promise<trace>
//
// /api/trace sent with Accept: application/vnd.anatomy.trace answers the compact form (app/serving/trace_bytes.py:
// a JSON header, then each float32 node's values as float32 bytes), read back by ./compact.js with each
// float32 node's values a Float32Array over those bytes (the page's one form of a trace: −∞ as −Infinity),
// in about half the bytes of the JSON form and without parsing or converting 55 000 numbers. The
// page and the stage ask for it (loadTrace); onHeader(header) is called as with the stream.
//
//   readTraceStream(url, { onHeader, onNode, signal }) → Promise<trace>
//
// /api/trace/stream (or /api/trace sent with Accept: application/x-ndjson) answers newline-delimited
// JSON: a header (the trace without its nodes, plus node_count), then one node per line in the order
// computed. The reader resolves to the trace /api/trace sends ({...header, nodes}, without node_count),
// each float32 node brought to the page's form (./compact.js pageNode: a Float32Array, −∞ as −Infinity,
// as the compact form decodes); onHeader(header) is called with the first line as sent (node_count
// included) and onNode(node, index) with each node as it arrives, so a caller may draw before the end. A
// stream cut short rejects too.

//   loadTrace(input, options, callbacks) → Promise<trace>;  loadBeam(number, options) → Promise<beam>
//
// Where the numbers come from (./store.js numbersSource, set here):
//   "browser"  the static build (site.js isStaticSite): every document is a file of the folder
//              (site.js sitePath) and every trace and beam table is computed here (../compute/trace.js);
//   "server"   the served app, while the server answers;
//   "busy"     the served app while the server refuses for load (503 with Retry-After: too many connections
//              from this address, or too many traces waiting): the same computation here;
//   "offline"  the served app once the server cannot be reached (no answer, or a proxy's 502/503/504):
//              the same computation here, over the documents the page kept from the server's answers
//              (keepForOffline fetches them in idle time, after the stage is live). A refusal (422) is
//              the server answering: it is shown as ever, and offline numbers.js gives the same words.
import { decodeCompactTrace, pageNode } from "./compact.js";
import { isStaticSite, sitePath, siteUrl } from "./site.js";
import { numbersSource } from "./store.js";

const STREAM = "application/x-ndjson";
export const COMPACT = "application/vnd.anatomy.trace";
const STATIC = isStaticSite();
// a proxy's answers when the server behind it is down or silent: unreachable, as no answer at all is
const GATEWAY = new Set([502, 503, 504]);

/** A refused request as an Error: the server's message, else its status; err.status is the HTTP status,
 *  err.unreachable says that the server did not answer (a gateway's status with no message of the app's),
 *  err.busy that it asked to be asked again later (a 503 with Retry-After). */
async function refusal(response) {
  const body = await response.json().catch(() => null);
  const busy = response.status === 503 && response.headers.has("retry-after");
  return Object.assign(new Error(body?.detail?.message || `the server answered ${response.status}`), {
    status: response.status,
    // the app's own 503 without Retry-After (a shipped file damaged) is its answer, with its message
    unreachable: GATEWAY.has(response.status) && (busy || !body?.detail?.message),
    busy,
  });
}

/** Where the numbers come from when the server did not give them: "busy" or "offline". */
const fallback = (err) => (err.busy ? "busy" : "offline");

/** Where a request goes: in the static build an API address is the folder's file (site.js), and every address
 *  lies under the folder's root; others as they are. */
const located = (url, binary = false) =>
  STATIC ? siteUrl(url.startsWith("/api/") ? sitePath(url, { binary }) : url) : url;

async function get(url, accept, signal) {
  let response;
  try {
    response = await fetch(url, { headers: { Accept: accept }, signal });
  } catch (err) {
    // no answer: the network is cut or the server gone (an abort is the caller's own)
    if (err?.name === "AbortError") throw err;
    throw Object.assign(new Error(`the server cannot be reached (${err?.message || err})`), {
      unreachable: true,
      cause: err,
    });
  }
  if (!response.ok) throw await refusal(response);
  return response;
}

/** The caller's part in a fetch: the header and each node as they come, and a signal to stop it.
 *  @typedef {{onHeader?: (header: Record<string, any>) => void, onNode?: (node: import("../types.js").TraceNode,
 *    index: number) => void, signal?: AbortSignal}} TraceCallbacks */

/** A JSON document of the API.  @param {string} url  @param {{signal?: AbortSignal}} [options] */
export async function fetchJson(url, { signal } = {}) {
  return (await get(located(url), "application/json", signal)).json();
}

/** The address of one input's trace: the parts switched off, the training snapshot, the model. */
export function traceUrl(input, { ablation = [], checkpoint = null, model = "", stream = false } = {}) {
  const q = new URLSearchParams({ input: String(input) });
  if (ablation.length) q.set("ablate", ablation.join(","));
  if (checkpoint !== null && checkpoint !== undefined) q.set("checkpoint", String(checkpoint));
  if (model) q.set("model", model);
  return `/api/trace${stream ? "/stream" : ""}?${q}`;
}

/** A trace in the compact form; onHeader gets its header (node_count included), as the stream's first line.
 *  @param {string} url  @param {TraceCallbacks} [callbacks]  @returns {Promise<import("../types.js").Trace>} */
export async function fetchCompactTrace(url, { onHeader, signal } = {}) {
  const response = await get(url, COMPACT, signal);
  if (!response.headers.get("content-type")?.startsWith(COMPACT)) throw new Error("the server sent no compact trace");
  const { head, trace } = decodeCompactTrace(await response.arrayBuffer());
  onHeader?.({ ...head, node_count: trace.nodes.length });
  return trace;
}

/** One input's trace (the page; the stage on its own) with what the page shows for it: the tensors from
 *  the server in the compact form, else computed here (the static build; the served app whose server cannot
 *  be reached); the live figures and the scene always computed here, by ../compute/page_parts.js.
 *  @param {string | number} input
 *  @param {{ablation?: string[], checkpoint?: string | number | null, model?: string,
 *    worked?: {head: number, row: number} | null}} [options]  `worked`: the worked row the reader chose
 *  @param {TraceCallbacks} [callbacks]  @returns {Promise<import("../types.js").Trace>} */
export async function loadTrace(input, options = {}, callbacks = {}) {
  if (STATIC) return computedTrace(input, options, callbacks, "browser");
  if (globalThis.navigator?.onLine === false) return computedTrace(input, options, callbacks, "offline");
  let trace;
  try {
    trace = await fetchCompactTrace(traceUrl(input, options), callbacks);
  } catch (err) {
    if (!err.unreachable) throw err; // a refusal is the server's answer
    return computedTrace(input, options, callbacks, fallback(err));
  }
  setSource("server");
  return (await pageParts()).withPageParts(trace, options.model || "", keptDocuments, options.worked ?? null);
}

/** The beam search of step 19 for a number (the /api/beam document), from the server or computed here. */
export async function loadBeam(number, { model = "" } = {}) {
  const q = new URLSearchParams({ input: String(number) });
  if (model) q.set("model", model);
  if (STATIC) return computed("computeBeam", [String(number), { model }], "browser");
  try {
    return await fetchJson(`/api/beam?${q}`);
  } catch (err) {
    if (!err.unreachable) throw err;
    return computed("computeBeam", [String(number), { model }], fallback(err));
  }
}

/** One input's trace, streamed as NDJSON, node by node. */
export const streamTrace = (input, options = {}, callbacks = {}) =>
  readTraceStream(traceUrl(input, { ...options, stream: true }), callbacks);

/** @param {string} url  @param {TraceCallbacks} [callbacks]  @returns {Promise<import("../types.js").Trace>} */
export async function readTraceStream(url, { onHeader, onNode, signal } = {}) {
  const response = await get(url, STREAM, signal);
  let header = null,
    trace = null;
  const take = (line) => {
    if (!line.trim()) return;
    const obj = JSON.parse(line);
    if (header === null) {
      header = obj;
      const { node_count: _count, ...rest } = obj;
      trace = { ...rest, nodes: [] };
      onHeader?.(header);
    } else {
      trace.nodes.push(pageNode(obj)); // float32 values as the compact form gives them (./compact.js)
      onNode?.(trace.nodes.at(-1), trace.nodes.length - 1);
    }
  };
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n")) >= 0) {
      take(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 1);
    }
  }
  take(buffer);
  if (!trace) throw new Error("the server sent an empty trace");
  if (trace.nodes.length !== header.node_count) {
    throw new Error(`the trace stream ended after ${trace.nodes.length} of ${header.node_count} nodes`);
  }
  return trace;
}

// ---- the documents kept in memory, and the computation in the browser ------------------------------

const kept = new Map(); // "json URL" / "bytes URL" → Promise of the document, once per page (a failure is forgotten)
function keep(key, load) {
  if (!kept.has(key))
    kept.set(
      key,
      load().catch((e) => {
        kept.delete(key);
        throw e;
      }),
    );
  return kept.get(key);
}

/** The weights a trace names (its `weights_url`) as safetensors bytes, fetched once per page and URL
 *  (a refusal is forgotten, to be asked again); the browser revalidates them with the ETag. */
export const fetchWeightBytes = (url) => fetchBytes(url);

function fetchBytes(url) {
  return keep(`bytes ${url}`, () => get(located(url, true), "application/octet-stream").then((r) => r.arrayBuffer()));
}

/** What ../compute/trace.js reads its documents through (the API's own addresses): each fetched once and
 *  kept, from the server or the static folder, so that they are at hand when the server is gone. */
export const keptDocuments = Object.freeze({
  json: (url) => keep(`json ${url}`, () => fetchJson(url)),
  bytes: fetchBytes,
});

if (STATIC) numbersSource.set("browser");

function setSource(next) {
  if (next !== numbersSource.get()) numbersSource.set(next);
}

// the computation in the browser, its own chunk of the bundle: loaded at need, or ahead by keepForOffline; the
// page's parts of a trace (figures, scene) another, smaller one that the served page loads with its first trace
let local = null,
  parts = null;
const localModule = () =>
  (local ??= import("../compute/trace.js").catch((e) => {
    local = null;
    throw e;
  }));
const pageParts = () =>
  (parts ??= import("../compute/page_parts.js").catch((e) => {
    parts = null;
    throw e;
  }));

/** `what` (computeTrace, computeBeam) of ../compute/trace.js run over the kept documents; `how` is the source said. */
async function computed(what, args, how) {
  setSource(how);
  try {
    return await (await localModule())[what](...args, keptDocuments);
  } catch (err) {
    if (!err.unreachable) throw err; // a refused input: numbers.js's message, the API's own
    throw Object.assign(
      new Error(
        "The server cannot be reached, and this page had not yet kept what computing "
          + "this in your browser needs (the page keeps it shortly after the stage is drawn).",
      ),
      { cause: err },
    );
  }
}

/** @param {string | number} input  @param {Record<string, any>} options  @param {TraceCallbacks} callbacks
 *  @param {string} how  @returns {Promise<import("../types.js").Trace>} */
async function computedTrace(input, options, { onHeader } = {}, how) {
  const { ablation = [], checkpoint = null, model = "", worked = null } = options;
  const trace = await computed("computeTrace", [String(input), { ablation, checkpoint, model, worked }], how);
  const { nodes, ...head } = trace;
  onHeader?.({ ...head, node_count: nodes.length });
  return trace;
}

/** After the stage is live, in idle time: fetches and keeps what computing `input`'s trace here needs (the
 *  module, then one run of it, which asks for the program, the number words, the weights, …, and whatever
 *  else the module lists in documentsToKeep(options) → [{url, binary}], e.g. other inputs' shapes), so that
 *  the page goes on when the server goes away. Nothing to do in the static build (the folder is all local). */
export async function keepForOffline(input, options = {}) {
  if (STATIC) return false;
  const computing = await localModule();
  const { ablation = [], checkpoint = null, model = "" } = options;
  // its scene too: the server answers the static build's structure file at the same URL (app/routes/scenes.py)
  await computing.computeTrace(String(input), { ablation, checkpoint, model }, keptDocuments);
  const more = computing.documentsToKeep?.({ checkpoint, model }) || [];
  await Promise.all(more.map(({ url, binary }) => (binary ? keptDocuments.bytes(url) : keptDocuments.json(url))));
  return true;
}
