// Exports: any block as CSV (in the tensor's own orientation, rows and columns labelled by index and,
// where the scene gives one, token), the stage as PNG at the canvas's size, the whole trace as an ONNX
// model (the server builds it: /api/trace.onnx, for Netron), text to the clipboard. The ONNX file is the
// server's alone (Python writes it for each input): where the browser computes the trace (the static
// build, or the server out of reach) the button stays, marked unavailable, and says why.
import { float32Decimal, formatNumber } from "../js/format.js";
import { numbersSource } from "../js/store.js";

const quote = (s) => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
const label = (i, tokens) => (tokens && tokens[i] !== undefined ? `${i} ${tokens[i]}` : String(i));

/** A block's tensor as CSV text: the top-left cell is the tensor's id, the first row the column labels,
 *  the first column the row labels; values in full precision (−∞ as -Infinity), a float32 (a parameter, a
 *  float32 node) in the digits the JSON form writes for it, its shortest decimal (float32Decimal), not the
 *  float64 expansion the page holds it as. A vector is one row when the stage lays it as a row, one column
 *  when it stands as a column; a scalar is one cell. */
export function blockCsv(scene, block, tensor) {
  const float32 = !tensor.dtype || tensor.dtype === "float32",
    shape = block.shape,
    axes = scene.axes;
  const v = (x) => formatNumber(float32 ? float32Decimal(x) : x, "text");
  // the scene's axes are the drawn ones; a block drawn transposed has them swapped
  const [rowAxis, colAxis] = block.transposed ? [block.col_axis, block.row_axis] : [block.row_axis, block.col_axis];
  let header, rows;
  if (shape.length === 0) {
    header = [block.id, "0"];
    rows = [["0", v(tensor.data[0])]];
  } else if (shape.length === 1 && block.rows === 1) {
    header = [block.id, ...Array.from({ length: shape[0] }, (_, j) => label(j, axes[colAxis]))];
    rows = [["0", ...Array.from(tensor.data, v)]];
  } else if (shape.length === 1) {
    header = [block.id, "0"];
    rows = Array.from(tensor.data, (x, i) => [label(i, axes[rowAxis]), v(x)]);
  } else {
    const [n, m] = shape;
    header = [block.id, ...Array.from({ length: m }, (_, j) => label(j, axes[colAxis]))];
    rows = Array.from({ length: n }, (_, i) => [
      label(i, axes[rowAxis]),
      ...Array.from({ length: m }, (_, j) => v(tensor.data[i * m + j])),
    ]);
  }
  return [header, ...rows].map((r) => r.map(quote).join(",")).join("\n") + "\n";
}

/** Renders one frame and returns the canvas as a PNG data URL (read in the same task as the render,
 *  since the drawing buffer is not preserved). */
export function canvasPng(renderer, world, camera) {
  renderer.render(world, camera);
  return renderer.domElement.toDataURL("image/png");
}

