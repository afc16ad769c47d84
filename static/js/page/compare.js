// Pinning an input to compare with, and the explained cell in the address: the Pin button, compareWith
// (../store.js pinnedTrace: the pinned trace, or null), and a linked cell asked of the stage (askedCell).
import { formatNumber } from "../format.js";
import { loadTrace } from "../api.js";
import { MODEL, anatomy, errorBox, updateUrl } from "./state.js";
import { askedCell, explainedCell, pinnedTrace, shownTrace } from "../store.js";
import { keepPlace } from "./place.js";

const pinButton = document.getElementById("pin-input");

export function showPin() {
  if (!pinButton) return;
  const n = pinnedTrace.get()?.input.number;
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

function pinTrace(trace) {
  keepPlace(); // the pin's label and the compare banner must not move the article
  pinnedTrace.set(trace);
  showPin();
  updateUrl();
}

// Pins an input to compare with (its trace is fetched), or unpins (null); false for a refused input.
export async function compareWith(input) {
  keepPlace();
  if (input === null || input === undefined || String(input).trim() === "") {
    pinTrace(null);
    return true;
  }
  let trace;
  try {
    trace = await loadTrace(input, { model: MODEL });
  } catch (err) {
    errorBox.textContent = `Cannot compare with “${input}”: ${err.message}`; // the field itself is fine
    updateUrl();
    return false;
  }
  pinTrace(trace);
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

export const selectCell = (detail) => askedCell.set(detail);

export function bindCompare() {
  anatomy.compareWith = compareWith;
  pinButton?.addEventListener("click", () => {
    if (pinnedTrace.get()) compareWith(null);
    else if (shownTrace.get()) pinTrace(shownTrace.get());
  });
  explainedCell.subscribe(updateUrl);
  showPin();
}
