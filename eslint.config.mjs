// ESLint's flat config for the browser code in static/ (run by tests/test_lint.py: npx eslint).
// Recommended rules on; the pages load static/**/*.js as ES modules, except docs.js (a classic
// script beside Swagger UI's bundle), and scripts/*.mjs run under Node. Vendor code comes from node_modules
// and the bundle is built from static/ (npm run build): neither is ours to lint.
import js from "@eslint/js";
import globals from "globals";

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
  {
    files: ["scripts/**/*.mjs"],
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: { ...globals.node } },
  },
  {
    files: ["static/js/docs.js"],
    languageOptions: { sourceType: "script" },
  },
];
