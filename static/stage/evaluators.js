// One small evaluator per ONNX operator, for ./explain.js: (node, input tensors, output index, ctx) →
// {value, cells, lines, where?, top?}, driven by the node's own `op`, `inputs` and `attrs` (never by its id).
// cells: [[input position, index]]; lines: the right-hand sides of "Y_… = …", the definition first.
// Elements are read by the index rules of static/engine/tensor.js, as the whole-tensor engine reads them.
import { axisOf, bcast, flatIndex } from "../engine/tensor.js";
import { par, plus, sub, sum, tex, texText, tokenNote } from "./explain-tex.js";

// ---------- tensors ----------
export const at = (t, idx) => t.data[flatIndex(t.shape, idx)];
export const range = (n) => Array.from({ length: n }, (_, i) => i);
const along = (o, ax, j) => {
  const i = o.slice();
  i[ax] = j;
  return i;
};

// ---------- the evaluators ----------

/** @param {any} n @param {any[]} inputs (A, B and Gemm's C) */
function product(n, [A, B, C], o, { alpha = 1, beta = 1, transA = 0, transB = 0 } = {}) {
  if (A.shape.length !== 2 || B.shape.length !== 2 || o.length !== 2)
    throw new Error(`${n.op} is explained for matrices only`);
  const [r, c] = o,
    K = transA ? A.shape[0] : A.shape[1];
  const cells = [],
    terms = [],
    prods = [];
  let s = 0;
  for (let k = 0; k < K; k++) {
    const ia = transA ? [k, r] : [r, k],
      ib = transB ? [c, k] : [k, c];
    const a = at(A, ia),
      b = at(B, ib);
    s += a * b;
    cells.push([0, ia], [1, ib]);
    terms.push(`${par(a)}\\cdot ${par(b)}`);
    prods.push({
      value: a * b,
      parts: [
        [0, ia],
        [1, ib],
      ],
    });
  }
  let value = alpha * s,
    cv = 0,
    ic = null;
  if (C) {
    ic = bcast(C.shape, o);
    cv = at(C, ic);
    value += beta * cv;
    cells.push([2, ic]);
  }
  const a = alpha !== 1 ? "\\alpha" : "",
    sa = `A_{${transA ? `k,${r}` : `${r},k`}}`,
    sb = `B_{${transB ? `${c},k` : `k,${c}`}}`;
  const cTerm = C ? ` + ${beta !== 1 ? "\\beta\\," : ""}C${sub(ic)}` : "";
  const cNum = !C ? "" : beta !== 1 ? ` + ${tex(beta)}\\cdot ${par(cv)}` : plus(cv);
  const lines = [
    `${a}\\sum_{k=0}^{${K - 1}} ${sa}\\,${sb}${cTerm}`,
    `${alpha !== 1 ? `${tex(alpha)}\\cdot\\big(` : ""}${sum(terms)}${alpha !== 1 ? "\\big)" : ""}${cNum}`,
  ];
  if (alpha !== 1 || C) lines.push(`${alpha !== 1 ? `${tex(alpha)}\\cdot ${par(s)}` : tex(s)}${cNum}`);
  const where = [];
  if (alpha !== 1) where.push(["\\alpha", tex(alpha, "sig6")]);
  if (beta !== 1 && C) where.push(["\\beta", tex(beta, "sig6")]);
  prods.sort((x, y) => Math.abs(y.value) - Math.abs(x.value));
  return { value, cells, lines, where, top: prods.slice(0, 3) };
}

function binary(symbol, f) {
  return (n, [A, B], o) => {
    const ia = bcast(A.shape, o),
      ib = bcast(B.shape, o),
      a = at(A, ia),
      b = at(B, ib);
    const show =
      symbol === "/"
        ? [`\\frac{A${sub(ia)}}{B${sub(ib)}}`, `\\frac{${tex(a)}}{${tex(b)}}`]
        : [`A${sub(ia)} ${symbol} B${sub(ib)}`, `${tex(a)} ${symbol} ${par(b)}`];
    return {
      value: f(a, b),
      cells: [
        [0, ia],
        [1, ib],
      ],
      lines: show,
    };
  };
}

function reduceAxis(X, o, axis) {
  const ax = axisOf(axis, X.shape.length),
    idxs = range(X.shape[ax]).map((j) => along(o, ax, j));
  return { ax, idxs, xs: idxs.map((i) => at(X, i)), symbolic: o.map((v, i) => (i === ax ? "j" : v)) };
}

export const OPS = {
  Gemm: (n, X, o) => product(n, X, o, n.attrs || {}),
  MatMul: (n, X, o) => product(n, [X[0], X[1]], o),
  Add: binary("+", (a, b) => a + b),
  Sub: binary("-", (a, b) => a - b),
  Mul: binary("\\cdot", (a, b) => a * b),
  Div: binary("/", (a, b) => a / b),

  Relu: (n, [X], o) => {
    const x = at(X, o);
    return {
      value: Math.max(0, x),
      cells: [[0, o]],
      lines: [`\\max\\big(0,\\ X${sub(o)}\\big)`, `\\max\\big(0,\\ ${tex(x)}\\big)`],
    };
  },

  Softmax: (n, [X], o) => {
    const { ax, idxs, xs, symbolic } = reduceAxis(X, o, n.attrs?.axis ?? -1);
    const m = Math.max(...xs),
      es = xs.map((x) => Math.exp(x - m)),
      den = es.reduce((a, b) => a + b, 0),
      own = es[o[ax]];
    const sj = sub(symbolic);
    return {
      value: own / den,
      cells: idxs.map((i) => [0, i]),
      lines: [
        `\\frac{e^{X${sub(o)} - m}}{\\sum_{j} e^{X${sj} - m}}`,
        `\\frac{e^{${tex(xs[o[ax]])}${plus(-m)}}}{${sum(es.map((e) => tex(e)))}}`,
        `\\frac{${tex(own)}}{${tex(den)}}`,
      ],
      where: [["m", `\\max_j X${sj} = ${tex(m, "sig6")}`]],
    };
  },

  LayerNormalization: (n, [X, S, B], o) => {
    const ax = axisOf(n.attrs?.axis ?? -1, X.shape.length),
      eps = n.attrs?.epsilon ?? 1e-5;
    if (ax !== X.shape.length - 1) throw new Error("LayerNormalization is explained over the last axis only");
    const { idxs, xs, symbolic } = reduceAxis(X, o, -1),
      N = xs.length;
    const mu = xs.reduce((a, b) => a + b, 0) / N,
      v = xs.reduce((a, x) => a + (x - mu) ** 2, 0) / N;
    const is = bcast(S.shape, o),
      x = at(X, o),
      g = at(S, is);
    const cells = idxs.map((i) => [0, i]);
    cells.push([1, is]);
    let value = ((x - mu) / Math.sqrt(v + eps)) * g,
      bTerm = "",
      bNum = "";
    if (B) {
      const ib = bcast(B.shape, o),
        b = at(B, ib);
      value += b;
      cells.push([2, ib]);
      bTerm = ` + \\beta${sub(ib)}`;
      bNum = plus(b);
    }
    const sj = sub(symbolic);
    return {
      value,
      cells,
      lines: [
        `\\frac{X${sub(o)} - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}}\\,\\gamma${sub(is)}${bTerm}`,
        `\\frac{${tex(x)}${plus(-mu)}}{\\sqrt{${tex(v)} + ${tex(eps)}}}\\cdot ${par(g)}${bNum}`,
      ],
      where: [
        [
          "\\mu",
          `\\tfrac{1}{${N}}\\sum_j X${sj} = `
            + `\\tfrac{1}{${N}}\\big(${sum(xs.map((t) => par(t)))}\\big) = ${tex(mu, "sig6")}`,
        ],
        ["\\sigma^2", `\\tfrac{1}{${N}}\\sum_j \\big(X${sj} - \\mu\\big)^2 = ${tex(v, "sig6")}`],
      ],
    };
  },

  RMSNormalization: (n, [X, S], o) => {
    const ax = axisOf(n.attrs?.axis ?? -1, X.shape.length),
      eps = n.attrs?.epsilon ?? 1e-5;
    if (ax !== X.shape.length - 1) throw new Error("RMSNormalization is explained over the last axis only");
    const { idxs, xs, symbolic } = reduceAxis(X, o, -1),
      N = xs.length;
    const ms = xs.reduce((a, x) => a + x * x, 0) / N;
    const is = bcast(S.shape, o),
      x = at(X, o),
      g = at(S, is);
    const cells = idxs.map((i) => [0, i]);
    cells.push([1, is]);
    return {
      value: (x / Math.sqrt(ms + eps)) * g,
      cells,
      lines: [
        `\\frac{X${sub(o)}}{\\sqrt{r + \\epsilon}}\\,\\gamma${sub(is)}`,
        `\\frac{${tex(x)}}{\\sqrt{${tex(ms)} + ${tex(eps)}}}\\cdot ${par(g)}`,
      ],
      where: [["r", `\\tfrac{1}{${N}}\\sum_j X${sub(symbolic)}^2 = ${tex(ms, "sig6")}`]],
    };
  },

  Sigmoid: (n, [X], o) => {
    const x = at(X, o);
    return {
      value: 1 / (1 + Math.exp(-x)),
      cells: [[0, o]],
      lines: [`\\frac{1}{1 + e^{-X${sub(o)}}}`, `\\frac{1}{1 + e^{${tex(-x)}}}`],
    };
  },

  // ONNX opset 23, interleaved pairs (2i, 2i+1), num_heads heads side by side in the columns; a trace's
  // 2-D (sequence, hidden) input is the operator's 3-D form without its batch axis of 1.
  RotaryEmbedding: (n, [X, C, S, P], o) => {
    if (X.shape.length !== 2 || !n.attrs?.interleaved)
      throw new Error("RotaryEmbedding is explained for interleaved (sequence, hidden) inputs only");
    const heads = n.attrs.num_heads || 1,
      dk = X.shape[1] / heads,
      [t, c] = o;
    const base = c - (c % 2),
      i = (c % dk) >> 1,
      odd = c % 2 === 1;
    const pi = P ? [t] : null,
      pos = P ? at(P, pi) : t,
      ci = [pos, i];
    const x1 = at(X, [t, base]),
      x2 = at(X, [t, base + 1]),
      cos = at(C, ci),
      sin = at(S, ci);
    const cells = [
      [0, [t, base]],
      [0, [t, base + 1]],
      [1, ci],
      [2, ci],
    ];
    if (P) cells.push([3, pi]);
    const a = `X_{${t},${base}}`,
      b = `X_{${t},${base + 1}}`;
    return {
      value: odd ? sin * x1 + cos * x2 : cos * x1 - sin * x2,
      cells,
      lines: odd
        ? [
            `\\sin_{${pos},${i}}\\,${a} + \\cos_{${pos},${i}}\\,${b}`,
            `${par(sin)}\\cdot ${par(x1)} + ${par(cos)}\\cdot ${par(x2)}`,
          ]
        : [
            `\\cos_{${pos},${i}}\\,${a} - \\sin_{${pos},${i}}\\,${b}`,
            `${par(cos)}\\cdot ${par(x1)} - ${par(sin)}\\cdot ${par(x2)}`,
          ],
      where: [["\\text{pair}", `${i}\\text{ of head }${Math.floor(c / dk) + 1}\\text{, position }${pos}`]],
    };
  },

  Gather: (n, [D, I], o, ctx) => {
    const ax = axisOf(n.attrs?.axis ?? 0, D.shape.length),
      r = I.shape.length;
    const ii = o.slice(ax, ax + r);
    let k = at(I, ii);
    if (k < 0) k += D.shape[ax];
    const di = [...o.slice(0, ax), k, ...o.slice(ax + r)];
    const sym = [...o.slice(0, ax), `I${sub(ii)}`, ...o.slice(ax + r)];
    const name = ctx.token(n.inputs[1], k);
    return {
      value: at(D, di),
      cells: [
        [1, ii],
        [0, di],
      ],
      lines: [`D_{${sym.join(",")}}`, `D${sub(di)}`],
      where: [[`I${sub(ii)}`, `${tex(k)}${tokenNote(name)}`]],
    };
  },

  Transpose: (n, [X], o) => {
    const perm = n.attrs?.perm || range(X.shape.length).reverse(),
      ix = new Array(o.length);
    perm.forEach((p, k) => {
      ix[p] = o[k];
    });
    return { value: at(X, ix), cells: [[0, ix]], lines: [`X${sub(ix)}`] };
  },

  Slice: (n, [X], o) => {
    const a = n.attrs || {},
      ix = o.slice(),
      shown = o.map(String);
    (a.axes || range(a.starts.length)).forEach((axis, i) => {
      const ax = axisOf(axis, X.shape.length),
        dim = X.shape[ax],
        step = a.steps?.[i] ?? 1;
      let s = a.starts[i];
      if (s < 0) s += dim;
      s = Math.min(Math.max(s, 0), step > 0 ? dim : dim - 1);
      ix[ax] = s + o[ax] * step;
      if (s || step !== 1) shown[ax] = `${step !== 1 ? `${step}\\cdot ` : ""}${o[ax]} + ${s}`;
    });
    return { value: at(X, ix), cells: [[0, ix]], lines: [`X_{${shown.join(",\\,")}}`, `X${sub(ix)}`] };
  },

  Concat: (n, X, o) => {
    const ax = axisOf(n.attrs?.axis ?? 0, o.length);
    let off = 0,
      k = 0;
    while (k < X.length - 1 && o[ax] >= off + X[k].shape[ax]) off += X[k++].shape[ax];
    const ix = along(o, ax, o[ax] - off),
      shown = o.map(String);
    if (off) shown[ax] = `${o[ax]} - ${off}`;
    return {
      value: at(X[k], ix),
      cells: [[k, ix]],
      lines: [`X^{(${k + 1})}_{${shown.join(",\\,")}}`, `X^{(${k + 1})}${sub(ix)}`],
    };
  },

  Where: (n, [C, A, B], o) => {
    const ic = bcast(C.shape, o),
      ia = bcast(A.shape, o),
      ib = bcast(B.shape, o),
      cond = !!at(C, ic);
    const value = cond ? at(A, ia) : at(B, ib);
    return {
      value,
      cells: [[0, ic], cond ? [1, ia] : [2, ib]],
      lines: [
        `\\begin{cases} A${sub(ia)} & \\text{if } C${sub(ic)} \\\\ B${sub(ib)} & \\text{otherwise} \\end{cases}`,
        `${cond ? `A${sub(ia)}` : `B${sub(ib)}`}\\quad\\text{since } C${sub(ic)} = \\text{${cond ? "true" : "false"}}`,
      ],
    };
  },

  ArgMax: (n, [X], o, ctx) => {
    const keep = n.attrs?.keepdims ?? 1,
      ax = axisOf(n.attrs?.axis ?? 0, X.shape.length);
    const base = keep ? o.slice() : [...o.slice(0, ax), 0, ...o.slice(ax)];
    const { idxs, xs, symbolic } = reduceAxis(X, base, ax);
    let best = 0;
    xs.forEach((x, j) => {
      if (x > xs[best]) best = j;
    });
    return {
      value: best,
      cells: idxs.map((i) => [0, i]),
      lines: [
        `\\operatorname{arg\\,max}_j X${sub(symbolic)}`,
        `${best}${tokenNote(ctx.token(n.id, best))}\\quad\\text{since } X${sub(idxs[best])} = `
          + `${tex(xs[best], "sig6")}\\text{ is the largest of ${xs.length}}`,
      ],
    };
  },

  Constant: (n, X, o) => {
    const value = at(n, o),
      f = n.attrs?.formula;
    return {
      value,
      cells: [],
      given: true,
      lines: [`${tex(value, "sig6")}\\quad\\text{(a constant of the trace${f ? `: ${texText(f)}` : ""})}`],
    };
  },

  Parameter: (n, X, o) => ({
    value: at(n, o),
    cells: [],
    given: true,
    lines: [`${tex(at(n, o), "sig6")}\\quad\\text{(a parameter, learned in training)}`],
  }),
};
