// Computes the go-deeper pages' per-input tables (static/compute/topic_tables.js) of each trace a test wrote,
// over its model's recipe, and prints them as JSON: {case name: {slug: [table]}}.
// Usage: node topic_tables.mjs DIR (DIR holds cases.json, [{name, model, trace}], and recipe-MODEL.json)
/* global process */ // run by Node (tests/page/test_deeper.py)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { allTopicTables } from "../static/compute/topic_tables.js";

const dir = process.argv[2];
const read = (name) => JSON.parse(readFileSync(join(dir, name), "utf8"));
const out = {};
for (const c of read("cases.json")) out[c.name] = allTopicTables(c.trace, read(`recipe-${c.model}.json`));
process.stdout.write(JSON.stringify(out));
