// The one client of the app's API: traces (the compact form, the NDJSON stream or one JSON document),
// the weights (safetensors bytes, fetched once per URL) and the other JSON documents, with a refusal read
// one way: the server's own message (detail.message) and the HTTP status on the Error.
//
//   fetchCompactTrace(url, { onHeader, signal }) → Promise<trace>
//
// /api/trace sent with Accept: application/vnd.anatomy.trace answers the compact form (app/trace_bytes.py:
// a JSON header, then each float32 node's values as float32 bytes), read back by ./compact.js into the
// very object the JSON form parses to, in about half the bytes and without parsing 55 000 numbers. The
// page and the stage ask for it (loadTrace); onHeader(header) is called as with the stream.
//
//   readTraceStream(url, { onHeader, onNode, signal }) → Promise<trace>
//
// /api/trace/stream (or /api/trace sent with Accept: application/x-ndjson) answers newline-delimited
// JSON: a header (the trace without its nodes, plus node_count), then one node per line in the order
// computed. The reader resolves to the same object /api/trace sends ({...header, nodes}, without
// node_count); onHeader(header) is called with the first line as sent (node_count included) and
// onNode(node, index) with each node as it arrives, so a caller may draw before the end. A stream cut
// short rejects too.

import { decodeCompactTrace } from "./compact.js";

const STREAM = "application/x-ndjson";
export const COMPACT = "application/vnd.anatomy.trace";

/** A refused request as an Error: the server's message, else its status; err.status is the HTTP status. */
async function refusal(response) {
  const body = await response.json().catch(() => null);
  return Object.assign(new Error(body?.detail?.message || `the server answered ${response.status}`),
    { status: response.status });
}

async function get(url, accept, signal) {
  const response = await fetch(url, { headers: { Accept: accept }, signal });
  if (!response.ok) throw await refusal(response);
  return response;
}

/** A JSON document of the API. */
export async function fetchJson(url, { signal } = {}) {
  return (await get(url, "application/json", signal)).json();
}

/** The address of one input's trace: the parts switched off, the training snapshot, the model. */
export function traceUrl(input, { ablation = [], checkpoint = null, model = "", stream = false } = {}) {
  const q = new URLSearchParams({ input: String(input) });
  if (ablation.length) q.set("ablate", ablation.join(","));
  if (checkpoint !== null && checkpoint !== undefined) q.set("checkpoint", String(checkpoint));
  if (model) q.set("model", model);
  return `/api/trace${stream ? "/stream" : ""}?${q}`;
}

/** A trace in the compact form; onHeader gets its header (node_count included), as the stream's first line. */
export async function fetchCompactTrace(url, { onHeader, signal } = {}) {
  const response = await get(url, COMPACT, signal);
  if (!response.headers.get("content-type")?.startsWith(COMPACT)) throw new Error("the server sent no compact trace");
  const { head, trace } = decodeCompactTrace(await response.arrayBuffer());
  onHeader?.({ ...head, node_count: trace.nodes.length });
  return trace;
}

/** One input's trace, in the compact form (the page; the stage on its own). */
export const loadTrace = (input, options = {}, callbacks = {}) =>
  fetchCompactTrace(traceUrl(input, options), callbacks);

/** One input's trace, streamed as NDJSON, node by node. */
export const streamTrace = (input, options = {}, callbacks = {}) =>
  readTraceStream(traceUrl(input, { ...options, stream: true }), callbacks);

export async function readTraceStream(url, { onHeader, onNode, signal } = {}) {
  const response = await get(url, STREAM, signal);
  let header = null, trace = null;
  const take = (line) => {
    if (!line.trim()) return;
    const obj = JSON.parse(line);
    if (header === null) {
      header = obj;
      const { node_count: _count, ...rest } = obj;
      trace = { ...rest, nodes: [] };
      onHeader?.(header);
    } else {
      trace.nodes.push(obj);
      onNode?.(obj, trace.nodes.length - 1);
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

const weightBytes = new Map();

/** The weights a trace names (its `weights_url`) as safetensors bytes, fetched once per page and URL
 *  (a refusal is forgotten, to be asked again); the browser revalidates them with the ETag. */
export function fetchWeightBytes(url) {
  if (!weightBytes.has(url)) {
    weightBytes.set(url, get(url, "application/octet-stream").then((r) => r.arrayBuffer())
      .catch((e) => { weightBytes.delete(url); throw e; }));
  }
  return weightBytes.get(url);
}
