import type { ResolvedServerConfig, SimProfile } from '../domain/index.js';
import type { Rng } from '../util/rng.js';
import type { RequestSpec } from '../workload/sample.js';
import { TimeHeap } from './deque.js';
import { newSimRequest, type SimRequest } from './request.js';
import { pickReplica, Replica, type NoiseModel } from './scheduler.js';
import type { StepModel } from '../physics/step-time.js';
import type { PowerModel } from '../physics/power.js';
import type { WeightedSample } from './weighted.js';
import type { TokenRate } from './token-rate.js';
import type { SlidingGroups } from './kv-cache.js';
import { atLimit, KV_FULL } from '../diagnose/evidence.js';

/**
 * The discrete-event simulation in virtual time: a client (open loop with an optional concurrency
 * cap, or closed loop), the API front end (tokenisation delay, HTTP 400 for over-long requests),
 * vLLM's DP load balancer and one `Replica` per data-parallel rank. Events are taken in time
 * order; a replica's step end is handled before an arrival at the same instant.
 */
export interface DesInput {
  /** Keep every token's time on each request (records for the load-runner metrics); false keeps first and last, with pooled gaps in `itl`. */
  readonly recordTokens?: boolean;
  /** Where a summary run pools its inter-token gaps. */
  readonly itl?: WeightedSample;
  /** Take runs of decode steps at once (`Replica.decodeRun`; default true). The results are the same either way. */
  readonly fastForward?: boolean;
  readonly resolved: ResolvedServerConfig;
  /** The API server's per-request delay (the profile's frontend parameters). */
  readonly frontend: Pick<SimProfile, 'frontend_ms' | 'frontend_us_per_token'>;
  readonly numBlocks: number;
  /** Sliding-window block groups of the KV cache (MemoryBreakdown.slidingGroups). */
  readonly slidingGroups?: SlidingGroups | null;
  readonly stepModel: StepModel;
  readonly specs: readonly RequestSpec[];
  /** Intended send times (open loop), or null for a closed loop at `cap`. */
  readonly arrivals: Float64Array | null;
  readonly cap: number;
  readonly noise: NoiseModel;
  readonly rng: Rng;
  /** The engine dies (run-time OOM, physics/runtime-oom.ts) when this many requests have reached it. */
  readonly crashAtRequest?: number | null;
  /** Price every step's energy with this power model (each replica's `energy`); none without it. */
  readonly power?: PowerModel | null;
  /** Count every token's time per second of the run (`recordTokens: false` keeps no token times to count later). */
  readonly tokenRate?: TokenRate;
  /**
   * Called once for each request when its answer is complete: a refused one at its send, the others at
   * the end of the step that emitted their last token, `position` their place in `specs`.
   */
  readonly onDone?: (req: DesRequest, position: number) => void;
  /**
   * After `onDone`, drop the request's token times (`recordTokens`): a run that streams its records
   * holds the tokens of the requests in flight only.
   */
  readonly releaseTokens?: boolean;
}

export interface DesRequest {
  readonly spec: RequestSpec;
  schedS: number;
  sendS: number;
  rejected: boolean;
  sim: SimRequest | null;
}

/**
 * The engine's state integrated over virtual time (what a /metrics scrape samples, without gaps):
 * seconds with requests waiting, with requests waiting while the running count sat at max_num_seqs ×
 * replicas, with the KV cache ≥ 95% full; and the time integrals of the running and waiting counts and
 * of KV usage (the fullest replica's), for their means. A step's KV usage is its fullest
 * (`Replica.kvStepUsage`: 1 when it preempted), not what is left once it freed its victims.
 */
export interface DesTrace {
  durationS: number;
  waitingS: number;
  cappedS: number;
  kvFullS: number;
  runningIntegral: number;
  waitingIntegral: number;
  kvIntegral: number;
  kvPeak: number;
}

export interface DesOutput {
  readonly requests: DesRequest[];
  readonly replicas: Replica[];
  readonly runningPeak: number;
  readonly waitingPeak: number;
  readonly trace: DesTrace;
  /** Virtual time of the crash, or null when the run finished. */
  readonly crashedAtS: number | null;
  /** Requests were sent at their own times (open loop, capped or not), not by users waiting on answers. */
  readonly openLoop: boolean;
}

/** API-server time before a request reaches the engine (BLIS's α0 + α1·prompt; does not block the engine). */
export function frontendDelayS(f: DesInput['frontend'], promptTokens: number): number {
  return (f.frontend_ms + (f.frontend_us_per_token * promptTokens) / 1000) / 1000;
}

