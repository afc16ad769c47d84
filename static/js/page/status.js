// The state is always said, so that an altered model's output is never read as the trained one's: while parts
// are switched off or a training snapshot is shown, every paragraph of the article that shows the model's
// output (the German it writes) carries a note saying so, with the way back (every part on again, the trained
// model). The parts are named as the scene's switches name them (the trace's scene.switches: id and label);
// nothing here parses ids.
import { formatNumber } from "../format.js";
import { askedParts, askedSnapshot, numbersSource, shownTrace, snapshot } from "../store.js";

// the live values that are the model's output
const OUTPUT = '[data-live="german"], [data-live="german_pieces"], [data-live="output_tokens"]';

/** The paragraphs (or list items, table cells) that show the output, each once. */
function outputPlaces() {
  const places = new Set();
  for (const el of document.querySelectorAll(OUTPUT))
    places.add(el.closest("p, li, td, figcaption") || el.parentElement);
  return [...places].filter(Boolean);
}

/** @param {import("../../types.js").Trace | null} trace  @param {string[]} parts */
function partNames(trace, parts) {
  const byId = new Map((trace?.scene?.switches || []).map((s) => [s.id, s.label]));
  return parts.map((id) => (byId.has(id) && byId.get(id) !== id ? `${byId.get(id)} (${id})` : id));
}

function button(text, act) {
  const b = Object.assign(document.createElement("button"), {
    type: "button",
    className: "state-back",
    textContent: text,
  });
  b.addEventListener("click", act);
  return b;
}

/** The note's content for the state now, or null when the model is the trained one with every part on. */
function noteContent() {
  const trace = shownTrace.get(),
    parts = trace?.ablation ?? [],
    step = snapshot.get();
  if (!parts.length && step === null) return null;
  const said = [];
  if (parts.length) {
    const which = parts.length === 1 ? "One part is" : `${parts.length} parts are`;
    const names = partNames(trace, parts).join(", ");
    said.push(
      `${which} switched off: ${names}; this is the model's output without ${parts.length === 1 ? "it" : "them"}. `,
      button("Switch every part on", () => askedParts.set([])),
    );
  }
  if (step !== null) {
    if (said.length) said.push(" ");
    said.push(
      `This is the snapshot after ${formatNumber(Number(step), "int")} training steps, not the trained model. `,
      button("Back to the trained model", () => askedSnapshot.set(null)),
    );
  }
  return said;
}

/** Marks (or unmarks) every place that shows the output with the state now. */
export function showState() {
  for (const place of outputPlaces()) {
    const content = noteContent(); // its own buttons for each note
    let note = place.nextElementSibling?.matches?.("[data-state-note]") ? place.nextElementSibling : null;
    if (!content) {
      note?.remove();
      continue;
    }
    if (!note) {
      note = Object.assign(document.createElement(place.tagName === "P" ? "p" : "div"), { className: "state-note" });
      note.dataset.stateNote = "";
      note.setAttribute("role", "status");
      place.after(note);
    }
    note.replaceChildren(...content.map((c) => (typeof c === "string" ? document.createTextNode(c) : c)));
  }
}

// Where the numbers on show come from (../store.js numbersSource, which api.js sets: the server, or this
// browser), said at the start of the progress bar's line (a live region, so a change is read out).
const SOURCE_SAID = {
  server: ["Server", "Every tensor on show was computed by the server."],
  browser: [
    "In your browser",
    "Every tensor on show was computed in your browser, from the model's own program and weights.",
  ],
  busy: [
    "Server busy: in your browser",
    "The server asked to be asked again later: every tensor on show was computed in your browser.",
  ],
  offline: [
    "Server unreachable: in your browser",
    "The server cannot be reached: every tensor on show was computed in your browser.",
  ],
};

export function bindSource() {
  const line = document.querySelector(".progress-label");
  const said = line && Object.assign(document.createElement("span"), { id: "trace-source", className: "trace-source" });
  if (said) line.prepend(said);
  const show = (source) => {
    if (!said) return;
    const [text, title] = SOURCE_SAID[source] || [source, source];
    said.dataset.source = source;
    said.title = title;
    said.textContent = `${text} · `;
  };
  numbersSource.follow(show);
}
