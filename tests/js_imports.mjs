// The import graph of the browser code, as esbuild (pinned in package.json) resolves it: every .js file under
// the folder given (default static/) an entry, bundled without writing, and each input's imports read from the
// metafile (static and dynamic alike: import("…") is an edge too). Prints {file: [imported file, …]} as JSON,
// paths relative to that folder; packages (three, …) are left out, being no room of ours.
// Used by tests/codebase/test_js_rooms.py:  node tests/js_imports.mjs [folder]
/* global process, console */ // run by Node (tests/codebase/test_js_rooms.py)
import { readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import * as esbuild from "esbuild";

const folder = resolve(process.argv[2] || "static");
const files = [];
const walk = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name.endsWith(".js")) files.push(p);
  }
};
walk(folder);
const result = await esbuild.build({
  absWorkingDir: folder,
  entryPoints: files,
  bundle: true,
  write: false,
  metafile: true,
  outdir: "out",
  format: "esm",
  splitting: true,
  logLevel: "error",
  packages: "external",
  loader: { ".css": "empty" },
});
const name = (p) => relative(folder, resolve(folder, p)).split("\\").join("/");
const graph = {};
for (const [path, input] of Object.entries(result.metafile.inputs)) {
  if (!path.endsWith(".js")) continue;
  graph[name(path)] = input.imports
    .filter((i) => !i.external && i.path.endsWith(".js"))
    .map((i) => name(i.path))
    .sort();
}
console.log(JSON.stringify(graph, null, 1));