export function runDes(input: DesInput): DesOutput {
  const { resolved, specs, arrivals } = input;
  const replicas: Replica[] = [];
  for (let i = 0; i < resolved.data_parallel_size; i++) {
    replicas.push(
      new Replica({
        cfg: resolved,
        numBlocks: input.numBlocks,
        sliding: input.slidingGroups ?? null,
        model: input.stepModel,
        noise: input.noise,
        rng: input.rng.fork(`replica-${i}`),
        recordTokens: input.recordTokens ?? true,
        itl: input.itl ?? null,
        tokenRate: input.tokenRate ?? null,
        power: input.power === undefined || input.power === null ? null : { model: input.power, keepSteps: true },
      }),
    );
  }
  const requests: DesRequest[] = specs.map((spec) => ({ spec, schedS: 0, sendS: 0, rejected: false, sim: null }));
  const front = new TimeHeap<SimRequest>();
  const owner: DesRequest[] = requests;
  let next = 0;
  let inFlight = 0;
  let nowS = 0;
  let running = 0;
  let waiting = 0;
  let runningPeak = 0;
  let waitingPeak = 0;
  const n = specs.length;
  const maxLen = resolved.max_model_len;
  const crashAt = input.crashAtRequest ?? null;
  let admitted = 0;
  let crashedAtS: number | null = null;
  const trace: DesTrace = { durationS: 0, waitingS: 0, cappedS: 0, kvFullS: 0, runningIntegral: 0, waitingIntegral: 0, kvIntegral: 0, kvPeak: 0 };
  const runningAtLimit = atLimit(resolved.max_num_seqs * resolved.data_parallel_size);
  let kvNow = 0;
  /** The state since the last event holds until `toS`: add it to the integrals. */
  const advance = (toS: number): void => {
    const dt = toS - trace.durationS;
    if (dt <= 0) return;
    trace.durationS = toS;
    trace.runningIntegral += running * dt;
    trace.waitingIntegral += waiting * dt;
    trace.kvIntegral += kvNow * dt;
    if (waiting > 0) {
      trace.waitingS += dt;
      if (running >= runningAtLimit) trace.cappedS += dt;
    }
    if (kvNow >= KV_FULL) trace.kvFullS += dt;
  };

  const onDone = input.onDone ?? null;
  /** Where each request in flight sits in `specs` (kept only for `onDone`). */
  const positionOf = new Map<SimRequest, number>();
  /** The request at `position` has its whole answer. */
  const done = (position: number): void => {
    const req = owner[position] as DesRequest;
    onDone?.(req, position);
    if (input.releaseTokens === true && req.sim !== null) req.sim.chunkTimes.length = 0;
  };

  const sendTime = (): number => (next < n && inFlight < input.cap ? Math.max(nowS, arrivals === null ? nowS : (arrivals[next] as number)) : Number.POSITIVE_INFINITY);
  const startStep = (rep: Replica): void => {
    running -= rep.running.length;
    waiting -= rep.waiting.size;
    // The earliest event that could change this replica's batch bounds a decode fast-forward.
    let untilS = Math.min(front.peekTime(), sendTime());
    for (const r of replicas) if (r !== rep && r.busyUntilS < untilS) untilS = r.busyUntilS;
    let end = input.fastForward === false ? Number.NaN : rep.decodeRun(nowS, untilS);
    if (Number.isNaN(end)) {
      const d = rep.step(nowS);
      end = d > 0 ? nowS + d : Number.POSITIVE_INFINITY;
    }
    running += rep.running.length;
    waiting += rep.waiting.size;
    if (running > runningPeak) runningPeak = running;
    if (waiting > waitingPeak) waitingPeak = waiting;
    rep.busyUntilS = end;
    kvNow = 0;
    for (const r of replicas) if (r.kvStepUsage > kvNow) kvNow = r.kvStepUsage;
    if (kvNow > trace.kvPeak) trace.kvPeak = kvNow;
  };

  for (;;) {
    const tSend = sendTime();
    const tFront = front.peekTime();
    let rep: Replica | null = null;
    for (const r of replicas) if (rep === null || r.busyUntilS < rep.busyUntilS) rep = r;
    const tStep = rep === null ? Number.POSITIVE_INFINITY : rep.busyUntilS;
    if (tStep === Number.POSITIVE_INFINITY && tFront === Number.POSITIVE_INFINITY && tSend === Number.POSITIVE_INFINITY) break;
    if (rep !== null && tStep <= tFront && tStep <= tSend) {
      nowS = tStep;
      advance(nowS);
      inFlight -= rep.finished.length;
      if (onDone !== null) {
        for (const sim of rep.finished) {
          done(positionOf.get(sim) as number);
          positionOf.delete(sim);
        }
      }
      startStep(rep);
    } else if (tFront <= tSend) {
      nowS = tFront;
      advance(nowS);
      if (crashAt !== null && admitted++ === crashAt) {
        crashedAtS = nowS;
        break;
      }
      const sim = front.pop() as SimRequest;
      sim.arrivalS = nowS;
      const target = pickReplica(replicas);
      target.waiting.pushBack(sim);
      waiting++;
      if (waiting > waitingPeak) waitingPeak = waiting;
      if (target.idle) startStep(target);
    } else {
      nowS = tSend;
      const req = owner[next] as DesRequest;
      const spec = req.spec;
      next++;
      req.schedS = arrivals === null ? nowS : (arrivals[next - 1] as number);
      req.sendS = nowS;
      const prompt = spec.prefixTokens + spec.inputTokens;
      if (prompt + spec.outputTokens > maxLen) {
        req.rejected = true; // the OpenAI server answers 400 before the engine sees it
        if (onDone !== null) done(next - 1);
        continue;
      }
      input.tokenRate?.origin(nowS);
      const sim = newSimRequest(spec.index, prompt, spec.outputTokens, spec.prefixGroup, spec.prefixTokens, spec.blocks ?? null);
      req.sim = sim;
      if (onDone !== null) positionOf.set(sim, next - 1);
      inFlight++;
      front.push(nowS + frontendDelayS(input.frontend, prompt), sim);
    }
  }
  return { requests, replicas, runningPeak, waitingPeak, trace, crashedAtS, openLoop: arrivals !== null };
}
