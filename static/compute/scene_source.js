// The scene of a trace computed in the browser: its shape's structure (the static build's files, written by
// app/service/scenes.py from scene/structure.py, and answered at the same URLs by the served app: the base of
// the source length, <n>.json.gz, and the shape's difference from it, <n>-<m>.diff.json.gz, ./json_diff.js) with the
// input's own parts added (./scene.js personalize). The structure is the same whatever parts are switched off:
// every part's gate has its place in it (scene/gates.py), drawn while the trace has the gate's node.
import { jsonPatched } from "./json_diff.js";
import { personalize } from "./scene.js";

const structures = new Map();

/** The gzip-compressed JSON document at `url`, read once per URL. */
function structureAt(fetcher, url) {
  if (!structures.has(url)) {
    structures.set(
      url,
      fetcher
        .bytes(url)
        .then(async (bytes) => {
          const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
          return JSON.parse(await new Response(stream).text());
        })
        .catch((e) => {
          structures.delete(url);
          throw e;
        }),
    );
  }
  return structures.get(url);
}

/** computeTrace's `scene` option: the scene the server would build for `trace` (its derived figures set). The
 *  request ({ablation, …}) is not read: what is switched off is the trace's own (its gates, its `ablation`).
 *  @param {import("../types.js").Trace} trace
 *  @param {{fetcher: import("../types.js").Fetcher, program: {model: string}}} context
 *  @returns {Promise<import("../types.js").Scene>} */
export async function browserScene(trace, { fetcher, program }) {
  const folder = `/site/scene/${program.model}`,
    n = trace.source_tokens.length;
  const [base, diff] = await Promise.all([
    structureAt(fetcher, `${folder}/${n}.json.gz`),
    structureAt(fetcher, `${folder}/${n}-${trace.target_tokens.length}.diff.json.gz`),
  ]);
  return personalize(jsonPatched(base, diff), trace);
}
