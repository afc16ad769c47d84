// The one reader of a streamed trace: /api/trace/stream (or /api/trace sent with
// Accept: application/x-ndjson) answers newline-delimited JSON: a header (the trace without its nodes,
// plus node_count), then one node per line in the order computed.
//
//   readTraceStream(url, { onHeader, onNode, signal }) → Promise<trace>
//
// resolves to the same object /api/trace sends ({...header, nodes}, without node_count); onHeader(header)
// is called with the first line as sent (node_count included) and onNode(node, index) with each node as
// it arrives, so a caller may draw before the end. A refused input rejects with the server's message
// (err.status is the HTTP status); a stream cut short rejects too.

export async function readTraceStream(url, { onHeader, onNode, signal } = {}) {
  const response = await fetch(url, { headers: { Accept: "application/x-ndjson" }, signal });
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    throw Object.assign(new Error(body?.detail?.message || `the server answered ${response.status}`),
      { status: response.status });
  }
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
