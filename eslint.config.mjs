// ESLint's flat config for the browser code in static/ (run by tests/codebase/test_lint.py: npx eslint).
// Recommended rules on; the pages load static/**/*.js as ES modules, except docs.js (a classic
// script beside Swagger UI's bundle), and scripts/*.mjs run under Node. Vendor code comes from node_modules
// and the bundle is built from static/ (npm run build): neither is ours to lint.
import js from "@eslint/js";
import globals from "globals";

// The rooms of static/ and who may import whom (an arrow: may import; nothing else is allowed of these three):
//
//   engine/   → engine/                               the network in the page: nothing of the page, no package
//   compute/  → compute/, engine/, js/ (not js/page/) what the page computes for one input: no drawing, no DOM
//   stage/    → stage/, compute/, engine/, js/ (not js/page/), three  the renderer: not the page's DOM code
//   js/, js/page/ → any room                          the page (its DOM code in js/page/)
//
// Written as regular expressions over the import's text, static and dynamic (no-restricted-imports sees
// `import … from`, no-restricted-syntax the `import("…")` calls); import circles are tests/codebase/test_js_rooms.py's.
const OUT_OF_THE_ENGINE = { regex: "^(\\.\\./|/|[^.])", message: "static/engine/ imports nothing but itself." };
const STAGE = { regex: "(^|/)stage/|^three(/|$)", message: "Per-input rules (static/compute/) never import drawing." };
const PAGE_DOM = { regex: "(^|/)js/page/", message: "Only the page imports its DOM code (static/js/page/)." };
const rooms = (files, ...groups) => ({
  files,
  rules: {
    "no-restricted-imports": ["error", { patterns: groups.map(({ regex, message }) => ({ regex, message })) }],
    "no-restricted-syntax": [
      "error",
      ...groups.map(({ regex, message }) => ({
        selector: `ImportExpression[source.value=/${regex.replaceAll("/", "\\/")}/]`,
        message,
      })),
    ],
  },
});

export default [
  { ignores: ["node_modules/**", "bundle/**", "test-artifacts/**", "**/*.min.js"] },
  js.configs.recommended,
  {
    files: ["static/**/*.js"],
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: { ...globals.browser } },
    // `const { dropped, ...rest } = obj` is how the code leaves a key out of a copy; no file over 400
    // lines and no function over 60 (the limits every source file keeps)
    rules: {
      "no-unused-vars": ["error", { ignoreRestSiblings: true }],
      "max-lines": ["error", 400],
      "max-lines-per-function": ["error", 60],
    },
  },
  rooms(["static/engine/**/*.js"], OUT_OF_THE_ENGINE),
  rooms(["static/compute/**/*.js"], STAGE, PAGE_DOM),
  rooms(["static/stage/**/*.js"], PAGE_DOM),
  // One statement a line and no line over 120 characters, in all of our JavaScript: Prettier (prettier.config.mjs,
  // the same width) lays the code out, and these hold what it cannot break: long strings, template literals and
  // comments, and statements written on one line.
  {
    files: ["static/**/*.js", "scripts/**/*.mjs", "tests/**/*.mjs", "*.mjs"],
    rules: {
      "max-statements-per-line": ["error", { max: 1 }],
      "max-len": ["error", { code: 120 }],
    },
  },
  {
    files: ["scripts/**/*.mjs"],
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: { ...globals.node } },
  },
  {
    files: ["static/js/docs.js"],
    languageOptions: { sourceType: "script" },
  },
];
