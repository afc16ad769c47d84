// The ledger on hover and focus: an element with data-fact shows that fact of /api/facts (its value,
// what it is, its source) in the popover beneath it.
import { fetchJson } from "../api.js";

const popover = document.getElementById("fact-popover");
let facts = null;

async function showFact(el) {
  if (!popover) return;
  facts ??= fetchJson("/api/facts")
    .then((d) => new Map(d.facts.map((f) => [f.id, f])))
    .catch(() => new Map());
  const fact = (await facts).get(el.dataset.fact);
  if (!fact) return;
  popover.replaceChildren();
  const what = document.createElement("strong");
  what.textContent = `${fact.value}: ${fact.what}`;
  const source = document.createElement("span");
  source.textContent = fact.source;
  popover.append(what, document.createElement("br"), source);
  const box = el.getBoundingClientRect();
  popover.hidden = false;
  const rightmost = window.scrollX + document.documentElement.clientWidth - popover.offsetWidth - 8;
  popover.style.left = `${Math.max(8, Math.min(box.left + window.scrollX, rightmost))}px`;
  popover.style.top = `${box.bottom + window.scrollY + 6}px`;
}

function hideFact() {
  if (popover) popover.hidden = true;
}

export function bindFacts() {
  for (const el of document.querySelectorAll("[data-fact]")) {
    el.addEventListener("mouseenter", () => showFact(el));
    el.addEventListener("focus", () => showFact(el));
    el.addEventListener("mouseleave", hideFact);
    el.addEventListener("blur", hideFact);
  }
}
