// The cell field's shaders (./cells.js): the vertex shader places, sizes and colours each instance (one
// cell) from its attributes and its block's row of the state texture; the fragment shader shades it, outlines
// a row's largest probability and mixes a dimmed cell towards the background. The texel layout is cells.js's.

export const vertexShader = /* glsl */ `
  precision highp sampler2D;
  attribute vec4 aPos;      // cell centre now (xy) and before (zw)
  attribute vec2 aVal;      // value now, value before
  attribute vec2 aRC;       // drawn row, column
  attribute float aBlock;   // row of the state texture
  attribute float aMark;    // 1: the largest probability of its row (bar blocks); 2: veiled (an open question's)
  uniform sampler2D uState, uDiverging, uSequential;
  uniform float uH, uFootprint, uFlatH, uMaskedH, uMinH;  // scene.cell's heights
  uniform vec3 uMasked, uReluZero, uBoolTrue, uIds, uAbsent;
  uniform vec3 uTarget;     // the marked cell: block, drawn row, column (block < 0: none)
  varying vec3 vColor;
  varying vec2 vUv;
  varying float vShade, vLit, vGlow, vMark;

  vec4 st(int k) { return texelFetch(uState, ivec2(k, int(aBlock)), 0); }
  vec3 ramp(sampler2D map, float u) {  // u in 0..1 onto N evenly spaced stops, ends included (scene/cells.py)
    float n = float(textureSize(map, 0).x);
    return texture2D(map, vec2((0.5 + u * (n - 1.0)) / n, 0.5)).rgb;
  }
  float hash(vec2 p, float seed) { return fract(sin(dot(p, vec2(12.9898, 78.233)) + seed * 0.618) * 43758.5453); }

  void main() {
    vec4 s0 = st(0), s1 = st(1), s2 = st(2), s3 = st(3), s4 = st(4);
    if (s3.w > 0.0 && (aRC.y < s3.z || aRC.y >= s3.w)) {  // outside a window: not drawn
      gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
      return;
    }
    float kind = s0.z, t = s3.x;
    bool inf = aVal.x < -1e29, absent = aVal.x > 1e29;
    float prevV = (abs(aVal.y) > 1e29 || s3.y > 0.5) ? 0.0 : aVal.y;
    float v = mix(prevV, (inf || absent) ? 0.0 : aVal.x, t);
    float sc = mix(s0.y, s0.x, t);
    float x = sc > 0.0 ? clamp(v / sc, -1.0, 1.0) : 0.0;
    float h; vec3 c;
    if (kind == 1.0) { h = uFlatH; c = ramp(uSequential, clamp(v, 0.0, 1.0)); }  // flat: colour alone
    else if (kind == 4.0) { h = uFlatH; c = v > 0.5 ? uBoolTrue : uMasked; }
    else if (kind == 5.0) { h = uFlatH; c = uIds; }
    else { h = x * uH; c = ramp(uDiverging, 0.5 + 0.5 * x); }
    if (inf) { h = uMaskedH; c = uMasked; }
    if (absent) { h = 0.1; c = uAbsent * (mod(aRC.x + aRC.y, 2.0) < 0.5 ? 1.0 : 0.62); }  // hatched: not a zero
    if (kind == 3.0 && aVal.x == 0.0 && t >= 1.0) c = uReluZero;
    if (s1.y > 0.0 && hash(aRC, s1.y) < 0.1) { h = 0.0; c = vec3(0.08); }     // dropout mask (illustration)
    if (aRC.x >= s1.x) { h = 0.0; c = mix(c, vec3(0.12, 0.13, 0.15), 0.85); }  // not computed yet
    bool veiled = aMark > 1.5;  // what an open exercise asks about: no colour, no height, no outline
    if (veiled) { h = uFlatH; c = vec3(0.34, 0.35, 0.38); }  // a grey no scale uses: not read as any value
    if (abs(h) < uMinH) h = h < 0.0 ? -uMinH : uMinH;
    float lit = s0.w;
    if (s1.w > 0.5) {
      bool inA = aRC.x >= s2.x && aRC.x <= s2.y && aRC.y >= s2.z && aRC.y <= s2.w;
      bool inB = s1.w > 1.5 && aRC.x >= s4.x && aRC.x <= s4.y && aRC.y >= s4.z && aRC.y <= s4.w;
      lit *= (inA || inB) ? 1.0 : 0.28;
    }
    float glow = s1.z;
    if (aBlock == uTarget.x && aRC.x == uTarget.y && aRC.y == uTarget.z) {
      lit = 1.0;
      glow = 1.0;
      h = max(abs(h), 0.6) * (h < 0.0 ? -1.0 : 1.0);
    }
    vec3 p = position;                 // unit box, z in [0, 1]
    p.xy *= uFootprint;
    p.z *= h;
    p.xy += mix(aPos.zw, aPos.xy, t);
    vec3 n = normal * vec3(1.0, 1.0, sign(h));
    vShade = kind == 1.0 ? 1.0 : 0.62 + 0.38 * max(dot(normalize(n), normalize(vec3(0.35, 0.55, 0.75))), 0.0);
    vColor = c; vLit = lit; vGlow = glow; vUv = uv;
    vMark = kind == 1.0 && aMark > 0.5 && !veiled && t >= 1.0 && !inf && !absent && aRC.x < s1.x && n.z > 0.5
      ? 1.0 : 0.0;
    gl_Position = projectionMatrix * modelViewMatrix * vec4(p, 1.0);
  }`;

export const fragmentShader = /* glsl */ `
  uniform vec3 uBg, uRowMax;
  uniform float uMarkW;     // the outline's width, a share of the cell's side (at least 1.5 pixels)
  varying vec3 vColor;
  varying vec2 vUv;
  varying float vShade, vLit, vGlow, vMark;
  void main() {
    vec3 c = vColor * vShade;
    if (vMark > 0.5) {
      vec2 e = min(vUv, 1.0 - vUv);
      if (min(e.x, e.y) < max(uMarkW, 1.5 * max(fwidth(vUv.x), fwidth(vUv.y)))) c = uRowMax;
    }
    c = mix(c, vec3(1.0, 0.95, 0.7), vGlow * 0.25);
    gl_FragColor = vec4(mix(uBg, c, vLit), 1.0);
  }`;
