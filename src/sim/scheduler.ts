import type { ResolvedServerConfig } from '../domain/index.js';
import type { Rng } from '../util/rng.js';
import { Deque } from './deque.js';
import { KvCache, type SlidingGroups } from './kv-cache.js';
import type { SimRequest } from './request.js';
import type { StepBatch, StepModel } from '../physics/step-time.js';
import { newStepActivity, type StepActivity } from '../physics/step-activity.js';
import type { PowerModel } from '../physics/power.js';
import type { WeightedSample } from './weighted.js';
import type { TokenRate } from './token-rate.js';
import { EnergyTrace } from './energy.js';

/** Seeded noise on step times (docs/references/vllm-engine.md#step-time-noise). */
export interface NoiseModel {
  /** σ of the multiplicative log-normal step noise (0.02–0.04). */
  readonly sigma: number;
  /** Probability per step of a host stall (GC, Python): ≈ 1 in 2,000. */
  readonly stallProbability: number;
  readonly stallMinMs: number;
  readonly stallMaxMs: number;
}

export const DEFAULT_NOISE: NoiseModel = { sigma: 0.03, stallProbability: 1 / 2000, stallMinMs: 5, stallMaxMs: 20 };
export const NO_NOISE: NoiseModel = { sigma: 0, stallProbability: 0, stallMinMs: 0, stallMaxMs: 0 };

/**
 * One engine replica: the V1 scheduler of vLLM's `vllm/v1/core/sched/scheduler.py` (FCFS) over a KV block pool. One call to
 * `step` schedules running requests first (decodes, then continuing prefill chunks) within the
 * token budget, preempting the last-admitted request by recompute when blocks run out, then admits
 * waiting requests if nothing was preempted; prices the step and applies it. Scratch arrays are
 * reused across steps so the hot loop does not allocate.
 */
export class Replica {
  readonly running: SimRequest[] = [];
  readonly waiting = new Deque<SimRequest>();
  readonly kv: KvCache;
  /** Requests that emitted a token in the last step, and those that finished in it. */
  readonly emitted: SimRequest[] = [];
  readonly finished: SimRequest[] = [];
  preemptions = 0;
  steps = 0;
  /** Tokens scheduled over all steps (prefill and decode): with `steps`, vLLM's iteration_tokens. */
  scheduledTokens = 0;
  /** When the step in flight ends (seconds), or +∞ when idle. */
  busyUntilS = Number.POSITIVE_INFINITY;
  /**
   * KV usage at the fullest of the step in flight (of the last one when idle): the most blocks in use
   * while it was scheduled, before its preemption victims and finished requests gave theirs back. The
   * usage after the step, which vLLM's gauge reads (`make_stats` runs once they are freed), hides a
   * cache that filled and preempted within the step: a burst of 200 20,000-token prompts on one H100
   * read 53% of its time at ≥ 95% (81% with this), some of its preempting steps under 95% once their victims'
   * blocks were back. The DES's evidence integrates this one, so a step that preempted counts as full.
   */
  kvStepUsage = 0;
  private readonly schedReqs: SimRequest[] = [];
  private readonly schedTokens: number[] = [];
  private readonly batch: StepBatch = { tokens: 0, requests: 0, sampled: 0, attnPairs: 0, kvReadTokens: 0, windowPairs: 0, windowKvReadTokens: 0, decodeOnly: true };
  private readonly logSigmaShift: number;
  private readonly cfg: ResolvedServerConfig;
  private readonly model: StepModel;
  private readonly noise: NoiseModel;
  private readonly rng: Rng;
  private readonly recordTokens: boolean;
  private readonly itl: WeightedSample | null;
  private readonly tokenRate: TokenRate | null;
  private readonly runDurations: number[] = [];
  /** Each step's energy (sim/energy.ts), when a power model was given; null otherwise. */
  readonly energy: EnergyTrace | null;
  private readonly activity: StepActivity | null;

