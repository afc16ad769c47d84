// The scene of a trace computed in the browser: its shape's structure (the static build's file, written by
// app/site_scenes.py from scene/structure.py) with the input's own parts added (./scene.js personalize).
// An ablated graph's structure comes from the intact one by ./ablated.js, given the shape's patch.
import { personalize } from "./scene.js";

const structures = new Map();

/** The gzip-compressed JSON document at `url`, read once per fetcher and URL. */
function structureAt(fetcher, url) {
  if (!structures.has(url)) {
    structures.set(url, fetcher.bytes(url).then(async (bytes) => {
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      return JSON.parse(await new Response(stream).text());
    }).catch((e) => { structures.delete(url); throw e; }));
  }
  return structures.get(url);
}

/** computeTrace's `scene` option: the scene the server would build for `trace` (its derived figures set). */
export async function browserScene(trace, { fetcher, program, request }) {
  if (request.ablation.length) {
    throw new Error("this build has no layout patches for parts switched off: switch them on, or use the server");
  }
  const url = `/site/scene/${program.model}/${trace.source_tokens.length}-${trace.target_tokens.length}.json.gz`;
  return personalize(await structureAt(fetcher, url), trace);
}
