// The numbers the stage draws: the trace's nodes (per input) and the parameters (fetched once).
import { flatIndex } from "./cellmap.js";
import { fetchWeightBytes } from "../js/api.js";
import { parseSafetensors } from "../engine/safetensors.js";

const parsed = new Map();

/** Every parameter tensor of the weights a trace names (its `weights_url`; by default the shipped
 *  model's), fetched once per page and URL through the API client (safetensors: raw float32, a third
 *  of the JSON's bytes). */
export function fetchWeights(url = "/api/weights") {
  if (!parsed.has(url))
    parsed.set(
      url,
      fetchWeightBytes(url)
        .then(parseSafetensors)
        .catch((e) => {
          parsed.delete(url);
          throw e;
        }),
    );
  return parsed.get(url);
}

/** /api/weights' JSON document ({parameters: [{id, shape, data}]}) as tensors by id. Each number is read back
 *  as the float32 the JSON's shortest digits stand for (held in a Float64Array, as parseSafetensors gives it),
 *  like the trace's values (static/js/compact.js): a cell is explained from the very float32s the server used. */
export function parseWeights(json) {
  const float32s = (p) => new Float64Array(Float32Array.from(p.data));
  return new Map(json.parameters.map((p) => [p.id, { id: p.id, shape: p.shape, data: float32s(p) }]));
}

/** A node's values as a Float64Array: a float32 node's Float32Array (static/js/compact.js) widened exactly, −∞
 *  kept; true and false become 1 and 0. */
const tensorData = (values) => new Float64Array(values);

/** A trace's nodes as tensors (op, inputs, attrs, shape, dtype, data).  @param {import("../types.js").Trace} trace */
export function traceTensors(trace) {
  const out = new Map();
  for (const n of trace.nodes) {
    out.set(n.id, {
      id: n.id,
      op: n.op,
      inputs: n.inputs,
      attrs: n.attrs || {},
      shape: n.shape,
      dtype: n.dtype,
      data: tensorData(n.data),
    });
  }
  return out;
}

/** A block's values in drawn (row, column) order. */
export function drawnValues(block, tensor) {
  const rows = block.rows,
    cols = block.cols,
    data = tensor.data,
    out = new Float64Array(rows * cols);
  for (let r = 0, i = 0; r < rows; r++) for (let c = 0; c < cols; c++, i++) out[i] = data[flatIndex(block, r, c)];
  return out;
}
