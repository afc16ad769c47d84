// The page's JavaScript, bundled and minified by esbuild (pinned in package.json): `npm run build`.
//
// The entries are the module scripts the templates name as /bundle/<path> (static/<path> is the
// source), found by reading templates/, so a page that gains a module gains its entry here. They are
// built together with code splitting: each entry stays its own file at bundle/<path>, and code that
// several entries import (three.js, the page's state) lands once in a shared chunk, so a module the
// page loads from two entries is still one instance, as with the unbundled modules. stage/stage.css
// is built too: the stage adds it at run time from beside its own module (import.meta.url).
// Writes bundle/ (not committed; scripts/setup.sh and the Dockerfile run this) with source maps and
// bundle/manifest.json: the entries, and every input file with its SHA-256, which app/startup/bundle.py checks
// at start-up so that the app never serves a bundle older than its sources.
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const OUT = join(ROOT, "bundle");
const ENTRY = /<script type="module" src="\/bundle\/([\w./-]+\.js)"><\/script>/g;
const STYLES = ["stage/stage.css"];

/** The module entries the templates name, as paths under static/ (sorted, each once). */
export function templateEntries(root = ROOT) {
  const folder = join(root, "templates");
  const found = new Set();
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".html")) for (const m of readFileSync(p, "utf8").matchAll(ENTRY)) found.add(m[1]);
    }
  };
  walk(folder);
  return [...found].sort();
}

const sha256 = (path) =>
  createHash("sha256")
    .update(readFileSync(join(ROOT, path)))
    .digest("hex");

async function build() {
  const started = performance.now();
  const entries = templateEntries();
  rmSync(OUT, { recursive: true, force: true });
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [...entries, ...STYLES].map((p) => ({ in: `static/${p}`, out: p.replace(/\.(js|css)$/, "") })),
    outdir: OUT,
    bundle: true,
    splitting: true,
    format: "esm",
    minify: true,
    sourcemap: true,
    target: "es2022",
    chunkNames: "chunks/[name]-[hash]",
    metafile: true,
    logLevel: "warning",
    legalComments: "eof",
  });
  const inputs = Object.fromEntries(
    Object.keys(result.metafile.inputs)
      .sort()
      .map((p) => [p, sha256(p)]),
  );
  const files = Object.keys(result.metafile.outputs)
    .map((p) => relative(OUT, join(ROOT, p)))
    .sort();
  const manifest = { entries, styles: STYLES, files, inputs, esbuild: esbuild.version };
  writeFileSync(join(OUT, "manifest.json"), JSON.stringify(manifest, null, 1) + "\n");
  const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
  const ms = performance.now() - started;
  console.log(
    `build-js: ${entries.length} entries, ${files.length} files (${(bytes / 1e6).toFixed(2)} MB with `
      + `source maps) in bundle/, ${ms.toFixed(0)} ms`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await build();
