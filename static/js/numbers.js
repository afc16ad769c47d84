// Number words in the browser: the rules of model/numbers.py, model/vocab.py, model/parse.py and
// app/service/deps.py, run over the data they define, which the server sends as GET /api/numbers
// (app/service/number_words.py; the static build writes the same document as a file). This file
// holds rules only: no word, piece, token, limit or message is written here; they all come from the
// document. Pure: no DOM, no fetch; Node and the browser import it alike.
//
//   import { numberWords } from "./numbers.js";
//   const words = numberWords(await (await fetch("/api/numbers")).json());
//   words.toEnglish(731015)    // ["seven", "hundred", "thirty", "one", "thousand", "fifteen"]
//   words.sourceTokens(42)     // the encoder's input: the English words, then the end token
//   words.sourceIds(42)        // the same as vocabulary ids (the token's index in doc.vocab)
//   words.germanPieces(21)     // ["ein", "und", "zwanzig"]: the reference German, greedy's draft
//   words.german(21)           // "einundzwanzig"
//   words.ids(tokens)          // any tokens as ids
//   words.parseInput(text)     // what the API does with ?input=text: {number} or {message}, the
//                              // API's 422 message word for word (a missing or blank text included)
//   words.parseNumber(text)    // model/parse.py parse_number: {number} or {message}
//   words.joinGerman(pieces)   // model/numbers.py join_german: the written word
//   words.strip(text), words.pattern(source), words.decimalValue(digits)
//                              // Python's str.strip, a pattern in Python's syntax as a RegExp, int() of
//                              // what its \d matched: for the other rules of a request (static/compute/)
//   words.maxNumber, words.accepted
// toEnglish, germanPieces and friends throw a RangeError outside 0…maxNumber, as Python's raise.
//
// Python's meaning of a space (str.split, str.strip), a digit (str.isdigit) and a decimal (re's \d)
// comes with the document as code point runs, so that the rules agree with Python whatever Unicode
// version the browser has; lower-casing is the browser's (the same mapping, but for letters newer
// than the server's Python, which only ever change how an echoed text is spelled).
// tests/page/test_numbers_js.py checks all 1 000 000 numbers and every input form of the API's tests.

function inRuns(runs, c) {
  let lo = 0;
  let hi = runs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (c < runs[mid][0]) hi = mid - 1;
    else if (c > runs[mid][1]) lo = mid + 1;
    else return true;
  }
  return false;
}

const codePoints = (text) => Array.from(text, (ch) => ch.codePointAt(0));

// A pattern in Python's syntax for JavaScript's RegExp, \d and \s as Python's (its decimal and space runs).
function pythonPattern(pattern, chars) {
  const hex = (c) => `\\u{${c.toString(16)}}`;
  const runs = (rs) => rs.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join("");
  const classes = { d: runs(chars.decimal), s: runs(chars.space) };
  let source = "";
  let inClass = false;
  for (let i = 0; i < pattern.length; i += 1) {
    const ch = pattern[i];
    if (ch === "\\" && classes[pattern[i + 1]] !== undefined) {
      const members = classes[pattern[i + 1]];
      source += inClass ? members : `[${members}]`;
      i += 1;
      continue;
    }
    if (ch === "\\") {
      source += ch + pattern[i + 1];
      i += 1;
      continue;
    }
    if (ch === "[" && !inClass) inClass = true;
    else if (ch === "]" && inClass) inClass = false;
    source += ch;
  }
  return new RegExp(source, "u");
}

const fill = (template, values) => template.replace(/\{(\w+)\}/g, (_, key) => String(values[key]));

