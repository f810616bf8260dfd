import type { PowerModel } from '../physics/power.js';

/**
 * One replica's energy, step by step: each step's energy above idle (the power model's, physics/power.ts)
 * and its raw activity (tensor, HBM and busy GPU-seconds, summed over the replica's GPUs, for fitting
 * the power model without simulating again). Running sums at each step's end, so that any window's
 * share is two binary searches; a step that straddles a window edge counts pro rata (its power is
 * constant over it). A server that runs for days (`keepSteps: false`) keeps only the totals and the
 * step in flight.
 */
export interface ActivitySums {
  /** Energy above idle, J (all the replica's GPUs). */
  dynamicJ: number;
  /** GPU-seconds of tensor work at the datasheet peak, of HBM traffic at the datasheet bandwidth, and of running kernels. */
  computeGpuS: number;
  memoryGpuS: number;
  busyGpuS: number;
}

const zero = (): ActivitySums => ({ dynamicJ: 0, computeGpuS: 0, memoryGpuS: 0, busyGpuS: 0 });
/** Numbers kept per step: start, end, and the running sums of dynamic J, compute, memory and busy GPU-seconds. */
const STRIDE = 6;

export class EnergyTrace {
  readonly totals: ActivitySums = zero();
  private buf: Float64Array;
  private n = 0;
  private readonly keepSteps: boolean;
  private lastStartS = 0;
  private lastEndS = 0;
  private readonly last: ActivitySums = zero();

  readonly power: PowerModel;

  constructor(power: PowerModel, opts: { keepSteps?: boolean } = {}) {
    this.power = power;
    this.keepSteps = opts.keepSteps ?? true;
    this.buf = new Float64Array(this.keepSteps ? 1024 * STRIDE : 0);
  }

  /** Steps recorded (0 when steps are not kept). */
  get steps(): number {
    return this.n;
  }

  /** A step from `startS` to `endS` with this activity on each of the replica's GPUs (seconds). */
  add(startS: number, endS: number, computeS: number, memoryS: number, busyS: number): void {
    const g = this.power.gpusPerReplica;
    const t = this.totals;
    const l = this.last;
    l.dynamicJ = this.power.dynamicJ(computeS, memoryS, busyS, endS - startS);
    l.computeGpuS = computeS * g;
    l.memoryGpuS = memoryS * g;
    l.busyGpuS = busyS * g;
    t.dynamicJ += l.dynamicJ;
    t.computeGpuS += l.computeGpuS;
    t.memoryGpuS += l.memoryGpuS;
    t.busyGpuS += l.busyGpuS;
    this.lastStartS = startS;
    this.lastEndS = endS;
    if (!this.keepSteps) return;
    const w = STRIDE;
    if ((this.n + 1) * w > this.buf.length) {
      const grown = new Float64Array(this.buf.length * 2);
      grown.set(this.buf);
      this.buf = grown;
    }
    const o = this.n * w;
    const b = this.buf;
    b[o] = startS;
    b[o + 1] = endS;
    b[o + 2] = t.dynamicJ;
    b[o + 3] = t.computeGpuS;
    b[o + 4] = t.memoryGpuS;
    b[o + 5] = t.busyGpuS;
    this.n++;
  }

  /** Sums from the start of the run to time `atS`. */
  upTo(atS: number): ActivitySums {
    if (!this.keepSteps) return this.upToInFlight(atS);
    const w = STRIDE;
    const b = this.buf;
    // The first step that ends after atS: everything before it counts whole, it counts pro rata.
    let lo = 0;
    let hi = this.n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((b[mid * w + 1] as number) <= atS) lo = mid + 1;
      else hi = mid;
    }
    const out = zero();
    if (lo > 0) {
      const o = (lo - 1) * w;
      out.dynamicJ = b[o + 2] as number;
      out.computeGpuS = b[o + 3] as number;
      out.memoryGpuS = b[o + 4] as number;
      out.busyGpuS = b[o + 5] as number;
    }
    if (lo < this.n) {
      const o = lo * w;
      const start = b[o] as number;
      const end = b[o + 1] as number;
      if (atS > start && end > start) {
        const f = (atS - start) / (end - start);
        const p = lo === 0 ? zero() : { dynamicJ: b[o - w + 2] as number, computeGpuS: b[o - w + 3] as number, memoryGpuS: b[o - w + 4] as number, busyGpuS: b[o - w + 5] as number };
        out.dynamicJ += f * ((b[o + 2] as number) - p.dynamicJ);
        out.computeGpuS += f * ((b[o + 3] as number) - p.computeGpuS);
        out.memoryGpuS += f * ((b[o + 4] as number) - p.memoryGpuS);
        out.busyGpuS += f * ((b[o + 5] as number) - p.busyGpuS);
      }
    }
    return out;
  }

  /** Power above idle at `atS` of all the replica's GPUs, W: the step in flight's, or 0 between steps. */
  dynamicPowerW(atS: number): number {
    const span = this.lastEndS - this.lastStartS;
    return atS >= this.lastStartS && atS < this.lastEndS && span > 0 ? this.last.dynamicJ / span : 0;
  }

  /** Without the steps: the totals, less the part of the last step still ahead of `atS`. */
  private upToInFlight(atS: number): ActivitySums {
    const t = this.totals;
    const l = this.last;
    const span = this.lastEndS - this.lastStartS;
    const ahead = atS >= this.lastEndS || span <= 0 ? 0 : Math.min(1, (this.lastEndS - atS) / span);
    return { dynamicJ: t.dynamicJ - ahead * l.dynamicJ, computeGpuS: t.computeGpuS - ahead * l.computeGpuS, memoryGpuS: t.memoryGpuS - ahead * l.memoryGpuS, busyGpuS: t.busyGpuS - ahead * l.busyGpuS };
  }
}

/** What the GPUs of a deployment did over a window: their energy, and the raw activity behind it. */
export interface WindowEnergy extends ActivitySums {
  readonly startS: number;
  readonly endS: number;
  readonly gpus: number;
  /** One GPU's idle power and TDP, W (the fit's inputs). */
  readonly idleW: number;
  readonly tdpW: number;
  /** Idle power of every GPU over the window plus every step's energy above it, J. */
  readonly energyJ: number;
  readonly avgPowerW: number;
}

/**
 * Energy of all the GPUs of `traces`' replicas over [startS, endS], and of `idleGpus` more of the
 * deployment that no replica uses (they draw their idle power all the same); null without traces or for
 * an empty window.
 */
export function windowEnergy(traces: readonly EnergyTrace[], startS: number, endS: number, idleGpus = 0): WindowEnergy | null {
  const first = traces[0];
  if (first === undefined || !(endS > startS)) return null;
  const sums = zero();
  let gpus = idleGpus;
  for (const tr of traces) {
    const a = tr.upTo(startS);
    const b = tr.upTo(endS);
    sums.dynamicJ += b.dynamicJ - a.dynamicJ;
    sums.computeGpuS += b.computeGpuS - a.computeGpuS;
    sums.memoryGpuS += b.memoryGpuS - a.memoryGpuS;
    sums.busyGpuS += b.busyGpuS - a.busyGpuS;
    gpus += tr.power.gpusPerReplica;
  }
  const { idleW, tdpW } = first.power;
  const energyJ = idleW * gpus * (endS - startS) + sums.dynamicJ;
  return { ...sums, startS, endS, gpus, idleW, tdpW, energyJ, avgPowerW: energyJ / (endS - startS) };
}
