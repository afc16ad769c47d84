// What the page shows for one trace, computed here from the trace's tensors whichever side ran the network
// (the server, or the engine in this page): the article's live figures (./derived.js) and the scene the
// stage draws (./scene_source.js: the shape's structure with this input's own parts). The served page and
// the static site both come through here, so each rule is written once.
//
//   withPageParts(trace, model, fetcher, worked) → Promise<trace>, with `derived` and `scene` set
//
// `trace` names the model that ran (`model`: "2017", "modern": where its structures lie) and the parts
// switched off (`ablation`); `model` is the model as the page asks for it ("" for the default, whose
// documents are asked without ?model=); `fetcher` = { json(url), bytes(url) } answers the API's own
// addresses (the model's recipe, the shape's structure), from the server or the static folder; `worked` is
// the worked row a reader chose ({head, row}, from 0; null: the rule's), kept as the trace's `worked_asked`.
import { liveFigures } from "./derived.js";
import { browserScene } from "./scene_source.js";

/** @param {import("../types.js").Trace} trace  @param {string} model  @param {import("../types.js").Fetcher} fetcher
 *  @param {{head: number, row: number} | null} [worked]  @returns {Promise<import("../types.js").Trace>} */
export async function withPageParts(trace, model, fetcher, worked = null) {
  trace.worked_asked = worked;
  const context = { fetcher, model, program: { model: trace.model }, request: { ablation: trace.ablation } };
  trace.derived = await liveFigures(trace, context); // first: the scene's loss marks read its rows
  trace.scene = await browserScene(trace, context);
  return trace;
}