function textRules(chars) {
  const isSpace = (c) => inRuns(chars.space, c);
  const split = (text) => {
    // str.split(): the runs between spaces, none empty
    const words = [];
    let word = "";
    for (const ch of text) {
      if (isSpace(ch.codePointAt(0))) {
        if (word) words.push(word);
        word = "";
      } else word += ch;
    }
    if (word) words.push(word);
    return words;
  };
  const strip = (text) => {
    // str.strip()
    const cs = codePoints(text);
    let a = 0;
    let b = cs.length;
    while (a < b && isSpace(cs[a])) a += 1;
    while (b > a && isSpace(cs[b - 1])) b -= 1;
    return String.fromCodePoint(...cs.slice(a, b));
  };
  // int() of a run of Python's decimals: each block of ten decimals runs from its zero to its nine
  const decimalValue = (digits) =>
    codePoints(digits).reduce((n, c) => {
      const run = chars.decimal.find(([a, b]) => a <= c && c <= b);
      return 10 * n + ((c - run[0]) % 10);
    }, 0);
  return { split, strip, isDigit: (c) => inRuns(chars.digit, c), decimalValue };
}

function spelling(doc) {
  const en = doc.english;
  const de = doc.german;
  const check = (n) => {
    if (!Number.isInteger(n) || n < 0 || n > doc.max_number)
      throw new RangeError(`not a number from 0 to ${doc.max_number}: ${n}`);
  };
  const englishBelow1000 = (n) => {
    const words = [];
    const hundreds = Math.floor(n / 100);
    const rest = n % 100;
    if (hundreds) words.push(en.ones[hundreds], en.hundred);
    if (rest >= 10 && rest < 20) words.push(en.teens[rest - 10]);
    else {
      const tens = Math.floor(rest / 10);
      const ones = rest % 10;
      if (tens) words.push(en.tens[tens]);
      if (ones) words.push(en.ones[ones]);
    }
    return words;
  };
  const germanBelow1000 = (n, final) => {
    // `final`: the group ends the number (1 is then ones[1])
    const pieces = [];
    const hundreds = Math.floor(n / 100);
    const rest = n % 100;
    if (hundreds) pieces.push(hundreds === 1 ? de.one_joined : de.ones[hundreds], de.hundred);
    if (rest >= 10 && rest < 20) pieces.push(de.teens[rest - 10]);
    else {
      const tens = Math.floor(rest / 10);
      const ones = rest % 10;
      if (ones && tens) pieces.push(ones === 1 ? de.one_joined : de.ones[ones], de.and_piece, de.tens[tens]);
      else if (ones) pieces.push(ones === 1 && !final ? de.one_joined : de.ones[ones]);
      else if (tens) pieces.push(de.tens[tens]);
    }
    return pieces;
  };
  const toEnglish = (n) => {
    check(n);
    if (n === 0) return [en.ones[0]];
    const thousands = Math.floor(n / 1000);
    const words = thousands ? [...englishBelow1000(thousands), en.thousand] : [];
    return words.concat(englishBelow1000(n % 1000));
  };
  const germanPieces = (n) => {
    check(n);
    if (n === 0) return [de.ones[0]];
    const thousands = Math.floor(n / 1000);
    const rest = n % 1000;
    const pieces = thousands ? [...germanBelow1000(thousands, false), de.thousand] : [];
    return rest ? pieces.concat(germanBelow1000(rest, true)) : pieces;
  };
  return { toEnglish, germanPieces };
}

// model/numbers.py from_english: canonical English words (with "and" and hyphens) back to the number.
function englishReader(doc, toEnglish, text) {
  const en = doc.english;
  const value = new Map();
  en.ones.forEach((w, i) => value.set(w, i));
  en.teens.forEach((w, i) => value.set(w, 10 + i));
  en.tens.forEach((w, i) => {
    if (w) value.set(w, 10 * i);
  });
  const split = pythonPattern(en.split, doc.parse.chars);
  return (raw) => {
    const words = text
      .strip(raw)
      .toLowerCase()
      .split(split)
      .filter((w) => w && !en.fillers.includes(w));
    if (!words.length) return { message: en.messages.no_words };
    const unknown = words.filter((w) => !value.has(w) && w !== en.hundred && w !== en.thousand);
    if (unknown.length) return { message: fill(en.messages.unknown_word, { word: unknown[0] }) };
    let total = 0;
    let group = 0;
    for (const w of words) {
      if (w === en.thousand) [total, group] = [total + Math.max(group, 0) * 1000, 0];
      else if (w === en.hundred) group *= 100;
      else group += value.get(w);
    }
    const n = total + group;
    if (n > doc.max_number || words.join(" ") !== toEnglish(n).join(" ")) {
      return { message: fill(en.messages.ill_formed, { words: words.join(" ") }) };
    }
    return { number: n };
  };
}

