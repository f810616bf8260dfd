import type { Hardware, ModelSpec, PowerProfile, ResolvedServerConfig, SimProfile } from '../domain/index.js';
import type { Rng } from '../util/rng.js';
import type { PromptBlocks } from '../workload/sample.js';
import type { MemoryBreakdown } from '../physics/memory.js';
import { newSimRequest, type SimRequest } from './request.js';
import { pickReplica, Replica, type NoiseModel } from './scheduler.js';
import { makeStepModel } from '../physics/step-time.js';
import { idleGpus, makePowerModel } from '../physics/power.js';
import type { EnergyTrace } from './energy.js';
import { ServeEnergy } from './serve-energy.js';
import { buckets125, ITERATION_TOKEN_BUCKETS, ITL_BUCKETS, PromHistogram, REQUEST_LATENCY_BUCKETS, TTFT_BUCKETS } from './histogram.js';

/** What a caller hears about one request as the engine runs it. */
export interface RequestListener {
  /** One more output token (0-based index), `finished` on the last one. */
  onToken(index: number, finished: boolean): void;
}

export interface EngineCounters {
  promptTokens: number;
  generationTokens: number;
  requestsFinished: number;
  /** Seconds of real time, as vLLM measures them: submit → first token; and its request phases. */
  readonly ttftS: PromHistogram;
  readonly queueS: PromHistogram;
  readonly prefillS: PromHistogram;
  readonly decodeS: PromHistogram;
  readonly inferenceS: PromHistogram;
  /** Tokens scheduled per engine step. */
  readonly stepTokens: PromHistogram;
  /** Seconds of real time from submit to the last token, and between a request's tokens. */
  readonly e2eS: PromHistogram;
  readonly itlS: PromHistogram;
  /** A finished request's prompt and generated tokens. */
  readonly promptTokensPerRequest: PromHistogram;
  readonly generationTokensPerRequest: PromHistogram;
}

/**
 * The same replicas and scheduler as the DES, driven by the wall clock: each step's virtual
 * duration is waited out `speed`× faster with a timer, then its tokens are delivered. Time and
 * timers come in through `clock`, so tests may drive it by hand.
 */