/** Saves a Blob (or text) under a file name through a temporary link. */
export function download(name, data, type = "text/plain") {
  const blob = data instanceof Blob ? data : new Blob([data], { type });
  const url = URL.createObjectURL(blob),
    a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** The address of the ONNX model of a trace: its input, the parts switched off, the training snapshot and
 *  the model (`data-model` on the input form, as main.js reads it; absent for the default). */
export function onnxUrl(trace, model = document.getElementById("input-form")?.dataset.model) {
  const q = new URLSearchParams({ input: String(trace.input.number) });
  if (trace.ablation?.length) q.set("ablate", trace.ablation.join(","));
  if (trace.checkpoint !== null && trace.checkpoint !== undefined) q.set("checkpoint", String(trace.checkpoint));
  if (model) q.set("model", model);
  return `/api/trace.onnx?${q}`;
}

const ONNX_TITLE = "Download the whole trace as an ONNX model (open it in Netron)";
/** Why there is no ONNX file to download, or null when the server is there to build it. */
export function onnxMissing(source = numbersSource.get()) {
  if (source === "browser")
    return (
      "The ONNX file is built by the server, in Python, for each input: this copy of the site has no server "
      + "(run the app, python -m app, to download it)."
    );
  if (source === "offline")
    return "The ONNX file is built by the server for each input, and the server cannot be reached now.";
  return null;
}

/** Downloads the trace on the stage as an ONNX model (the server names the file); false with no trace.
 *  @param {import("../types.js").Trace | null} trace */
export function downloadOnnx(trace) {
  if (!trace?.input || onnxMissing()) return false;
  const a = document.createElement("a");
  a.href = onnxUrl(trace);
  a.download = "";
  a.hidden = true;
  document.body.appendChild(a);
  a.click();
  a.remove();
  return true;
}

/** A data URL as a Blob. */
export function dataUrlBlob(url) {
  const [head, body] = url.split(",");
  const bytes = atob(body),
    out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = bytes.charCodeAt(i);
  return new Blob([out], { type: head.slice(5).split(";")[0] });
}

/** Copies text; false when the browser refuses (the caller then shows the text to copy by hand). */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** A file name from the input and a tensor id: anatomy-42-<id>.csv (characters a file name cannot hold become _). */
export function fileName(input, id, ext) {
  return `anatomy-${input ?? "trace"}${id ? `-${id.replace(/[^A-Za-z0-9_.-]+/g, "_")}` : ""}.${ext}`;
}

/** The stage's exports: its PNG and CSV buttons (lasting overlays: views keep clear of them) and what
 *  they download. */
export class Exports {
  constructor(stage) {
    this.stage = stage;
    this.tools = Object.assign(document.createElement("div"), { className: "stage-tools" });
    const tool = (className, text, title, fn) => {
      const bt = Object.assign(document.createElement("button"), { type: "button", textContent: text, title });
      bt.addEventListener("click", fn);
      bt.className = className;
      this.tools.append(bt);
      return bt;
    };
    tool("stage-png", "PNG", "Download the stage as a PNG image, at its size", () => this.downloadPng());
    tool("stage-csv", "CSV", "Download the block under the cursor as CSV (rows and columns labelled)", () =>
      this.downloadCsv(),
    );
    const onnx = tool("stage-onnx", "ONNX", ONNX_TITLE, () => downloadOnnx(this.stage.trace) || this.sayNoOnnx());
    const mark = () => {
      const why = onnxMissing();
      onnx.title = why || ONNX_TITLE;
      if (why) onnx.setAttribute("aria-disabled", "true");
      else onnx.removeAttribute("aria-disabled");
    };
    numbersSource.follow(mark);
    this.tools.dataset.coversStage = "";
  }

  sayNoOnnx() {
    const why = onnxMissing();
    if (why) this.stage.message(why);
  }

  /** A block (a head slice: its block) as CSV text. */
  csv(id) {
    const s = this.stage,
      { block } = s.drawnIn(id);
    return block ? blockCsv(s.scene, block, s.tensors.get(block.id)) : null;
  }

  downloadCsv(id = this.stage.explained?.id || this.stage.cursor?.id) {
    const s = this.stage,
      { block } = id ? s.drawnIn(id) : { block: null };
    if (!block) {
      s.message("Point at a block (or explain a cell) first: the CSV is of that block.");
      return false;
    }
    download(fileName(s.trace?.input?.number, block.id, "csv"), this.csv(block.id), "text/csv");
    return true;
  }

  /** The stage as a PNG data URL, at the canvas's size, with the token names and numbers shown on it. */
  png() {
    const s = this.stage;
    return s.readouts?.shown ? this.composed().toDataURL("image/png") : canvasPng(s.renderer, s.world, s.camera);
  }

  /** A 2-D canvas of the stage with the names and numbers painted over it: a frame drawn now, or
   *  (drawn = true) the one just drawn, read in the task that drew it (view.js whenSettled()). Its
   *  toBlob() encodes off the main thread, where a software-drawn stage's toDataURL takes seconds. */
  composed(drawn = false) {
    const s = this.stage,
      gl = s.renderer.domElement;
    if (!drawn) s.renderer.render(s.world, s.camera);
    const out = Object.assign(document.createElement("canvas"), { width: gl.width, height: gl.height }),
      ctx = out.getContext("2d");
    ctx.drawImage(gl, 0, 0); // in the same task as the render: the drawing buffer is not preserved
    s.readouts?.paint(ctx, gl.width / (s.el.clientWidth || gl.width));
    return out;
  }

  downloadPng() {
    download(fileName(this.stage.trace?.input?.number, null, "png"), dataUrlBlob(this.png()));
  }
}
