// STAND-IN (helper 5, branch s10-wire): the page's wiring needs computeTrace and computeBeam with the
// interface helper 4 writes here; until that lands, this file answers them by asking the server for the
// JSON documents (through the fetcher, so whatever the page kept answers offline). The lead replaces the
// whole file with helper 4's at the merge. What is real here: the input is read by numbers.js over
// /api/numbers, so a refused input gets the API's own message with or without the server.
import { numberWords } from "../js/numbers.js";

export const STAND_IN = true;  // tests/test_offline.py reads this: the real module computes any input

let words = null;
async function readInput(input, fetcher) {
  words ??= fetcher.json("/api/numbers").then(numberWords).catch((e) => { words = null; throw e; });
  const read = (await words).parseInput(input);
  if (read.message !== undefined) throw Object.assign(new Error(read.message), { status: 422 });
  return read.number;
}

/** The /api/trace document of an input (header fields and nodes), as loadTrace resolves to. */
export async function computeTrace(input, { ablation = [], checkpoint = null, model = "" } = {}, fetcher) {
  const q = new URLSearchParams({ input: String(await readInput(input, fetcher)) });
  if (ablation.length) q.set("ablate", ablation.join(","));
  if (checkpoint !== null && checkpoint !== undefined) q.set("checkpoint", String(checkpoint));
  if (model) q.set("model", model);
  return fetcher.json(`/api/trace?${q}`);
}

/** The /api/beam document of an input. */
export async function computeBeam(input, { model = "" } = {}, fetcher) {
  const q = new URLSearchParams({ input: String(await readInput(input, fetcher)) });
  if (model) q.set("model", model);
  return fetcher.json(`/api/beam?${q}`);
}