  /**
   * `recordTokens: false` keeps only each request's first and latest token time (a summary run or the
   * real-time server), and pools inter-token gaps into `itl` as (gap, count) pairs.
   */
  constructor(opts: {
    cfg: ResolvedServerConfig;
    numBlocks: number;
    sliding?: SlidingGroups | null;
    model: StepModel;
    noise: NoiseModel;
    rng: Rng;
    recordTokens?: boolean;
    itl?: WeightedSample | null;
    /** Where every emitted token's time is counted (the peak tokens per second), when not recorded one by one. */
    tokenRate?: TokenRate | null;
    /** Price each step's energy with this model; `keepSteps` false keeps only running totals (a long-lived server). */
    power?: { model: PowerModel; keepSteps: boolean } | null;
  }) {
    const { cfg, numBlocks } = opts;
    this.cfg = cfg;
    this.model = opts.model;
    this.noise = opts.noise;
    this.rng = opts.rng;
    this.recordTokens = opts.recordTokens ?? true;
    this.itl = opts.itl ?? null;
    this.tokenRate = opts.tokenRate ?? null;
    this.kv = new KvCache(numBlocks, cfg.block_size, cfg.enable_prefix_caching, opts.sliding ?? null);
    this.logSigmaShift = (opts.noise.sigma * opts.noise.sigma) / 2;
    const power = opts.power ?? null;
    this.energy = power === null ? null : new EnergyTrace(power.model, { keepSteps: power.keepSteps });
    this.activity = power === null ? null : newStepActivity();
  }

  get idle(): boolean {
    return this.busyUntilS === Number.POSITIVE_INFINITY;
  }

  hasWork(): boolean {
    return this.running.length > 0 || this.waiting.size > 0;
  }

  /** vLLM's DP load-balancer score: waiting × 4 + running. */
  get score(): number {
    return this.waiting.size * 4 + this.running.length;
  }

  /** Schedules and applies one step starting at `nowS`; returns its duration in seconds (0 if nothing ran). */
  step(nowS: number): number {
    const cfg = this.cfg;
    const kv = this.kv;
    const running = this.running;
    const reqs = this.schedReqs;
    const toks = this.schedTokens;
    const threshold = cfg.long_prefill_token_threshold;
    reqs.length = 0;
    toks.length = 0;
    this.emitted.length = 0;
    this.finished.length = 0;
    kv.beginStep();
    let budget = cfg.max_num_batched_tokens;
    let preempted = false;
    for (let i = 0; i < running.length && budget > 0; i++) {
      const req = running[i] as SimRequest;
      let n = req.promptTokens + req.numOutput - req.numComputed;
      if (threshold > 0 && n > threshold) n = threshold;
      if (n > budget) n = budget;
      if (n <= 0) continue;
      let self = false;
      while (!kv.grow(req, req.numComputed + n)) {
        const victim = running.pop() as SimRequest;
        kv.free(victim);
        victim.numComputed = 0;
        this.waiting.pushFront(victim);
        this.preemptions++;
        preempted = true;
        if (victim === req) {
          self = true;
          break;
        }
      }
      if (self) break;
      // vLLM caches a request's full blocks when it allocates them (`allocate_slots` → `cache_blocks`,
      // hashes of token ids, before the forward): a request admitted later in this same step hits them.
      kv.commit(req, req.numComputed + n);
      reqs.push(req);
      toks.push(n);
      budget -= n;
    }
    if (!preempted) {
      const chunked = cfg.enable_chunked_prefill;
      while (this.waiting.size > 0 && budget > 0 && running.length < cfg.max_num_seqs) {
        const req = this.waiting.peekFront() as SimRequest;
        const numTokens = req.promptTokens + req.numOutput;
        let scheduled = 0;
        const hit = kv.admit(req, numTokens, (hitTokens) => {
          let n = numTokens - hitTokens;
          if (threshold > 0 && n > threshold) n = threshold;
          if (!chunked && n > budget) return -1;
          scheduled = Math.min(n, budget);
          return scheduled;
        }, req.admitted);
        if (hit < 0) break;
        this.waiting.popFront();
        running.push(req);
        req.numComputed = hit;
        if (!req.admitted) {
          req.admitted = true;
          req.cachedTokens = hit;
          req.scheduledS = nowS;
        }
        kv.commit(req, hit + scheduled);
        reqs.push(req);
        toks.push(scheduled);
        budget -= scheduled;
      }
    }
    const count = reqs.length;
    this.kvStepUsage = kv.numBlocks === 0 ? 0 : kv.stepPeakBlocks / kv.numBlocks;
    if (count === 0) return 0;
    const b = this.batch;
    b.tokens = 0;
    b.requests = count;
    b.sampled = 0;
    b.attnPairs = 0;
    b.kvReadTokens = 0;
    b.windowPairs = 0;
    b.windowKvReadTokens = 0;
    b.decodeOnly = true;
    const w = this.model.windowTokens;
    for (let i = 0; i < count; i++) {
      const req = reqs[i] as SimRequest;
      const n = toks[i] as number;
      const c = req.numComputed;
      b.tokens += n;
      b.attnPairs += n * (c + (n + 1) / 2);
      b.kvReadTokens += c;
      b.windowPairs += n * Math.min(w, c + (n + 1) / 2);
      b.windowKvReadTokens += Math.min(c, w);
      if (c + n === req.promptTokens + req.numOutput) b.sampled++;
      if (n !== 1 || req.numOutput === 0) b.decodeOnly = false;
    }
    const durationS = this.priceS(b, nowS);
    const endS = nowS + durationS;
    this.scheduledTokens += b.tokens;
    let anyFinished = false;
    // Requests that also emitted at the end of the previous step have a gap of exactly this step.
    let sameGap = 0;
    for (let i = 0; i < count; i++) {
      const req = reqs[i] as SimRequest;
      req.numComputed += toks[i] as number; // its blocks were committed when scheduled
      if (req.numComputed === req.promptTokens + req.numOutput) {
        req.numOutput++;
        if (this.itl !== null && req.numOutput > 1) {
          if (req.lastTokenS === nowS) sameGap++;
          else this.itl.add(endS - req.lastTokenS);
        }
        this.emit(req, endS);
        this.emitted.push(req);
        if (req.numOutput >= req.maxTokens) {
          req.finished = true;
          this.finished.push(req);
          anyFinished = true;
        }
      }
    }
    // The gap as a client subtracts it from the two token times (not `durationS`, which differs in the
    // last bits), so the pooled ITLs equal those of the per-token records exactly.
    this.itl?.add(endS - nowS, sameGap);
    if (this.emitted.length > 0) this.tokenRate?.add(endS, this.emitted.length);
    if (anyFinished) this.dropFinished();
    this.steps++;
    return durationS;
  }

