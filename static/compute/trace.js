// One input's whole trace, and its beam search, computed in the page instead of asked of the server: the
// very objects static/js/api.js `loadTrace` and GET /api/beam give for the same request.
//
//   computeTrace(input, { ablation, checkpoint, model, parts, worked }, fetcher) → Promise<trace>
//   computeBeam(input, { model }, fetcher) → Promise</api/beam's document>
//
// `fetcher` = { json(url), bytes(url) } answers the API's own URLs ("/api/program?model=modern",
// "/api/numbers", the program's `weights` URLs as safetensors bytes), from the server or from the static
// folder (static/js/site.js sitePath), in the browser or under Node; what it answers is kept per fetcher
// and URL. A request is read as the API reads it (./refusals.js: the same refusals, err.status 422).
// The numbers: static/engine/decode.js over the program and the weights; the header's facts come from the
// program document (its `trace`, `decoding`, `lens`, `weights`) and the weights' own metadata (their
// version). Then, as for a trace the server sent, the page's own parts (./page_parts.js: the live figures
// and the scene), unless `parts` is false.
import { numberWords } from "../js/numbers.js";
import { parseSafetensors } from "../engine/safetensors.js";
import { beamSearch, browserTrace, lengthPenalty } from "../engine/decode.js";
import { readNumber, readRequest } from "./refusals.js";
import { withPageParts } from "./page_parts.js";

export const NUMBERS_URL = "/api/numbers";

/** Where the API sends a model's program ("" or absent: the default model, asked without ?model=). */
export const programUrl = (model = "") => (model ? `/api/program?${new URLSearchParams({ model })}` : "/api/program");

const kept = new WeakMap(); // fetcher → Map(key → Promise); a failure is forgotten, to be asked again

function once(fetcher, key, make) {
  if (!kept.has(fetcher)) kept.set(fetcher, new Map());
  const store = kept.get(fetcher);
  if (!store.has(key))
    store.set(
      key,
      Promise.resolve()
        .then(make)
        .catch((e) => {
          store.delete(key);
          throw e;
        }),
    );
  return store.get(key);
}

const fetchProgram = (fetcher, model) => once(fetcher, programUrl(model), () => fetcher.json(programUrl(model)));

/** The model's program. The default model's is asked without ?model= (as the page and the static build ask
 *  it: app/site/build.py model_query), so a request that names the default is answered by that one, which names
 *  itself (`model`), where the named URL is not. */
async function programOf(fetcher, model) {
  try {
    return await fetchProgram(fetcher, model);
  } catch (err) {
    const fallback = model ? await fetchProgram(fetcher, "").catch(() => null) : null;
    if (fallback?.model === model) return fallback;
    throw err;
  }
}
const wordsOf = (fetcher) => once(fetcher, NUMBERS_URL, async () => numberWords(await fetcher.json(NUMBERS_URL)));

/** The version a safetensors file's metadata names (app/serving/delivery.py writes it beside the tensors' order). */
function safetensorsVersion(buffer) {
  const length = Number(new DataView(buffer).getBigUint64(0, true));
  return JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, length))).__metadata__?.weights_version ?? "";
}

/** The parameters at `url` (safetensors) as tensors by id, and their weights version. */
const weightsOf = (fetcher, url) =>
  once(fetcher, `weights ${url}`, async () => {
    const buffer = await fetcher.bytes(url);
    return { version: safetensorsVersion(buffer), tensors: parseSafetensors(buffer) };
  });

/** The URL of the weights a request runs: the trained model's or a training snapshot's (program.weights). */
export const weightsUrl = (program, checkpoint) =>
  checkpoint === null ? program.weights.trained : program.weights.checkpoints[String(checkpoint)];

// A node's values as the compact trace decodes them (static/js/compact.js): a float32 one's as a Float32Array
// (each value rounded to float32, −∞ kept); booleans as JSON's true and false; other integers as they are.
function decodedValues(data, dtype) {
  if (dtype === "float32") return new Float32Array(data);
  const out = new Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = dtype === "bool" ? data[i] !== 0 : data[i];
  return out;
}

/** Each decoder position's `top` most probable pieces under a lens (best first, the lower id on a tie), p
 *  as the float32 the server's probabilities are. */
