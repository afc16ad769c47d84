// A trace request read as the API reads it (app/service/deps.py check_trace): the input (static/js/numbers.js), the
// parts switched off (model/ablation.py parse_ablation) and the training snapshot (app/service/time_machine.py
// Checkpoints.parse), in that order, each refused with the API's message word for word. The rules and
// messages come from the program document's `refusals` (app/routes/program.py); none is written here.
//
//   readRequest(program, words, { input, ablation, checkpoint }) → { number, ablation, checkpoint }
//   refusal(message) → an Error as static/js/api.js makes of a 422 (err.status = 422)

const REFUSED_STATUS = 422; // what the API answers a request it refuses (app/main.py)

export const refusal = (message) => Object.assign(new Error(message), { status: REFUSED_STATUS });

const fill = (template, values) => template.replace(/\{(\w+)\}/g, (_, key) => String(values[key]));

const inRuns = (runs, c) => runs.some(([a, b]) => a <= c && c <= b);

const firstChars = (text, count) => Array.from(text).slice(0, count).join("");

/** Python's repr of a str: single quotes unless it holds ' and no ", the quote and \ escaped, \t \n \r by
 *  name, what Python does not print (`unprintable` runs) as \xhh, \uhhhh or \Uhhhhhhhh. */
export function pythonRepr(text, unprintable) {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const named = { "\t": "\\t", "\n": "\\n", "\r": "\\r" };
  const hex = (c, width) => c.toString(16).padStart(width, "0");
  let out = quote;
  for (const ch of text) {
    const c = ch.codePointAt(0);
    if (ch === quote || ch === "\\") out += `\\${ch}`;
    else if (named[ch]) out += named[ch];
    else if (!inRuns(unprintable, c)) out += ch;
    else out += c < 0x100 ? `\\x${hex(c, 2)}` : c < 0x10000 ? `\\u${hex(c, 4)}` : `\\U${hex(c, 8)}`;
  }
  return out + quote;
}

// model/ablation.py _why: why a name is no part of the model.
function whyNot(name, rules, part, words) {
  const m = part.exec(name),
    say = rules.messages;
  if (!m) return say.not_a_part;
  const [, stack, layerDigits, kind, headDigits] = m;
  if (words.decimalValue(layerDigits) >= rules.layers)
    return fill(say.layers, { layers: rules.layers, last: rules.layers - 1 });
  if (!rules.sublayers[stack].includes(kind)) return fill(say.no_sublayer, { stack: rules.stack_names[stack], kind });
  if (headDigits !== undefined && !rules.attention.includes(kind)) return say.ffn_heads;
  if (headDigits !== undefined && words.decimalValue(headDigits) >= rules.heads)
    return fill(say.heads, { heads: rules.heads, last: rules.heads - 1 });
  return say.not_a_part;
}

/** The parts named in ?ablate= (text or null), once each in the model's order (program.parts), or a refusal. */
export function readAblation(text, program, words) {
  if (text === null || text === undefined) return [];
  const rules = program.refusals.ablation,
    unprintable = program.refusals.unprintable;
  const refuse = (message) => {
    throw refusal(fill(rules.refused_as, { message }));
  };
  const length = Array.from(text).length;
  if (length > rules.max_text)
    refuse(fill(rules.messages.too_long, { length, most: rules.max_text, accepted: rules.accepted }));
  const part = words.pattern(rules.pattern);
  const named = text.split(",").map(words.strip).filter(Boolean);
  for (const name of named) {
    if (!program.parts.includes(name)) {
      refuse(
        fill(rules.messages.refused, {
          name: pythonRepr(firstChars(name, rules.quoted_chars), unprintable),
          why: whyNot(name, rules, part, words),
          accepted: rules.accepted,
        }),
      );
    }
  }
  return program.parts.filter((p) => named.includes(p));
}

/** The training step ?checkpoint= names (text or null; empty is absent), or a refusal. */
export function readCheckpoint(text, program) {
  if (!text) return null;
  const rules = program.refusals.checkpoint;
  if (!rules.steps.includes(text)) {
    throw refusal(
      fill(rules.refused, {
        accepted: rules.accepted,
        text: pythonRepr(firstChars(text, rules.quoted_chars), program.refusals.unprintable),
      }),
    );
  }
  return Number(text);
}

/** The input's number (numbers.js parseInput: the API's message when refused). */
export function readNumber(input, words) {
  const read = words.parseInput(input);
  if (read.message !== undefined) throw refusal(read.message);
  return read.number;
}

/** A trace request as static/js/api.js traceUrl writes it into the query, read by the API's rules. */
export function readRequest(program, words, { input, ablation = [], checkpoint = null }) {
  const number = readNumber(String(input), words);
  const ablate = ablation.length ? ablation.join(",") : null;
  const step = checkpoint === null || checkpoint === undefined ? null : String(checkpoint);
  return { number, ablation: readAblation(ablate, program, words), checkpoint: readCheckpoint(step, program) };
}
