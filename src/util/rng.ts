/**
 * A small seeded PRNG (sfc32 seeded through splitmix32) so any simulation, sample or study replays
 * exactly from its seed. Every random choice in the core takes an `Rng`; nothing calls Math.random.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** Standard normal. */
  normal(): number;
  /** Gamma(shape, scale = 1). */
  gamma(shape: number): number;
  /** A new independent stream derived from this seed and a label (stable across runs). */
  fork(label: string | number): Rng;
  readonly seed: number;
}

function splitmix32(a: number): () => number {
  let s = a >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

function hashLabel(label: string | number): number {
  const s = String(label);
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * A seed as the 32 bits the generator starts from. Seeds below 2^32 are themselves (every stream stored
 * or documented stays as it was); the high bits of a larger one are mixed in, where `>>> 0` dropped
 * them and seed 4294967297 replayed seed 1 under another name (a workload or study may carry any
 * non-negative integer up to 2^53 − 1).
 */
function seedBits(seed: number): number {
  const lo = seed >>> 0;
  const hi = Math.floor(seed / 0x1_0000_0000) >>> 0;
  return hi === 0 ? lo : (lo ^ Math.imul(hi ^ (hi >>> 15), 0x2c1b3c6d) ^ 0x5bd1e995) >>> 0;
}

export function createRng(seed: number): Rng {
  const bits = seedBits(seed);
  const sm = splitmix32(bits);
  let a = sm();
  let b = sm();
  let c = sm();
  let d = sm();
  let spare: number | null = null;
  const next = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  const normal = (): number => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    let u = 0;
    while (u === 0) u = next();
    const v = next();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
  // Marsaglia–Tsang; shape < 1 via the boost gamma(k+1)·U^(1/k).
  const gamma = (shape: number): number => {
    if (shape < 1) {
      let u = 0;
      while (u === 0) u = next();
      return gamma(shape + 1) * u ** (1 / shape);
    }
    const dd = shape - 1 / 3;
    const cc = 1 / Math.sqrt(9 * dd);
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = normal();
        v = 1 + cc * x;
      } while (v <= 0);
      v = v * v * v;
      const u = next();
      if (u < 1 - 0.0331 * x ** 4) return dd * v;
      if (Math.log(u) < 0.5 * x * x + dd * (1 - v + Math.log(v))) return dd * v;
    }
  };
  return {
    seed,
    next,
    int: (n) => Math.floor(next() * n),
    normal,
    gamma,
    fork: (label) => createRng((bits ^ hashLabel(label)) >>> 0),
  };
}
