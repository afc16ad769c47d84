// For the classroom, beside the progress bar: "Present" opens presenter mode (present.js) at the
// step being read, and "Copy embed code" copies an <iframe> of the embed view (/embed, app/routes/embed.py) for the
// state shown now: the input, the parts switched off, the snapshot, the pinned input, the explained cell and
// the step, as the address keeps them (address.js). Where the clipboard is refused, the code is shown
// selected in a box to copy by hand. Both are plain buttons: they work by keyboard and say what they did.
import { embedAddress, embedCode } from "./address.js";
import { anatomy } from "./state.js";
import { stepInView } from "../store.js";
import { enter } from "./present.js";

const DONE_MS = 2000;

const el = (tag, props = {}, ...kids) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...kids);
  return e;
};
const more = (text) => el("span", { className: "classroom-more", textContent: text });

/** The embed code for the state now: the embed view's address, titled by the step. */
export function currentEmbedCode() {
  const step = stepInView.get()?.step;
  const view = embedAddress(new URL(window.location.href), step);
  const title = document.getElementById(`step-${step}-title`)?.textContent.trim();
  return {
    src: view.href,
    code: embedCode(view.href, `Anatomy of the Transformer${title ? `, step ${step}: ${title}` : ""}`),
  };
}

function showByHand(tools, code) {
  tools.querySelector(".embed-code")?.remove();
  const box = el("textarea", { className: "embed-code", readOnly: true, rows: 3, value: code });
  box.setAttribute("aria-label", "The embed code: copy it (Esc closes)");
  box.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      box.remove();
      tools.querySelector(".embed-copy")?.focus();
    }
  });
  box.addEventListener("blur", () => box.remove());
  tools.append(box);
  box.focus();
  box.select();
}

let copiedTimer; // the "copied" line's, cleared by the next copy

async function copyEmbed(tools, status) {
  const { code } = currentEmbedCode();
  tools.dataset.code = code; // what was copied, for the tests
  try {
    await navigator.clipboard.writeText(code);
    status.textContent = "Embed code copied: an iframe of this step's view, for a slide or a course page.";
  } catch {
    status.textContent = "The browser refused the clipboard: the embed code is selected in the box, to copy by hand.";
    showByHand(tools, code);
  }
  clearTimeout(copiedTimer);
  copiedTimer = setTimeout(() => {
    status.textContent = "";
  }, DONE_MS * 3);
}

export function bindClassroom() {
  const progress = document.querySelector("nav.progress");
  if (!progress) return;
  const status = el("span", { className: "visually-hidden", role: "status" });
  const tools = el("div", { className: "classroom-tools" });
  const present = el(
    "button",
    {
      type: "button",
      className: "present-open",
      title:
        "Show this step on a projector: the stage full screen, the step's title and key sentence in large type "
        + "(Esc comes back)",
    },
    "Present",
  );
  const copy = el(
    "button",
    {
      type: "button",
      className: "embed-copy",
      title: "Copy an <iframe> of the stage in this state, to embed in a slide or a course page",
    },
    more("Copy "),
    "embed",
    more(" code"),
  );
  present.addEventListener("click", () => enter());
  copy.addEventListener("click", () => copyEmbed(tools, status));
  tools.append(present, copy, status);
  progress.append(tools);
  anatomy.embedCode = currentEmbedCode;
}
