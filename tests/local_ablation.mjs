// Applies static/local/ablated.js to the cases tests/test_local_ablation.py writes:
// node tests/local_ablation.mjs IN.json OUT.json, IN = {cases: [{structure, patch, sets: [[part, …], …]}]},
// OUT = {results: [[structure per set, …] per case]}.
/* global process */  // run by Node (tests/test_local_ablation.py)
import { readFileSync, writeFileSync } from "node:fs";
import { ablatedStructure } from "../static/local/ablated.js";

const [input, output] = process.argv.slice(2);
const { cases } = JSON.parse(readFileSync(input, "utf8"));
const results = cases.map((c) => c.sets.map((parts) => ablatedStructure(c.structure, c.patch, parts)));
writeFileSync(output, JSON.stringify({ results }));