// model/parse.py parse_number, step by step in its order.
function numberReader(doc, fromEnglish, text) {
  const p = doc.parse;
  const digits = pythonPattern(p.patterns.digits, p.chars);
  const wordsPattern = pythonPattern(p.patterns.words, p.chars);
  const separators = new RegExp(`[${p.group_separators.replace(/[\\\]^-]/g, "\\$&")}]`, "gu");
  const refuse = (reason) => ({ message: fill(p.refused, { reason, accepted: p.accepted }) });
  const isAscii = (s) => codePoints(s).every((c) => c < 128);
  return (raw) => {
    if (typeof raw !== "string") return refuse(p.messages.not_text);
    const cs = codePoints(raw);
    if (cs.length > p.max_input_chars) return refuse(fill(p.messages.too_long, { length: cs.length }));
    if (cs.some((c) => inRuns(p.chars.control, c))) return refuse(p.messages.control);
    const s = text.split(raw).join(" ").toLowerCase();
    if (!s) return refuse(p.messages.empty);
    if (s.startsWith("-") && digits.test(text.strip(s.slice(1)))) return refuse(p.messages.negative);
    if (text.isDigit(s.codePointAt(0))) {
      if (!isAscii(s) || !digits.test(s)) return refuse(fill(p.messages.bad_digits, { text: s }));
      const n = BigInt(s.replace(separators, ""));
      if (n > BigInt(doc.max_number)) return refuse(fill(p.messages.too_large, { n }));
      return { number: Number(n) };
    }
    if (!isAscii(s) || !wordsPattern.test(s)) {
      const quoted = String.fromCodePoint(...codePoints(s).slice(0, p.quoted_words_chars));
      return refuse(fill(p.messages.not_words, { text: quoted }));
    }
    const read = fromEnglish(s);
    return read.message === undefined ? read : refuse(read.message);
  };
}

export function numberWords(doc) {
  const text = textRules(doc.parse.chars);
  const { toEnglish, germanPieces } = spelling(doc);
  const index = new Map(doc.vocab.map((token, i) => [token, i]));
  const ids = (tokens) =>
    tokens.map((t) => {
      if (!index.has(t)) throw new RangeError(`not a token of the vocabulary: ${t}`);
      return index.get(t);
    });
  const sourceTokens = (n) => [...toEnglish(n), doc.source_end];
  const fromEnglish = englishReader(doc, toEnglish, text);
  const parseNumber = numberReader(doc, fromEnglish, text);
  const parseInput = (raw) => {
    // app/service/deps.py parse_input: a missing or blank ?input= first
    if (raw === null || raw === undefined || !text.strip(raw)) {
      return { message: fill(doc.parse.refused, { reason: doc.input_missing, accepted: doc.parse.accepted }) };
    }
    return parseNumber(raw);
  };
  const joinGerman = (pieces) => pieces.join("");
  return {
    maxNumber: doc.max_number,
    accepted: doc.parse.accepted,
    toEnglish,
    germanPieces,
    ids,
    sourceTokens,
    sourceIds: (n) => ids(sourceTokens(n)),
    german: (n) => joinGerman(germanPieces(n)),
    joinGerman,
    fromEnglish,
    parseNumber,
    parseInput,
    strip: text.strip,
    pattern: (source) => pythonPattern(source, doc.parse.chars),
    decimalValue: text.decimalValue,
  };
}
