/* global process */
// static/js/numbers.js's side of tests/test_numbers_js.py, over the document app/numbers_doc.py wrote:
//   node tests/numbers_parity.mjs DOC spell START END CHUNK   one sha256 per CHUNK numbers of their lines
//   node tests/numbers_parity.mjs DOC lines START END         the lines themselves (to name a difference)
//   node tests/numbers_parity.mjs DOC read FORMS              each form of FORMS (a JSON list) read by
//                                                             parseInput and parseNumber
// A number's line: its English words, its source ids and its German pieces, as the test writes them.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { numberWords } from "../static/js/numbers.js";

const [docPath, mode, ...args] = process.argv.slice(2);
const words = numberWords(JSON.parse(readFileSync(docPath, "utf8")));
const line = (n) => `${words.toEnglish(n).join(" ")}|${words.sourceIds(n).join(",")}|${words.germanPieces(n).join(" ")}\n`;

if (mode === "spell") {
  const [start, end, chunk] = args.map(Number);
  const hashes = [];
  for (let lo = start; lo < end; lo += chunk) {
    const hash = createHash("sha256");
    let text = "";
    for (let n = lo; n < Math.min(lo + chunk, end); n += 1) text += line(n);
    hash.update(text, "utf8");
    hashes.push(hash.digest("hex"));
  }
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
