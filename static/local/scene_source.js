// The scene of a trace computed in the browser: its shape's structure (the static build's file, written by
// app/site_scenes.py from scene/structure.py, and answered at the same URL by the served app) with the
// input's own parts added (./scene.js personalize). With parts switched off, the intact structure of the
// shape is ablated first by ./ablated.js, given the shape's patch: its parts (<n>-<m>.parts.json.gz) and
// the rest, the same for every shape of the model (ablation.json.gz).
import { ablatedStructure } from "./ablated.js";
import { personalize } from "./scene.js";

const structures = new Map();

/** The gzip-compressed JSON document at `url`, read once per URL. */
function structureAt(fetcher, url) {
  if (!structures.has(url)) {
    structures.set(url, fetcher.bytes(url).then(async (bytes) => {
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      return JSON.parse(await new Response(stream).text());
    }).catch((e) => { structures.delete(url); throw e; }));
  }
  return structures.get(url);
}

/** The scene of `trace` from its shape's structure document, the shape's patch ({...rest, parts}) and the
 *  parts switched off (none: the patch is not read). */
export function sceneOf(structure, patch, ablation, trace) {
  const intact = ablation.length ? { ...structure, scene: ablatedStructure(structure.scene, patch, ablation) } : structure;
  return personalize(intact, trace);
}

/** computeTrace's `scene` option: the scene the server would build for `trace` (its derived figures set). */
export async function browserScene(trace, { fetcher, program, request }) {
  const shape = `/site/scene/${program.model}/${trace.source_tokens.length}-${trace.target_tokens.length}`;
  const off = request.ablation;
  const [structure, parts, rest] = await Promise.all([structureAt(fetcher, `${shape}.json.gz`),
    off.length ? structureAt(fetcher, `${shape}.parts.json.gz`) : null,
    off.length ? structureAt(fetcher, `/site/scene/${program.model}/ablation.json.gz`) : null]);
  return sceneOf(structure, off.length ? { ...rest, parts } : null, off, trace);
}
