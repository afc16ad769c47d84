// A program (recorder/program.py, GET /api/program) run: its nodes for the input's lengths and the parts
// switched off, each computed by its operator (ops.js) from the parameters, the program's inputs and
// its tables. Nothing here knows the model: what a node is comes from its op, inputs and attrs only.
//
//   instantiate(program, n, m, off) → the trace's graph: [{id, op, inputs, attrs, shape, dtype}]
//   new Run(program, weights, {sourceIds, targetIds, off}).value(id) → a node's tensor, computed on demand
import { compute } from "./ops.js";
import { tensor } from "./tensor.js";

const plain = (v) => (v === null ? -Infinity : v);

/** The program's nodes present for the parts switched off (`off`, a Set), their inputs read through absent
 *  nodes to the values they stand for, their shapes at lengths n and m. */
export function instantiate(program, n, m, off = new Set()) {
  const dims = { n, m },
    instead = new Map();
  for (const x of program.nodes) if ("else" in x && !off.has(x.when_off)) instead.set(x.id, x.else);
  const read = (i) => {
    while (instead.has(i)) i = instead.get(i);
    return i;
  };
  return program.nodes
    .filter((x) => x.when_off === undefined || off.has(x.when_off))
    .map((x) => ({
      id: x.id,
      op: x.op,
      inputs: x.inputs.map(read),
      attrs: x.attrs,
      shape: x.shape.map((d) => dims[d] ?? d),
      dtype: x.dtype,
    }));
}

/** Which nodes read, directly or not, one of `roots` (input or node ids): e.g. everything the decoder's
 *  rows change. Constants read what their compute steps read, a length named in their attrs included. */
export function readers(program, roots) {
  const hit = new Set(roots);
  for (const x of program.nodes) {
    const reads = x.compute ? x.compute.flatMap((s) => [...s.inputs, ...Object.values(s.attrs).flat()]) : x.inputs;
    if (reads.some((i) => hit.has(i))) hit.add(x.id);
  }
  return hit;
}

/** One run of the program over given token ids: node values computed on demand and kept. `known`: values
 *  to reuse (another run's, for nodes that do not read what differs). */
export class Run {
  constructor(program, weights, { sourceIds, targetIds, off = new Set(), known = null }) {
    this.program = program;
    this.weights = weights;
    this.nodes = new Map(instantiate(program, sourceIds.length, targetIds.length, off).map((x) => [x.id, x]));
    this.declared = declaredOf(program);
    const scalar = (v) => tensor([], [v], "int64");
    this.values = new Map(known || []);
    this.fixed = new Map([
      ...tablesOf(program),
      ["n", scalar(sourceIds.length)],
      ["m", scalar(targetIds.length)],
      ["source_ids", tensor([sourceIds.length], sourceIds, "int64")],
      ["target_ids", tensor([targetIds.length], targetIds, "int64")],
    ]);
    this.dims = { n: sourceIds.length, m: targetIds.length };
  }

  /** The tensor of a node, parameter, table or input. */
  value(id) {
    const have = this.values.get(id) ?? this.fixed.get(id) ?? this.weights.get(id);
    if (have) return have;
    const node = this.nodes.get(id);
    if (!node) throw new Error(`the program has no tensor ${id}`);
    const out =
      node.op === "Constant"
        ? this.constant(node)
        : compute(
            node.op,
            node.inputs.map((i) => this.value(i)),
            node.attrs,
          );
    const t = { shape: out.shape, data: out.data, dtype: node.dtype };
    this.values.set(id, t);
    return t;
  }

  constant(node) {
    const spec = this.declared.get(node.id);
    if ("value" in spec) return { shape: node.shape, data: Float64Array.from(spec.value, plain) };
    const local = new Map();
    let out = null;
    for (const step of spec.compute) {
      const attrs = Object.fromEntries(
        Object.entries(step.attrs).map(([k, v]) => [k, Array.isArray(v) ? v.map((d) => this.dims[d] ?? d) : v]),
      );
      out = compute(
        step.op,
        step.inputs.map((i) => local.get(i) ?? this.value(i)),
        attrs,
      );
      local.set(step.id, out);
    }
    return out;
  }

  /** Every node of the trace in order, as the trace document writes them (data as float64 arrays). */
  trace() {
    return [...this.nodes.values()].map((x) => ({ ...x, data: this.value(x.id).data }));
  }
}

const declared = new WeakMap(),
  tables = new WeakMap();

function declaredOf(program) {
  if (!declared.has(program)) declared.set(program, new Map(program.nodes.map((x) => [x.id, x])));
  return declared.get(program);
}

function tablesOf(program) {
  if (!tables.has(program))
    tables.set(
      program,
      new Map(program.tables.map((t) => [t.id, tensor(t.shape, Float64Array.from(t.data, plain), t.dtype)])),
    );
  return tables.get(program);
}
