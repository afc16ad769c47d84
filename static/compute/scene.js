// One input's scene, computed in the page: the structure of its graph's shape (scene/structure.py writes it,
// one document per model, source length and row count) with the input's own parts added here, the one place
// they are computed (tests/scene/test_local_scene.py checks each part against the trace).
//
//   personalize(structure, trace, vocab?) → scene
//
// `structure` is the document ({scene, personal}), `trace` the trace as loadTrace resolves it (header fields
// and nodes; its scene, if any, is not read; with the loss overlay's step, `derived.loss_rows` is; its
// `ablation` says which switches are off: the structure, gates included, is the same whatever is off).
// `vocab`, the vocabulary's tokens, defaults to the document's own. What the parts read (nodes, blocks,
// measures, sentences) is the document's `personal`: nothing here knows an id or a fact of the model.
import { beziers } from "./curves.js";
import { fill, onWorkedHead, withWindows } from "./windows.js";
import { withWorked, workedOf } from "./worked.js";

const rowY = (b, r) => b.y - r - 0.5;

/** A reader of the trace's nodes by id. */
function nodeReader(trace) {
  const nodes = new Map(trace.nodes.map((n) => [n.id, n]));
  return (id) => {
    const n = nodes.get(id);
    if (!n) throw new Error(`the trace has no node ${id}`);
    return n;
  };
}

function axisWords(trace, vocab) {
  return {
    source: [...trace.source_tokens],
    target: [...trace.target_tokens],
    output: [...trace.output_tokens],
    vocab: [...vocab],
  };
}

function rowNames(trace, vocab, names) {
  const token = (t) => fill(names.token, { token: t });
  return {
    source: trace.source_tokens.map(token),
    target: trace.target_tokens.map((a, i) => fill(names.decoder, { reads: a, writes: trace.output_tokens[i] })),
    vocab: vocab.map(token),
  };
}

/** From E's row of each token to its row of the embedding (scene/connectors.py threads). */
function threads(palette, byId, node, t) {
  const starts = [],
    controls = [],
    ends = [],
    e = byId.get(t.from);
  for (const end of t.ends) {
    const emb = byId.get(end.block),
      leftEnd = byId.get(end.end).x - t.end_gap;
    node(end.tokens).data.forEach((tok, r) => {
      const a = [end.left ? e.x : e.x + e.w, rowY(e, tok), t.z],
        b = [leftEnd, rowY(emb, r), t.z];
      starts.push(a);
      ends.push(b);
      controls.push([end.left ? a[0] - t.bend : a[0] + t.bend, (a[1] + b[1]) / 2, t.lift]);
    });
  }
  return { kind: t.kind, color: palette.connectors[t.kind], lines: beziers(starts, controls, ends, t.segments) };
}

/** A structural connector with its curves drawn: the structure gives a curve as its ends and control point
 * (scene/connectors.py arc), a polyline as its points. */
const drawnCurves = (c) => ({
  ...c,
  lines: c.lines.map((l) => (Array.isArray(l) ? l : beziers([l.from], [l.control], [l.to], l.segments)[0])),
});

/** Token names beside the id columns and the chosen tokens (scene/labels.py token_labels). */
function tokenLabels(byId, axes, node, vocab, t) {
  const out = [];
  for (const { block, chosen, axis } of t.blocks) {
    const b = byId.get(block),
      proto = chosen ? t.chosen : t.ids;
    const tokens = chosen ? node(block).data.map((i) => vocab[i]) : (axes[axis] ?? []);
    const x = chosen ? b.x + b.w + t.gap : b.x - t.gap;
    tokens.slice(0, b.rows).forEach((text, r) => out.push({ ...proto, text, x, y: rowY(b, r) }));
  }
  return out;
}

/** A step's marked cells, (row, column) pairs: each row's value of its marks' `columns` node and, with the
 * loss overlay, each training row's reference piece (scene/build.py _marked). */
function marking(trace, node, w) {
  return (step) => {
    const out = step.marks.flatMap((m) => node(m.columns).data.map((c, r) => [r, c]));
    if (step.overlay?.name === w.loss_overlay) {
      const rows = trace.derived?.loss_rows;
      if (!rows) throw new Error("the loss overlay's marks need the trace's derived.loss_rows");
      for (const r of rows) if (r.forced) out.push([r.row, r.reference_id]);
    }
    return out;
  };
}

/** @param {import("../types.js").SceneStructure} structure  @param {import("../types.js").Trace} trace
 *  @param {string[]} [vocab]  @returns {import("../types.js").Scene} */
export function personalize(structure, trace, vocab = structure.personal.vocab) {
  const base = structure.scene,
    own = structure.personal,
    node = nodeReader(trace);
  const byId = new Map(base.blocks.map((b) => [b.id, b]));
  const axes = axisWords(trace, vocab);
  const worked = workedOf(own.worked, trace, node);
  let steps = withWorked(base.steps, worked, own.worked, trace.source_tokens.length);
  steps = onWorkedHead(steps, byId, worked, own.worked, own.windows, base.cell.head_gap);
  steps = withWindows(steps, byId, marking(trace, node, own.windows), axes, own.windows);
  const off = new Set(trace.ablation ?? []);
  return {
    ...base,
    axes,
    row_names: rowNames(trace, vocab, own.row_names),
    connectors: [threads(base.palette, byId, node, own.threads), ...base.connectors.map(drawnCurves)],
    labels: [...base.labels, ...tokenLabels(byId, axes, node, vocab, own.token_labels)],
    steps,
    switches: base.switches.map((s) => ({ ...s, off: off.has(s.id) })),
    worked,
  };
}
