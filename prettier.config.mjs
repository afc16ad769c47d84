// Prettier, the one formatter of the project's JavaScript (pinned in package.json; which files it sees is
// .prettierignore's; tests/codebase/test_lint.py runs `npx prettier --check .`). The options keep the code's own style:
// lines up to 120 characters (ESLint's max-len holds the strings and comments Prettier cannot break to the
// same width), double quotes, semicolons, trailing commas wherever a list is broken over lines, and a broken
// expression's operators at the start of its lines.
export default {
  printWidth: 120,
  singleQuote: false,
  semi: true,
  trailingComma: "all",
  arrowParens: "always",
  experimentalOperatorPosition: "start",
};
