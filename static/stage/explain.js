// Where a cell's value comes from: one small evaluator per ONNX operator, driven by the node's own
// `op`, `inputs` and `attrs` (never by its id). For one output element each evaluator gives
//   - the value recomputed in float64 from the trace's inputs,
//   - exactly the input elements it was computed from (the dependency set), and
//   - the op's formula for that element as LaTeX, with the actual numbers substituted.
// The formulas name inputs by the operator's own argument names (Gemm: A, B, C; LayerNormalization:
// X, γ, β; Gather: D, I; …), so they read the same for every model the scene can draw.
//
//   explainCell(graph, id, row, col, ctx) → {id, row, col, index, op, value, recomputed, given,
//                                           inputs: [{id, row, col, value, arg}], args, formula, top}
// graph: Map id → {op, inputs, attrs, shape, data} (parameters have no op); ctx.coords(id, index) →
// {row, col} in the inspector's convention; ctx.token(id, value) → a token's name or undefined.
// The whole-tensor engine (static/engine/ops.js) computes the same operators for every element at once;
// both read elements by the index rules of static/engine/tensor.js.
import { flatIndex } from "../engine/tensor.js";
import { OPS, at, range } from "./evaluators.js";
import { sub, tex, texText } from "./explain-tex.js";

export { flatIndex, tex, texText };

/** (row, col) in the inspector's convention → the tensor's index, or an error message. */
export function indexOf(t, id, row, col) {
  const shape = t.shape || [];
  if (!Number.isInteger(row) || !Number.isInteger(col) || row < 0 || col < 0)
    return { error: `row and column of ${id} must be whole numbers ≥ 0 (got ${row}, ${col})` };
  const size = shape.length ? shape.join(" × ") : "one";
  if (shape.length === 0) return row || col ? { error: `${id} is a scalar: only the cell (0, 0)` } : { index: [] };
  if (shape.length === 1) {
    if (row && col) return { error: `${id} is a vector of ${shape[0]}: a row or a column index, not both` };
    const k = Math.max(row, col);
    return k < shape[0]
      ? { index: [k] }
      : { error: `${id} has ${size} cells: index ${k} is out of range (0…${shape[0] - 1})` };
  }
  if (shape.length !== 2) return { error: `${id} has ${shape.length} dimensions; only 0, 1 and 2 are drawn` };
  if (row >= shape[0]) return { error: `${id} has ${size} cells: row ${row} is out of range (0…${shape[0] - 1})` };
  if (col >= shape[1]) return { error: `${id} has ${size} cells: column ${col} is out of range (0…${shape[1] - 1})` };
  return { index: [row, col] };
}

/** The operators this module explains. */
export const EXPLAINED_OPS = Object.keys(OPS);

/** Argument names of each operator (ONNX's, shortened), as the formulas write them. */
function argNames(op, count) {
  const names = {
    Gemm: ["A", "B", "C"],
    MatMul: ["A", "B"],
    Add: ["A", "B"],
    Sub: ["A", "B"],
    Mul: ["A", "B"],
    Div: ["A", "B"],
    LayerNormalization: ["X", "\\gamma", "\\beta"],
    RMSNormalization: ["X", "\\gamma"],
    Gather: ["D", "I"],
    Where: ["C", "A", "B"],
    RotaryEmbedding: ["X", "\\cos", "\\sin", "\\text{pos}"],
  }[op];
  if (op === "Concat") return range(count).map((k) => `X^{(${k + 1})}`);
  return names || range(count).map(() => "X");
}

/** The input cells an evaluator's result was computed from, each once, in the inspector's convention. */
function inputCells(node, inputs, res, ctx) {
  const seen = new Set(),
    cells = [];
  for (const [k, idx] of res.cells) {
    const inId = node.inputs[k],
      key = `${inId}|${idx.join(",")}`;
    if (seen.has(key)) continue;
    seen.add(key);
    cells.push({ id: inId, ...ctx.coords(inId, idx), value: at(inputs[k], idx), arg: k, index: idx });
  }
  return cells;
}

/** The formula as aligned LaTeX: Y at index `o` = the definition = … = the value, then the `where` lines. */
function alignedFormula(o, res) {
  const lhs = `Y${sub(o)}`,
    steps = [...res.lines];
  const last = tex(res.value, "sig6");
  if (!res.given) steps.push(last);
  const rows = [`${lhs} &= ${steps[0]}`, ...steps.slice(1).map((s) => `&= ${s}`)];
  for (const [w, rhs] of res.where || []) rows.push(`${w} &= ${rhs}`);
  return `\\begin{aligned} ${rows.join(" \\\\ ")} \\end{aligned}`;
}

/** Everything about one cell: see the header. Bad arguments give {error}. */
export function explainCell(graph, id, row, col, ctx) {
  if (!Number.isInteger(row) || !Number.isInteger(col) || row < 0 || col < 0) {
    const got = `(got “${id}”, ${row}, ${col})`;
    return { error: `a cell is named by its tensor, row and column, whole numbers ≥ 0 ${got}` };
  }
  const node = graph.get(id);
  if (!node) return { error: `there is no tensor “${id}” in this trace` };
  const pos = indexOf(node, id, row, col);
  if (pos.error) return { error: pos.error };
  const o = pos.index,
    op = node.op || "Parameter",
    fn = OPS[op];
  const value = at(node, o);
  if (!fn) return { error: `${id} is computed by ${op}, which this page does not explain yet` };
  const inputs = (node.inputs || []).map((i) => graph.get(i));
  const missing = (node.inputs || []).find((i, k) => !inputs[k]);
  if (missing) return { error: `${id} reads “${missing}”, which is not in this trace` };
  let res;
  try {
    res = fn(node, inputs, o, ctx);
  } catch (e) {
    return { error: `${id} (${op}): ${e.message}` };
  }
  const args = argNames(op, inputs.length);
  const cells = inputCells(node, inputs, res, ctx);
  const formula = alignedFormula(o, res);
  const top = (res.top || []).map((t) => ({
    value: t.value,
    parts: t.parts.map(([k, idx]) => ({
      id: node.inputs[k],
      ...ctx.coords(node.inputs[k], idx),
      index: idx,
      arg: args[k],
      value: at(inputs[k], idx),
    })),
  }));
  return {
    id,
    row,
    col,
    index: o,
    op,
    value,
    recomputed: res.value,
    given: !!res.given,
    inputs: cells.map(({ arg, ...c }) => ({ ...c, arg: args[arg] })),
    args: (node.inputs || []).map((inId, k) => ({ id: inId, arg: args[k] })),
    formula,
    top,
  };
}