export interface Clock {
  nowMs(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface RealtimeOptions {
  readonly resolved: ResolvedServerConfig;
  readonly memory: MemoryBreakdown;
  readonly hw: Hardware;
  readonly model: ModelSpec;
  readonly profile: SimProfile;
  readonly speed: number;
  readonly noise: NoiseModel;
  readonly rng: Rng;
  readonly clock: Clock;
  /** The GPU power model (null: no energy figures). */
  readonly power?: PowerProfile | null;
  /** GPUs of the deployment (default: the replicas'); those no replica uses idle at idle power. */
  readonly gpuCount?: number;
}

export class RealtimeEngine {
  readonly replicas: Replica[] = [];
  readonly counters: EngineCounters;
  private readonly listeners = new Map<number, { listener: RequestListener; replica: Replica; startMs: number; lastMs: number; sim: SimRequest }>();
  private readonly timers = new Set<unknown>();
  private nextIdx = 0;
  private closed = false;
  private readonly t0Ms: number;

  readonly resolved: ResolvedServerConfig;
  readonly memory: MemoryBreakdown;
  /** The GPUs' power and energy (null without a power model). */
  readonly energy: ServeEnergy | null;
  private readonly opts: RealtimeOptions;

  constructor(opts: RealtimeOptions) {
    const { resolved, memory, hw, model } = opts;
    this.resolved = resolved;
    this.memory = memory;
    this.opts = opts;
    const tokenBuckets = buckets125(resolved.max_model_len);
    this.counters = {
      promptTokens: 0,
      generationTokens: 0,
      requestsFinished: 0,
      ttftS: new PromHistogram(TTFT_BUCKETS),
      queueS: new PromHistogram(REQUEST_LATENCY_BUCKETS),
      prefillS: new PromHistogram(REQUEST_LATENCY_BUCKETS),
      decodeS: new PromHistogram(REQUEST_LATENCY_BUCKETS),
      inferenceS: new PromHistogram(REQUEST_LATENCY_BUCKETS),
      stepTokens: new PromHistogram(ITERATION_TOKEN_BUCKETS),
      e2eS: new PromHistogram(REQUEST_LATENCY_BUCKETS),
      itlS: new PromHistogram(ITL_BUCKETS),
      promptTokensPerRequest: new PromHistogram(tokenBuckets),
      generationTokensPerRequest: new PromHistogram(tokenBuckets),
    };
    const stepModel = makeStepModel(resolved, hw, model, opts.profile);
    const powerModel = opts.power === undefined || opts.power === null ? null : makePowerModel(hw, opts.power, resolved.tensor_parallel_size);
    for (let i = 0; i < resolved.data_parallel_size; i++) {
      // A server keeps no per-token history (the client times its own tokens) and only running energy totals.
      this.replicas.push(
        new Replica({
          cfg: resolved,
          numBlocks: memory.numBlocks,
          sliding: memory.slidingGroups,
          model: stepModel,
          noise: opts.noise,
          rng: opts.rng.fork(`replica-${i}`),
          recordTokens: false,
          power: powerModel === null ? null : { model: powerModel, keepSteps: false },
        }),
      );
    }
    this.energy = powerModel === null ? null : new ServeEnergy(this.replicas.map((r) => r.energy as EnergyTrace), idleGpus(opts.gpuCount ?? 0, resolved));
    this.t0Ms = opts.clock.nowMs();
  }

  /** Virtual seconds since start. */
  nowS(): number {
    return ((this.opts.clock.nowMs() - this.t0Ms) / 1000) * this.opts.speed;
  }

  /** Queue a request (its prompt's block ids key the prefix cache, null: nothing shared); returns a handle for `abort`. */
  submit(promptTokens: number, maxTokens: number, blocks: PromptBlocks | null, listener: RequestListener): number {
    const idx = this.nextIdx++;
    const sim = newSimRequest(idx, promptTokens, maxTokens, null, 0, blocks);
    sim.arrivalS = this.nowS();
    this.energy?.onRequest(sim.arrivalS);
    const replica = pickReplica(this.replicas);
    replica.waiting.pushBack(sim);
    const startMs = this.opts.clock.nowMs();
    this.listeners.set(idx, { listener, replica, startMs, lastMs: startMs, sim });
    this.counters.promptTokens += promptTokens;
    if (replica.idle) this.runStep(replica);
    return idx;
  }

  abort(handle: number): void {
    const entry = this.listeners.get(handle);
    if (entry === undefined) return;
    this.listeners.delete(handle);
    entry.replica.abort(entry.sim);
  }

  get running(): number {
    return this.replicas.reduce((s, r) => s + r.running.length, 0);
  }

  get waiting(): number {
    return this.replicas.reduce((s, r) => s + r.waiting.size, 0);
  }

  get preemptions(): number {
    return this.replicas.reduce((s, r) => s + r.preemptions, 0);
  }

  get kvUsage(): number {
    return this.replicas.reduce((s, r) => Math.max(s, r.kv.usage), 0);
  }

  get prefixQueries(): number {
    return this.replicas.reduce((s, r) => s + r.kv.queriedTokens, 0);
  }

  get prefixHits(): number {
    return this.replicas.reduce((s, r) => s + r.kv.hitTokens, 0);
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) this.opts.clock.clearTimeout(t);
    this.timers.clear();
  }

  private runStep(rep: Replica): void {
    if (this.closed) return;
    const tokensBefore = rep.scheduledTokens;
    const d = rep.step(this.nowS());
    if (d > 0) this.counters.stepTokens.observe(rep.scheduledTokens - tokensBefore);
    if (d <= 0) {
      rep.busyUntilS = Number.POSITIVE_INFINITY;
      return;
    }
    rep.busyUntilS = this.nowS() + d;
    const handle = this.opts.clock.setTimeout(() => {
      this.timers.delete(handle);
      this.deliver(rep);
      this.runStep(rep);
    }, (d * 1000) / this.opts.speed);
    this.timers.add(handle);
  }

  private deliver(rep: Replica): void {
    const nowMs = this.opts.clock.nowMs();
    // The step's tokens are out at its end, whatever the timer's lateness: the energy up to it.
    if (rep.busyUntilS !== Number.POSITIVE_INFINITY) this.energy?.onTokens(rep.busyUntilS, rep.emitted.length);
    for (const sim of rep.emitted) {
      const entry = this.listeners.get(sim.idx);
      if (entry === undefined) continue;
      const c = this.counters;
      c.generationTokens++;
      if (sim.numOutput === 1) c.ttftS.observe((nowMs - entry.startMs) / 1000);
      else c.itlS.observe((nowMs - entry.lastMs) / 1000);
      entry.lastMs = nowMs;
      const finished = sim.finished;
      if (finished) {
        this.listeners.delete(sim.idx);
        c.requestsFinished++;
        c.e2eS.observe((nowMs - entry.startMs) / 1000);
        c.promptTokensPerRequest.observe(sim.promptTokens);
        c.generationTokensPerRequest.observe(sim.numOutput);
        // vLLM's phases, from the engine's virtual times to real seconds.
        const real = (virtualS: number): number => Math.max(0, virtualS) / this.opts.speed;
        c.queueS.observe(real(sim.scheduledS - sim.arrivalS));
        c.prefillS.observe(real(sim.firstTokenS - sim.scheduledS));
        c.decodeS.observe(real(sim.lastTokenS - sim.firstTokenS));
        c.inferenceS.observe(real(sim.lastTokenS - sim.scheduledS));
      }
      entry.listener.onToken(sim.numOutput - 1, finished);
    }
  }
}
