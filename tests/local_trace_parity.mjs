// Node's half of tests/page/test_local_trace.py: for each case, static/compute/trace.js computeTrace (or computeBeam)
// against the running server's answer to the same request — the compact trace decoded as the page decodes
// it (static/js/compact.js), /api/beam, or the 422 and its message. Prints one JSON report.
//   node local_trace_parity.mjs BASE_URL CASES_JSON [plant]
// `plant` alters what the computation reads (the program's lens count and ablation message, the weights,
// beam's alpha), so that every comparison must fail.
/* global process, fetch, performance, URLSearchParams */ // run by Node (tests/page/test_local_trace.py)
import { readFileSync } from "node:fs";
import { decodeCompactTrace } from "../static/js/compact.js";
import { COMPACT, traceUrl } from "../static/js/api.js";
import { computeBeam, computeTrace, programUrl } from "../static/compute/trace.js";
import { compareBeam } from "./engine_compare.mjs";
import { canonical, headerProblems, near, nodeProblems } from "./local_compare.mjs";

const [base, casesFile, plant] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(casesFile, "utf8"));

/** fetch, asked once more when the server had closed an idle connection as Node reused it (uvicorn closes
 *  them after 5 s; the computation holds Node's one thread that long). */
async function get(url, init) {
  try {
    return await fetch(url, init);
  } catch {
    return fetch(url, init);
  }
}

/** A response, or its refusal as static/js/api.js makes it (the server's message, err.status). */
async function ok(response) {
  if (response.ok) return response;
  const body = await response.json().catch(() => null);
  throw Object.assign(new Error(body?.detail?.message || `the server answered ${response.status}`), {
    status: response.status,
  });
}

/** The API's documents over HTTP, as a page's fetcher answers them; `plant` alters three of them. */
const fetcher = {
  async json(url) {
    const doc = await (await ok(await get(base + url))).json();
    if (plant && url.startsWith("/api/program")) {
      doc.trace.lens_top -= 1;
      doc.decoding.alpha += 0.1;
      doc.refusals.ablation.messages.refused = `x${doc.refusals.ablation.messages.refused}`;
    }
    return doc;
  },
  async bytes(url) {
    const buffer = await (
      await ok(await get(base + url, { headers: { Accept: "application/octet-stream" } }))
    ).arrayBuffer();
    if (plant) {
      // every parameter scaled by 1 + 1e-3 (the data follow the 8-byte length and the header)
      const view = new DataView(buffer);
      for (let at = 8 + Number(view.getBigUint64(0, true)); at < buffer.byteLength; at += 4)
        view.setFloat32(at, view.getFloat32(at, true) * 1.001, true);
    }
    return buffer;
  },
};

async function served(url, accept) {
  const r = await get(base + url, { headers: { Accept: accept } });
  if (!r.ok) return { refused: { status: r.status, message: (await r.json()).detail.message } };
  return { body: accept === COMPACT ? decodeCompactTrace(await r.arrayBuffer()).trace : await r.json() };
}

async function outcome(work) {
  const t0 = performance.now();
  try {
    return { value: await work(), ms: performance.now() - t0 };
  } catch (e) {
    return { refused: { status: e.status, message: e.message }, ms: performance.now() - t0 };
  }
}

function beamProblems(ours, theirs) {
  const problems = compareBeam(ours, theirs);
  for (const k of [
    "weights_version",
    "number",
    "source_tokens",
    "beam_size",
    "alpha",
    "max_length",
    "length_penalty",
    "german_pieces",
    "german",
  ]) {
    if (canonical(ours[k]) !== canonical(theirs[k]))
      problems.push(`${k}: ${canonical(ours[k])} ≠ ${canonical(theirs[k])}`);
  }
  if (
    canonical(Object.keys(ours.length_penalties)) !== canonical(Object.keys(theirs.length_penalties))
    || Object.entries(theirs.length_penalties).some(([n, v]) => !near(ours.length_penalties[n], v))
  )
    problems.push("length_penalties differ");
  if (canonical(Object.keys(ours)) !== canonical(Object.keys(theirs)))
    problems.push(`keys ${Object.keys(ours)} ≠ ${Object.keys(theirs)}`);
  return problems;
}

async function one(c) {
  const beam = c.kind === "beam";
  // the server's answer read whole first: Node's one thread computing would leave its body unread meanwhile
  const theirs = await (beam
    ? served(`/api/beam?${new URLSearchParams({ input: c.input, model: c.options.model })}`, "application/json")
    : served(traceUrl(c.input, c.options), COMPACT));
  const ours = await outcome(() =>
    beam ? computeBeam(c.input, c.options, fetcher) : computeTrace(c.input, { ...c.options, parts: false }, fetcher),
  );
  if (theirs.refused || ours.refused) {
    const same = canonical(theirs.refused) === canonical(ours.refused);
    return {
      refused: theirs.refused ?? null,
      problems: same ? [] : [`refusal ${canonical(ours.refused)} ≠ ${canonical(theirs.refused)}`],
    };
  }
  const pieces = beam ? null : (await fetcher.json(programUrl(c.options.model))).vocabulary.pieces;
  const problems = beam
    ? beamProblems(ours.value, theirs.body)
    : [...headerProblems(ours.value, theirs.body, pieces), ...nodeProblems(ours.value, theirs.body)];
  return { refused: null, problems, ms: ours.ms, nodes: beam ? null : ours.value.nodes.length };
}

const report = [];
for (const c of cases) {
  const r = await one(c);
  report.push({ name: c.name, ...r, problem_count: r.problems.length, problems: r.problems.slice(0, 4) });
}
process.stdout.write(JSON.stringify(report));
