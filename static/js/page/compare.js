// Pinning an input to compare with, and the explained cell in the address: the Pin button, compareWith
// (anatomy:compare with the pinned trace, or null), and anatomy:select for a linked cell.
import { formatNumber } from "../format.js";
import { loadTrace } from "../api.js";
import { MODEL, anatomy, announce, errorBox, updateUrl } from "./state.js";
import { keepPlace } from "./place.js";

const pinButton = document.getElementById("pin-input");

export function showPin() {
  if (!pinButton) return;
  const n = anatomy.compareTrace?.input.number;
  pinButton.setAttribute("aria-pressed", n === undefined ? "false" : "true");
  // the words in .pin-more give way on narrower screens (site.css): "Pin", "731 015 ✕"
  const more = (text) => Object.assign(document.createElement("span"), { className: "pin-more", textContent: text });
  if (n === undefined) pinButton.replaceChildren("Pin", more(" to compare"));
  else pinButton.replaceChildren(more("Pinned "), `${formatNumber(n, "text")} ✕`);
  pinButton.title =
    n === undefined
      ? "Pin this input, then run another: the stage colours every activation by the difference"
      : `Comparing with ${n}: run another input to see the difference; press to unpin`;
}

function announceCompare() {
  keepPlace(); // the pin's label and the compare banner must not move the article
  showPin();
  updateUrl();
  announce("anatomy:compare", anatomy.compareTrace);
}

// Pins an input to compare with (its trace is fetched), or unpins (null); false for a refused input.
export async function compareWith(input) {
  keepPlace();
  if (input === null || input === undefined || String(input).trim() === "") {
    anatomy.compareTrace = null;
    announceCompare();
    return true;
  }
  try {
    anatomy.compareTrace = await loadTrace(input, { model: MODEL });
  } catch (err) {
    errorBox.textContent = `Cannot compare with “${input}”: ${err.message}`; // the field itself is fine
    updateUrl();
    return false;
  }
  announceCompare();
  return true;
}

// "id:row:col" (the id may hold colons) → {id, row, col}; rows and columns that are not numbers stay NaN,
// for the stage to refuse with its message
export function parseCell(text) {
  const parts = String(text).split(":");
  if (parts.length < 3) return { id: String(text), row: NaN, col: NaN };
  const num = (s) => (/^\d+$/.test(s) ? Number(s) : NaN);
  return { id: parts.slice(0, -2).join(":"), row: num(parts.at(-2)), col: num(parts.at(-1)) };
}

export function selectCell(detail) {
  anatomy.cellDetail = detail;
  announce("anatomy:select", detail);
}

export function bindCompare() {
  anatomy.compareWith = compareWith;
  pinButton?.addEventListener("click", () => {
    if (anatomy.compareTrace) compareWith(null);
    else if (anatomy.trace) {
      anatomy.compareTrace = anatomy.trace;
      announceCompare();
    }
  });
  document.addEventListener("anatomy:explain", (event) => {
    anatomy.cell = event.detail;
    updateUrl();
  });
  showPin();
}
