// The static build (app/site/build.py): where a document of the API lies in the built folder, and whether this
// page is one of that folder's. One rule, written here and in app/site/build.py `site_path` (tests/site/test_site.py
// holds them equal): /api/a/b?y=2&x=1 → /site/api/a/b/x=1&y=2.json (parameters sorted by name; none:
// index), .bin for a binary body (the weights as safetensors).

/** The file of the static folder that holds the answer to `url` (a path of this site, with its query). */
export function sitePath(url, { binary = false } = {}) {
  const at = new URL(url, "http://site.invalid");
  const params = [...at.searchParams].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const name = params.length ? params.map(([k, v]) => `${k}=${v}`).join("&") : "index";
  return `/site${at.pathname.replace(/\/$/, "")}/${name}${binary ? ".bin" : ".json"}`;
}

/** Where a root-relative address of this site (/site/…, /static/…, /embed) lies: in the static folder, under the
 *  folder's root wherever a host put it (the page's <meta name="anatomy-root">, relative to the page, which
 *  app/site/build.py writes); elsewhere the address as it is. */
export function siteUrl(path, doc = globalThis.document, href = globalThis.location?.href) {
  const root =
    isStaticSite(doc) && href
      ? /** @type {HTMLMetaElement | null} */ (doc.querySelector('meta[name="anatomy-root"]'))?.content
      : null;
  return root && path.startsWith("/") ? new URL(path.slice(1), new URL(root, href)).href : path;
}

/** Whether this page was rendered into the static build (its <meta name="anatomy-site">). */
export function isStaticSite(doc = globalThis.document) {
  return (
    /** @type {HTMLMetaElement | null} */ (doc?.querySelector?.('meta[name="anatomy-site"]'))?.content === "static"
  );
}

/** The model a page of the static folder draws: the address's ?model= ("" for none). The served app renders
 *  the name into the page (data-model) after checking it; the folder has one page for every address, rendered
 *  for the default model, so there the address is read here (a name the folder has no program for is refused
 *  when its documents are asked). Elsewhere "". */
export function addressedModel(doc = globalThis.document, href = globalThis.location?.href) {
  if (!isStaticSite(doc) || !href) return "";
  return (new URL(href).searchParams.get("model") || "").trim();
}
