// What the inspector says about a cell, from the scene's block (its description, station, token
// axes, and what else its op makes worth showing: the raw entry before a scale, the row's mean and
// standard deviation, whether the cell is masked) and the tensor's values. Nothing here knows a
// tensor by name. Also the legend: the hovered block's colour scale.

import { formatNumber } from "../js/format.js";
import { sliceAlias, tensorIndex } from "./cellmap.js";

const fmt = (v) => (v === -Infinity ? "−∞" : formatNumber(v, Number.isInteger(v) ? "text" : "sig5"));

function rowStats(data, cols, row) {
  let s = 0,
    s2 = 0;
  for (let c = 0; c < cols; c++) s += data[row * cols + c];
  const mean = s / cols;
  for (let c = 0; c < cols; c++) {
    const d = data[row * cols + c] - mean;
    s2 += d * d;
  }
  return { mean, std: Math.sqrt(s2 / cols) }; // population std, as LayerNorm uses
}

/** Everything the inspector shows about drawn cell (r, c) of a block. */
export function cellInfo(scene, block, tensors, r, c) {
  const t = tensors.get(block.id);
  if (!t) return null;
  const { row, col, flat } = tensorIndex(block, r, c);
  const shape = block.shape,
    value = t.data[flat],
    axes = scene.axes;
  const info = { id: block.id, shape, row, col, value, op: block.op };
  const two = shape.length === 2;
  if (block.row_axis && shape.length >= 1 && !(shape.length === 1 && block.rows === 1))
    info.rowToken = axes[block.row_axis]?.[row];
  if (info.rowToken !== undefined) info.rowName = scene.row_names?.[block.row_axis]?.[row];
  if (two && block.col_axis) info.colToken = axes[block.col_axis]?.[col];
  if (block.value_axis) info.tokenName = axes[block.value_axis]?.[value];
  if (block.raw) {
    const raw = tensors.get(block.raw.of),
      factor = tensors.get(block.raw.factor_of);
    if (raw && factor) Object.assign(info, { raw: raw.data[flat], factor: factor.data[0], rawLabel: block.raw.label });
  }
  if (block.row_stats && two) {
    const s = rowStats(t.data, shape[1], row);
    info.rowMean = s.mean;
    info.rowStd = s.std;
  }
  if (block.mask) {
    const m = tensors.get(block.mask);
    if (m && two) info.masked = !m.data[row * m.shape[1] + col];
  }
  const alias = sliceAlias(scene, block, row, col);
  if (alias) info.alias = alias;
  if (block.transposed) info.note = `drawn transposed: this cell is ${block.id}[${row}, ${col}] shown at (${r}, ${c})`;
  return info;
}

/** Which of the inspector's lines is the id (in small type). */
export const ID_LINE = 2;

/** The inspector's lines for a cell (the first is its title). */
export function inspectorLines(scene, block, info, dropout = false) {
  const station = scene.stations.find((s) => s.id === block.station);
  const { shape, row, col, value } = info;
  // the part as a reader counts it (the scene's name), then what the tensor is, then its id in small type
  const lines = [
    block.name || station?.title || block.id,
    block.description,
    `${block.id}  shape ${shape.length ? shape.join(" × ") : "scalar"}`,
  ];
  const pos =
    shape.length === 0
      ? ""
      : shape.length === 1
        ? `index ${(block.rows === 1 ? col : row) + 1}`
        : `row ${row + 1}, column ${col + 1}`; // counted from 1, as a reader counts (the id's brackets from 0)
  const rowWords = info.rowName ?? (info.rowToken !== undefined ? `token “${info.rowToken}”` : undefined);
  const colWords = info.colToken !== undefined ? ` → column token “${info.colToken}”` : "";
  lines.push(`${pos}${rowWords !== undefined ? ` (${rowWords})` : ""}${colWords}`);
  lines.push(`value ${fmt(value)}${info.tokenName !== undefined ? ` = “${info.tokenName}”` : ""}`);
  if (info.raw !== undefined)
    lines.push(`${info.rawLabel} ${fmt(info.raw)} × ${fmt(info.factor)} = ${fmt(info.raw * info.factor)}`);
  if (info.rowMean !== undefined) lines.push(`row mean ${fmt(info.rowMean)}, std ${fmt(info.rowStd)}`);
  if (info.masked !== undefined)
    lines.push(info.masked ? "masked (a later position): −∞ before the softmax" : "not masked");
  if (info.alias) lines.push(`also ${info.alias}`);
  if (info.note) lines.push(info.note);
  if (dropout) lines.push("dropout mask shown for illustration (training only); the value is the inference value");
  return lines;
}

/** The legend of a block's colour scale: a gradient of the palette and its end values. In compare mode
 *  (difference: "A − B") an activation block shows the difference's scale instead. */
export function legendOf(scene, block, scale, difference = null) {
  const p = scene.palette;
  if (difference)
    return {
      stops: p.diverging,
      labels: [`−${formatNumber(scale, "sig3")}`, "0", `+${formatNumber(scale, "sig3")}`],
      title:
        `difference ${difference} (colour and height, scaled to this block's largest |difference|; `
        + "hatched: no such cell)",
    };
  if (block.kind === "bar")
    return {
      stops: p.sequential,
      labels: ["0", "0.25", "0.5", "0.75", "1"],
      title: "probability (colour alone, drawn flat; outlined: the largest in its row)",
    };
  if (block.kind === "ids" || block.kind === "bool") return null;
  return {
    stops: p.diverging,
    labels: [`−${fmt(scale)}`, "0", `+${fmt(scale)}`],
    title: "value (colour and height, scaled to this block's largest |value|)",
  };
}
