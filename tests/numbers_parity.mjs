/* global process, Buffer */
// static/js/numbers.js's side of tests/page/test_numbers_js.py, over the document app/service/number_words.py wrote:
//   node tests/numbers_parity.mjs DOC spell START END CHUNK   two sha256 per CHUNK numbers (tokens, ids)
//   node tests/numbers_parity.mjs DOC lines START END         the lines themselves (to name a difference)
//   node tests/numbers_parity.mjs DOC read FORMS              each form of FORMS (a JSON list) read by
//                                                             parseInput and parseNumber
// A number's line: its source tokens and ids, its German pieces and their ids, as the test writes them.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { numberWords } from "../static/js/numbers.js";

const [docPath, mode, ...args] = process.argv.slice(2);
const words = numberWords(JSON.parse(readFileSync(docPath, "utf8")));
const line = (n) => {
  // to name a difference
  const [source, german] = [words.sourceTokens(n), words.germanPieces(n)];
  return `${source.join(" ")}|${words.sourceIds(n).join(",")}|${german.join(" ")}|${words.ids(german).join(",")}\n`;
};
const sha256 = (data) => createHash("sha256").update(data).digest("hex");

function digest(start, end) {
  // the tokens' text, a line a number, and every id as a byte
  let text = "";
  const ids = [];
  for (let n = start; n < end; n += 1) {
    const german = words.germanPieces(n);
    text += `${words.sourceTokens(n).join(" ")}|${german.join(" ")}\n`;
    ids.push(...words.sourceIds(n), ...words.ids(german));
  }
  return sha256(Buffer.from(text, "utf8")) + sha256(Uint8Array.from(ids));
}

if (mode === "spell") {
  const [start, end, chunk] = args.map(Number);
  const hashes = [];
  for (let lo = start; lo < end; lo += chunk) hashes.push(digest(lo, Math.min(lo + chunk, end)));
  process.stdout.write(JSON.stringify(hashes));
} else if (mode === "lines") {
  const [start, end] = args.map(Number);
  let text = "";
  for (let n = start; n < end; n += 1) text += line(n);
  process.stdout.write(text);
} else if (mode === "read") {
  const forms = JSON.parse(readFileSync(args[0], "utf8"));
  process.stdout.write(JSON.stringify(forms.map((f) => [words.parseInput(f), words.parseNumber(f)])));
} else {
  throw new Error(`unknown mode ${mode}`);
}