function lensTop(probs, pieces, top) {
  const width = probs.shape[probs.shape.length - 1],
    rows = probs.data.length / width,
    out = [];
  for (let r = 0; r < rows; r++) {
    const row = probs.data.subarray(r * width, (r + 1) * width);
    const order = Array.from(row.keys())
      .sort((a, b) => row[b] - row[a] || a - b)
      .slice(0, Math.min(top, width));
    out.push(order.map((i) => ({ piece: pieces[i], p: Math.fround(row[i]) })));
  }
  return out;
}

/** The trace's `input` (recorder/documents.py Trace.header): the number, its English, the model's German. */
function inputOf(number, outputTokens, program, words) {
  const eos = program.vocabulary.pieces[program.vocabulary.eos];
  const pieces = outputTokens.filter((t) => t !== eos),
    reference = words.germanPieces(number);
  return {
    number,
    english: words.toEnglish(number),
    german_pieces: pieces,
    german: words.joinGerman(pieces),
    reference_pieces: reference,
    correct: pieces.length === reference.length && pieces.every((p, i) => p === reference[i]),
  };
}

/** The trace document (app/documents/schemas.py ServedTraceHeader's fields, in its order, then the nodes). */
function assemble(program, words, request, computed, weights, url) {
  const values = new Map(computed.nodes.map((x) => [x.id, x]));
  const lens = computed.lens.map((layer) => ({
    ...layer,
    top: lensTop(values.get(layer.probs), program.vocabulary.pieces, program.trace.lens_top),
  }));
  return {
    format: program.trace.format,
    weights_version: weights.version,
    input: inputOf(request.number, computed.output_tokens, program, words),
    source_tokens: computed.source_tokens,
    target_tokens: computed.target_tokens,
    output_tokens: computed.output_tokens,
    memory: computed.memory,
    parameters: [...program.parameters],
    ablation: computed.ablation,
    lens,
    model: program.model,
    checkpoint: request.checkpoint,
    weights_url: url,
    nodes: computed.nodes.map(({ data, ...node }) => ({ ...node, data: decodedValues(data, node.dtype) })),
  };
}

/** One input's trace, computed here: what loadTrace(input, { ablation, checkpoint, model }) resolves to. With
 *  `parts: false`, the trace alone, as /api/trace sends it (without the page's figures and scene).
 *  @param {string} input
 *  @param {{ablation?: string[], checkpoint?: number | string | null, model?: string, parts?: boolean,
 *    worked?: {head: number, row: number} | null}} [options]
 *  @param {import("../types.js").Fetcher} [fetcher]
 *  @returns {Promise<import("../types.js").Trace>} */
export async function computeTrace(input, options = {}, fetcher) {
  const { ablation = [], checkpoint = null, model = "", parts = true, worked = null } = options;
  const program = await programOf(fetcher, model),
    words = await wordsOf(fetcher);
  const request = readRequest(program, words, { input, ablation, checkpoint });
  const url = weightsUrl(program, request.checkpoint),
    weights = await weightsOf(fetcher, url);
  const draft = words.ids(words.germanPieces(request.number)); // greedy's guess, checked in one pass (as the server's)
  const computed = browserTrace(
    program,
    weights.tensors,
    words.sourceIds(request.number),
    new Set(request.ablation),
    draft,
  );
  const trace = assemble(program, words, request, computed, weights, url);
  return parts ? withPageParts(trace, model, fetcher, worked) : trace;
}

/** Beam search over one input with the trained model: GET /api/beam's document
 *  (app/service/model_service.py beam_doc). */
export async function computeBeam(input, { model = "" } = {}, fetcher) {
  const program = await programOf(fetcher, model),
    words = await wordsOf(fetcher);
  const number = readNumber(input === null || input === undefined ? input : String(input), words);
  const weights = await weightsOf(fetcher, weightsUrl(program, null));
  const source = words.sourceTokens(number),
    { decoding, vocabulary } = program;
  const { steps, finished, best } = beamSearch(program, weights.tensors, words.ids(source));
  const eos = vocabulary.pieces[vocabulary.eos];
  const pieces = best.tokens.at(-1) === eos ? best.tokens.slice(0, -1) : best.tokens;
  return {
    weights_version: weights.version,
    number,
    source_tokens: source,
    beam_size: decoding.beam_size,
    alpha: decoding.alpha,
    max_length: source.length + decoding.extra_length,
    length_penalty: decoding.length_penalty,
    length_penalties: Object.fromEntries(
      decoding.length_penalty_lengths.map((n) => [String(n), lengthPenalty(n, decoding.alpha)]),
    ),
    steps,
    finished,
    best,
    german_pieces: pieces,
    german: words.joinGerman(pieces),
  };
}
