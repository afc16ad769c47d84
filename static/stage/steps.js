// The tour as data (STYLE: Transformer Explainer): each view is a camera keyframe described by the
// blocks it frames and the angle it is seen from; each step is a plain object. The article's
// sections carry the same names (data-view, data-highlight, data-animation); an anatomy:step
// event's own highlight list wins over the one here.

const A = (az, el) => ({ azimuth: az, elevation: el });

export const VIEWS = {
  overview: { frame: ['*'], ...A(-0.12, 0.08) },
  task: { frame: ['src.*', 'tgt.*', 'E', 'out.*'], ...A(-0.1, 0.06) },
  embedding: { frame: ['E', 'src.*', 'tgt.*', 'dec.mask'], ...A(-0.15, 0.12) },
  'embedding-scale': { frame: ['src.*', 'const.sqrt_d'], ...A(-0.12, 0.1) },
  positional: { frame: ['src.emb', 'src.scaled', 'src.pe', 'src.x0'], ...A(-0.12, 0.1) },
  'enc0-self-qkv': { frame: ['enc.0.self.W_[qkv]', 'enc.0.self.b_[qkv]', 'enc.0.self.[qkv]'], ...A(-0.12, 0.1) },
  'enc0-self-scores': { frame: ['enc.0.self.h*', 'enc.0.self.[qk]'], ...A(-0.2, 0.2) },
  'enc0-self-softmax': { frame: ['enc.0.self.h*'], ...A(-0.12, 0.1) },
  'enc0-self-heads': { frame: ['enc.0.self.h*', 'enc.0.self.v'], ...A(-0.2, 0.2) },
  'enc0-self-concat': { frame: ['enc.0.self.h*.out', 'enc.0.self.concat', 'enc.0.self.W_o', 'enc.0.self.proj'], ...A(-0.12, 0.1) },
  'enc0-self-norm': { frame: ['enc.0.self.concat', 'enc.0.self.sum', 'enc.0.self.ln*', 'enc.0.self.proj', 'src.x0'], ...A(-0.25, 0.15) },
  'enc0-ffn': { frame: ['enc.0.ffn.*'], ...A(-0.12, 0.1) },
  'enc1-ffn-memory': { frame: ['enc.1.*'], ...A(-0.12, 0.1) },
  'dec-input': { frame: ['tgt.*', 'dec.mask', 'E'], ...A(0.15, 0.12) },
  // the first two heads only: close enough to see the dark-red masked cells
  'dec0-self-mask': { frame: ['dec.0.self.h[01].*'], ...A(0.12, 0.28) },
  // the last decoder layer's cross-attention, seen from the encoder's side: the arcs come in under W^K, W^V
  'dec-cross': { frame: ['dec.1.cross.h*', 'dec.1.cross.[kv]', 'dec.1.cross.W_[kv]'], ...A(-0.32, 0.1) },
  'dec-layer': { frame: ['dec.0.*'], ...A(0.15, 0.12) },
  output: { frame: ['out.*', 'dec.1.ffn.sum', 'dec.1.ffn.ln*'], ...A(0.12, 0.1) },
  // the output on top, the decoder input below, the yellow loop between them (the decoder tower only)
  'output-loop': { frame: ['out.*', 'tgt.*'], ...A(0.42, 0.06) },
  'training-loss': { frame: ['out.*'], ...A(0.12, 0.1) },
  'training-adam': { frame: ['*'], ...A(0.3, 0.16) },
  'training-dropout': { frame: ['enc.0.self.concat', 'enc.0.self.W_o', 'enc.0.self.proj', 'enc.0.self.sum', 'enc.0.self.ln*'], ...A(-0.12, 0.1) },
  parameters: { frame: ['*'], ...A(-0.4, 0.22) },
};

export function viewOf(name) { return VIEWS[name] || VIEWS.overview; }

const PARAMS = ['E', 'enc.*.W_*', 'enc.*.b_*', 'enc.*.ln.*', 'dec.*.W_*', 'dec.*.b_*', 'dec.*.ln.*'];

