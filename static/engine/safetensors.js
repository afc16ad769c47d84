// The parameters' file format, read without knowing the model: the page's fetcher (static/js/api.js, through
// static/stage/data.js) and the computation in the page (static/compute/trace.js) both read weights with it, so it
// lives below both (the engine imports nothing of the page).

/** /api/weights as safetensors (an 8-byte little-endian header length, a JSON header of dtype, shape and
 *  byte offsets, then the data, here float32 little-endian) as tensors by id, in the order the header's
 *  metadata lists (the JSON document's); each value the float32 itself, held in a Float64Array. */
export function parseSafetensors(buffer) {
  const view = new DataView(buffer);
  const headerLength = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, headerLength)));
  const { __metadata__: meta = {}, ...tensors } = header;
  const order = meta.order ? meta.order.split(",") : Object.keys(tensors);
  const out = new Map();
  for (const id of order) {
    const t = tensors[id];
    if (t.dtype !== "F32") throw new Error(`weights: ${id} is ${t.dtype}, not F32`);
    const [start, end] = t.data_offsets,
      at = 8 + headerLength + start;
    const data = new Float64Array((end - start) / 4);
    for (let i = 0; i < data.length; i++) data[i] = view.getFloat32(at + 4 * i, true);
    out.set(id, { id, shape: t.shape, data });
  }
  return out;
}