  private emit(req: SimRequest, atS: number): void {
    if (this.recordTokens) req.chunkTimes.push(atS);
    if (req.numOutput === 1) req.firstTokenS = atS;
    req.lastTokenS = atS;
  }

  private dropFinished(): void {
    const running = this.running;
    let w = 0;
    for (let i = 0; i < running.length; i++) {
      const req = running[i] as SimRequest;
      if (req.finished) this.kv.free(req);
      else running[w++] = req;
    }
    running.length = w;
  }

  /**
   * Decode fast-forward: while every running request decodes one token a step, nobody waits to be
   * admitted and the KV blocks suffice, consecutive steps differ only in context length, so they are
   * priced back to back and applied at once: the same noise draws, block allocations and token times
   * as that many calls of `step`, without rebuilding the batch each step. Steps run while they start
   * no later than `untilS` (the next event that could change the batch: an arrival, a send, another
   * replica's step end) and stop at the first step that finishes a request. Returns the time the run
   * ends (seconds), or NaN when the conditions do not hold (then the caller takes one `step`).
   */
  decodeRun(nowS: number, untilS: number): number {
    const cfg = this.cfg;
    const running = this.running;
    const kv = this.kv;
    const n = running.length;
    if (n < 2 || n > cfg.max_num_batched_tokens) return Number.NaN;
    if (this.waiting.size > 0 && n < cfg.max_num_seqs) return Number.NaN;
    let maxSteps = Number.POSITIVE_INFINITY;
    let kvRead = 0;
    for (let i = 0; i < n; i++) {
      const r = running[i] as SimRequest;
      if (r.numOutput === 0 || r.promptTokens + r.numOutput - r.numComputed !== 1) return Number.NaN;
      const left = r.maxTokens - r.numOutput;
      if (left < maxSteps) maxSteps = left;
      kvRead += r.numComputed;
    }
    // The most steps whose block growth fits what is free (no preemption inside the run).
    const blocksFor = (k: number): number => {
      let need = 0;
      for (let i = 0; i < n; i++) {
        const r = running[i] as SimRequest;
        need += kv.growthNeed(r, r.numComputed + k);
      }
      return need;
    };
    let k = maxSteps;
    if (blocksFor(k) > kv.freeBlocks) {
      let lo = 0;
      let hi = k;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (blocksFor(mid) <= kv.freeBlocks) lo = mid;
        else hi = mid - 1;
      }
      k = lo;
    }
    if (k < 2) return Number.NaN;
    const b = this.batch;
    b.tokens = n;
    b.requests = n;
    b.sampled = n;
    b.decodeOnly = true;
    const d = this.runDurations;
    d.length = 0;
    let t = nowS;
    const w = this.model.windowTokens;
    while (d.length < k && (d.length === 0 || t <= untilS)) {
      b.kvReadTokens = kvRead + d.length * n;
      b.attnPairs = b.kvReadTokens + n;
      b.windowKvReadTokens = Number.isFinite(w) ? windowedReads(running, d.length, w) : b.kvReadTokens;
      b.windowPairs = b.windowKvReadTokens + n;
      const dur = this.priceS(b, t);
      d.push(dur);
      t += dur;
    }
    const steps = d.length;
    this.emitted.length = 0;
    this.finished.length = 0;
    kv.beginStep();
    let sameGap = 0;
    for (let i = 0; i < n; i++) {
      const r = running[i] as SimRequest;
      kv.grow(r, r.numComputed + steps);
      r.numComputed += steps;
      kv.commit(r, r.numComputed);
      if (this.itl !== null) {
        if (r.lastTokenS === nowS) sameGap++;
        else this.itl.add(nowS + (d[0] as number) - r.lastTokenS);
      }
      if (this.recordTokens) {
        // The same running sum as the pricing loop, so every time equals the step-by-step one.
        let at = nowS;
        for (let j = 0; j < steps; j++) r.chunkTimes.push((at += d[j] as number));
      }
      r.numOutput += steps;
      r.lastTokenS = t;
      this.emitted.push(r);
      if (r.numOutput >= r.maxTokens) {
        r.finished = true;
        this.finished.push(r);
      }
    }
    if (this.itl !== null || this.tokenRate !== null) {
      // Every step's end as the token times above sum them, and each gap as their difference.
      let at = nowS + (d[0] as number);
      this.itl?.add(at - nowS, sameGap);
      this.tokenRate?.add(at, n);
      for (let j = 1; j < steps; j++) {
        const next = at + (d[j] as number);
        this.itl?.add(next - at, n);
        this.tokenRate?.add(next, n);
        at = next;
      }
    }
    this.kvStepUsage = kv.numBlocks === 0 ? 0 : kv.stepPeakBlocks / kv.numBlocks;
    if (this.finished.length > 0) this.dropFinished();
    this.steps += steps;
    this.scheduledTokens += n * steps;
    return t;
  }

  /** Drops a request (client gone): out of the queues, its blocks back to the pool. */
  abort(req: SimRequest): void {
    if (req.finished) return;
    req.finished = true;
    const i = this.running.indexOf(req);
    if (i >= 0) {
      this.running.splice(i, 1);
      this.kv.free(req);
      return;
    }
    const keep: SimRequest[] = [];
    while (this.waiting.size > 0) {
      const w = this.waiting.popFront() as SimRequest;
      if (w !== req) keep.push(w);
    }
    for (const w of keep) this.waiting.pushBack(w);
    this.kv.free(req);
  }

  /** A step starting at `startS`: its duration in seconds (noise and host stalls included), its energy recorded. */
  private priceS(b: StepBatch, startS: number): number {
    const act = this.activity;
    let ms = act === null ? this.model.stepMs(b) : this.model.stepWithActivity(b, act);
    const nz = this.noise;
    let jitter = 1;
    if (nz.sigma > 0) {
      jitter = Math.exp(nz.sigma * this.rng.normal() - this.logSigmaShift);
      ms *= jitter;
    }
    if (nz.stallProbability > 0 && this.rng.next() < nz.stallProbability) {
      ms += nz.stallMinMs + (nz.stallMaxMs - nz.stallMinMs) * this.rng.next();
    }
    const s = ms / 1000;
    // The jitter stretches the kernels with the step; a host stall leaves the GPU waiting (idle).
    if (act !== null) this.energy?.add(startS, startS + s, act.computeS, act.memoryS, Math.min(s, act.gpuS * jitter));
    return s;
  }
}

/** vLLM's DP load balancer: the replica with the lowest score, the lowest index on ties. */
export function pickReplica(replicas: readonly Replica[]): Replica {
  let best = replicas[0] as Replica;
  for (let i = 1; i < replicas.length; i++) {
    const r = replicas[i] as Replica;
    if (r.score < best.score) best = r;
  }
  return best;
}

/** Σ min(c_i + ahead, window) over the running requests: their sliding-window reads `ahead` steps on. */
function windowedReads(running: readonly SimRequest[], ahead: number, window: number): number {
  let sum = 0;
  for (const r of running) sum += Math.min(r.numComputed + ahead, window);
  return sum;
}