// The 29 steps of SPEC §5.2. `dim` names blocks drawn faint; animation names are the article's.
export const STEPS = [
  { step: 1, view: 'overview', highlight: [], animation: 'none' },
  { step: 2, view: 'task', highlight: ['src.ids', 'tgt.ids', 'out.tokens'], animation: 'none' },
  { step: 3, view: 'embedding', highlight: ['E', 'src.ids', 'tgt.ids'], animation: 'none' },
  { step: 4, view: 'embedding-scale', highlight: ['E', 'src.emb', 'src.scaled', 'const.sqrt_d'], animation: 'none' },
  { step: 5, view: 'positional', highlight: ['src.pe', 'src.x0'], animation: 'none' },
  { step: 6, view: 'enc0-self-qkv', highlight: ['src.x0', 'enc.0.self.W_*', 'enc.0.self.b_*', 'enc.0.self.q*', 'enc.0.self.k*', 'enc.0.self.v*'], animation: 'one-cell' },
  { step: 7, view: 'enc0-self-scores', highlight: ['enc.0.self.h*.scores'], animation: 'none' },
  { step: 8, view: 'enc0-self-softmax', highlight: ['enc.0.self.h*.weights'], animation: 'none' },
  { step: 9, view: 'enc0-self-heads', highlight: ['enc.0.self.h*.weights', 'enc.0.self.v.h*', 'enc.0.self.h*.out'], animation: 'sweep' },
  { step: 10, view: 'enc0-self-concat', highlight: ['enc.0.self.h*.out', 'enc.0.self.concat', 'enc.0.self.W_o', 'enc.0.self.b_o', 'enc.0.self.proj'], animation: 'none' },
  { step: 11, view: 'enc0-self-norm', highlight: ['src.x0', 'enc.0.self.proj', 'enc.0.self.sum', 'enc.0.self.ln*'], animation: 'residual' },
  { step: 12, view: 'enc0-ffn', highlight: ['enc.0.self.ln', 'enc.0.ffn.*'], animation: 'none' },
  { step: 13, view: 'enc1-ffn-memory', highlight: ['enc.1.*'], animation: 'none' },
  { step: 14, view: 'dec-input', highlight: ['tgt.*', 'out.tokens'], animation: 'none' },
  { step: 15, view: 'dec0-self-mask', highlight: ['dec.0.self.h*.scores', 'dec.0.self.h*.masked', 'dec.0.self.h*.weights', 'dec.mask'], animation: 'mask' },
  { step: 16, view: 'dec-cross', highlight: ['enc.1.ffn.ln', 'dec.*.cross.*'], animation: 'arcs' },
  { step: 17, view: 'dec-layer', highlight: ['dec.0.*'], animation: 'none' },
  { step: 18, view: 'output', highlight: ['dec.1.ffn.ln', 'out.*', 'E'], animation: 'none' },
  { step: 19, view: 'output-loop', highlight: ['out.probs', 'out.tokens', 'tgt.*', 'dec.*'], animation: 'loop' },
  { step: 20, view: 'training-loss', highlight: ['out.logits', 'out.probs'], animation: 'none' },
  { step: 21, view: 'training-adam', highlight: PARAMS, animation: 'none' },
  { step: 22, view: 'training-dropout', highlight: ['enc.0.self.proj', 'enc.0.self.sum', 'src.x0'], animation: 'dropout' },
  { step: 23, view: 'overview', highlight: ['enc.*.self.h*.scores', 'enc.*.self.h*.weights'], animation: 'none' },
  { step: 24, view: 'overview', highlight: ['out.tokens'], animation: 'none' },
  { step: 25, view: 'parameters', highlight: PARAMS, animation: 'parameters' },
  { step: 26, view: 'overview', highlight: [], animation: 'none' },
  { step: 27, view: 'overview', highlight: ['src.pe', 'tgt.pe'], animation: 'none' },
  { step: 28, view: 'overview', highlight: ['dec.*.cross.h*.weights'], animation: 'none' },
  { step: 29, view: 'overview', highlight: [], animation: 'none' },
];
