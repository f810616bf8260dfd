import { vllmServeCommand } from '../advise/commands.js';
import type { Catalog } from '../catalog/index.js';
import { deploymentCost, type Prices } from '../cost/prices.js';
import { maxLength, maxRequestTokens, type Arrival, type BenchmarkResult, type Hardware, type ModelSpec, type ServerConfig, type Workload } from '../domain/index.js';
import { assertNever } from '../errors.js';
import { SIMULATOR_LOG_SD } from '../surrogate/prior.js';
import { resolveConfig } from '../physics/resolve.js';
import { startupCheck } from '../physics/startup.js';
import { headroomRate, headroomUsers, missed, promptsFor, promptsForUsers, type Headroom, type Probe } from './headroom.js';
import type { HistoryCorrection } from './history.js';
import type { PlanAnswer, PlanDeployment, PlanObjective, PlanQuestion } from './types.js';

/**
 * The planner (issue 25 §5). For each GPU type: every tensor-parallel size that holds the model
 * (1, 2, 4, 8, within --max-gpus) gets its replica's headroom, the highest traffic it serves within the
 * SLOs (headroom.ts); the traffic needs ⌈traffic / headroom⌉ replicas; one replica is then simulated at
 * its share of the traffic for the latencies, power and throughput the answer reports, and priced.
 * Each GPU type's best size under the objective is its deployment; the deployments are ranked by the
 * objective, infeasible GPU types last with their reason. Replicas are independent servers behind a
 * load balancer (the traffic split evenly); within a replica the knobs are vLLM's defaults but for the
 * parallel layout and the context the workload needs (`contextFor`). Pure: the simulation, the prices and the history's correction are passed in.
 */
export interface SimRun {
  (input: { config: ServerConfig; gpu: string; gpus: number; model: ModelSpec; workload: Workload; seed: number }): Probe;
}

export interface PlanDeps {
  readonly catalog: Catalog;
  readonly simulate: SimRun;
  readonly prices: Prices;
  /** Runs of this model on a GPU in the history, as a correction of the simulator; null: none. */
  readonly correction: (gpu: string) => HistoryCorrection | null;
  /** A GPU's power at idle as a share of its TDP, the simulator's power model's (null: no power model). */
  readonly idleTdpFrac?: number | null;
  /** Called after each GPU type (for a progress line). */
  readonly onGpu?: (gpu: string, index: number, of: number) => void;
}

const TP_SIZES = [1, 2, 4, 8] as const;
/** Closed-loop users a replica is tried with at most. */
const MAX_USERS_PER_REPLICA = 2048;

interface Candidate extends PlanDeployment {
  readonly rank: readonly number[];
}

function rule(objective: PlanObjective): string {
  switch (objective) {
    case 'usd_per_mtok':
      return 'cheapest per million output tokens at the target traffic (fewer GPUs break ties); every deployment meets the SLOs as predicted';
    case 'tokens_per_joule':
      return 'fewest joules per output token at the target traffic (fewer GPUs break ties); every deployment meets the SLOs as predicted';
    case 'gpus':
      return 'fewest GPUs (then the lower hourly price); every deployment meets the SLOs as predicted';
    default:
      return assertNever(objective, 'objective');
  }
}

/**
 * The values ranked, compared in order (lower is better; `compareScores`); Infinity where a figure is
 * unknown. A list, not one number: `gpus` once ranked GPUs × 10⁶ + $/h, so a GPU type without a price
 * (Infinity) fell behind every priced one whatever its count: 2 MI300X listed after 4 H100-SXM under
 * "fewest GPUs". An unknown figure now only loses the comparison it is part of.
 */
function score(d: PlanDeployment, objective: PlanObjective): readonly number[] {
  const or = (x: number | null): number => x ?? Number.POSITIVE_INFINITY;
  switch (objective) {
    case 'usd_per_mtok':
      return [or(d.usd_per_million_output_tokens), or(d.gpus)];
    case 'tokens_per_joule':
      return [or(d.energy_per_output_token_j), or(d.gpus)];
    case 'gpus':
      return [or(d.gpus), or(d.usd_per_hour)];
    default:
      return assertNever(objective, 'objective');
  }
}

/** Lexicographic order of two scores; equal Infinities tie (their difference, NaN, would not sort). */
function compareScores(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

const infeasible = (gpu: string, reason: string): PlanDeployment => ({
  gpu,
  gpus: null,
  feasible: false,
  reason,
  replicas: null,
  tensor_parallel_size: null,
  config: null,
  vllm_command: null,
  p99_ttft_ms: null,
  p99_itl_ms: null,
  max_rate_rps: null,
  max_users: null,
  headroom_lower_bound: false,
  output_throughput_tok_s: null,
  avg_power_w: null,
  usd_per_hour: null,
  usd_per_million_output_tokens: null,
  energy_per_output_token_j: null,
  source: 'estimated',
  uncertainty_pct: null,
  price_source: null,
  figures_window: null,
});

/** One share of the traffic: its arrivals and requests, and how many replicas take it. */
interface Share {
  readonly arrival: Arrival;
  readonly prompts: number;
  readonly replicas: number;
}

/**
 * The run at a replica's share of the traffic. ML.ENERGY's steady state, the simulator's energy window,
 * leaves out the first and the last `k` requests (k: what the replica runs at once, max_num_seqs or the
 * users when fewer), so the run gets 2k more requests than a probe's: its window then spans about a
 * probe's worth. With fewer there is no steady state and the window is the whole load, whose ramp and
 * drain (half-empty batches) lower the power, raise the joules per token and dilute the throughput (600
 * requests at 25 req/s on an H100, whose 1,024 slots never fill: 4,288 output tok/s and 0.132 J/token
 * against 4,901 and 0.119 in the steady state of a longer run). The price: a low rate simulates longer.
 * An open loop splits its rate evenly; N users over R replicas put ⌈N/R⌉ users on N mod R replicas and
 * ⌊N/R⌋ on the others (heaviest share first). Once every replica was simulated with ⌈N/R⌉, so 3 users
 * on 2 replicas were priced as 4: a third more output tokens than the traffic asks for, and $ per
 * million tokens a quarter low.
 */
function perReplicaArrival(q: PlanQuestion, replicas: number, maxRunning: number): Share[] {
  const t = q.traffic;
  switch (t.kind) {
    case 'rate': {
      const rate = t.rate_rps / replicas;
      return [{ arrival: { kind: 'poisson', rate_rps: rate }, prompts: promptsFor(rate) + 2 * maxRunning, replicas }];
    }
    case 'users': {
      const closed = (users: number, n: number): Share => ({ arrival: { kind: 'closed', concurrency: users }, prompts: promptsForUsers(users) + closedExtraPrompts(users, maxRunning), replicas: n });
      const heavy = t.users % replicas;
      const light = Math.floor(t.users / replicas);
      if (heavy === 0) return [closed(light, replicas)];
      // More replicas than users leaves some without one: they idle, and are not simulated.
      return light === 0 ? [closed(1, heavy)] : [closed(light + 1, heavy), closed(light, replicas - heavy)];
    }
    default:
      return assertNever(t, 'traffic');
  }
}

/** The requests a closed-loop run of `users` gets past `promptsForUsers`: the steady state's 2k (perReplicaArrival). */
const closedExtraPrompts = (users: number, maxRunning: number): number => 2 * Math.min(users, maxRunning);

/** A result with every latency figure scaled by `factor` (the history's correction of the simulator). */
function scaledLatencies(r: BenchmarkResult, factor: number): BenchmarkResult {
  if (factor === 1) return r;
  const out: Record<string, unknown> = { ...r };
  for (const [k, v] of Object.entries(r)) if (/_(ttft|tpot|itl|e2el)_ms$/.test(k) && typeof v === 'number') out[k] = v * factor;
  return out as BenchmarkResult;
}

/**
 * The context a replica is started with: what the workload's longest request needs (prompt, shared
 * prefix and answer; a conversation's last turn, which carries every earlier message and answer; a
 * trace's longest request), rounded up to 1,024 and at least 4,096, within the model's own. vLLM's
 * default is the model's whole context (128K for Llama 3.1), whose one-request KV reservation alone
 * keeps a 70B model off two A100s that serve a chat workload well; a deployment sized for its traffic
 * sets it. One turn's length once set it for a multi-turn workload, whose later turns vLLM then
 * refused: failed requests the plan read as a size that misses the SLOs.
 */
export function contextFor(w: Workload, model: ModelSpec): number {
  const need = Math.max(maxRequestTokens(w), maxLength(w.input_len) + (w.shared_prefix?.length ?? 0) + maxLength(w.output_len));
  return Math.min(model.native_context, Math.max(4096, Math.ceil(need / 1024) * 1024));
}

function sizeCandidate(q: PlanQuestion, deps: PlanDeps, hw: Hardware, model: ModelSpec, tp: number): Candidate | { why: string } {
  const config: ServerConfig = { tensor_parallel_size: tp, max_model_len: contextFor(q.workload, model) };
  const start = startupCheck(config, { hardware: hw, gpuCount: tp, model, vllmVersion: q.vllmVersion });
  if (!start.ok) return { why: `TP ${tp}: ${start.failure.message}` };
  const correction = deps.correction(hw.id);
  const speed = correction?.speedFactor ?? 1;
  const latency = correction?.latencyFactor ?? 1;
  // The simulator's run, as the history says this GPU really behaves: latencies scaled by what the
  // user's runs measured against it (the headroom search then judges the corrected figures).
  const probe = (arrival: Arrival, prompts: number): Probe => {
    const p = deps.simulate({ config, gpu: hw.id, gpus: tp, model, workload: { ...q.workload, arrival, num_prompts: prompts, slo: q.slo }, seed: q.seed });
    return p.result === null ? p : { ...p, result: scaledLatencies(p.result, latency) };
  };
  const resolved = resolveConfig(config, hw, model);
  const maxRunning = resolved.max_num_seqs * resolved.data_parallel_size;
  // Each probe runs as long as the run at the target traffic (perReplicaArrival): a shorter one never
  // fills the batch (a rate) or never holds its users at once (a closed loop of more users than
  // requests), and passes loads the replica cannot keep.
  const head: Headroom = q.traffic.kind === 'rate' ? headroomRate(probe, q.slo, 2 * maxRunning) : headroomUsers(probe, q.slo, MAX_USERS_PER_REPLICA, (users) => closedExtraPrompts(users, maxRunning));
  if (!head.ok) return { why: `TP ${tp}: ${head.reason}` };
  // A server that decodes slower than simulated saturates sooner: its headroom shrinks with its speed
  // (and its run at the target traffic is judged at the load that slowness puts on it, judgedRun).
  // A faster one is not credited more: the run at the target traffic below is the simulator's, which
  // checks no more than the simulated speed. The answer's headroom is this same figure, the one the
  // replicas were counted from: it was once head × speed, so a server twice as fast as simulated sized
  // 3 replicas for 5 users and printed a headroom of 12 users, which 2 replicas would have covered.
  // Users are whole: a replica holds ⌊headroom⌋ of them, and one that holds none at the measured speed
  // is no size for this traffic. A fractional headroom once counted the replicas (1.5 users a replica:
  // 3 users on 2, the heavier one past its headroom), and one under a user left replicas idle (0.8 a
  // replica: 3 users on 4 replicas, each user still alone on a server too slow for the SLOs).
  const corrected = head.value * Math.min(1, speed);
  const perReplica = q.traffic.kind === 'users' ? Math.floor(corrected) : corrected;
  if (!(perReplica > 0)) return { why: `TP ${tp}: serves ${head.value} user${head.value === 1 ? '' : 's'} within the SLOs as simulated, under one at the speed your runs measured (×${speed.toFixed(2)})` };
  const need = q.traffic.kind === 'rate' ? q.traffic.rate_rps : q.traffic.users;
  // The headroom is the bisection's last pass; a fresh simulation at a share just below it can still
  // miss (another sample of requests), so one more replica is tried before the size is given up.
  for (let replicas = Math.max(1, Math.ceil(need / perReplica)), tries = 0; tries < 3; replicas++, tries++) {
    const gpus = replicas * tp;
    if (gpus > q.maxGpus) return { why: `TP ${tp}: needs ${replicas} replicas (${gpus} GPUs), more than --max-gpus ${q.maxGpus}` };
    const shares = perReplicaArrival(q, replicas, maxRunning);
    const runs: ShareRun[] = [];
    for (const share of shares) {
      const run = probe(share.arrival, share.prompts);
      if (run.result === null) return { why: `TP ${tp}: ${run.failure ?? 'crashed at the target traffic'}` };
      const judged = judgedRun(share, speed, maxRunning, probe, run.result);
      if (judged.result === null) return { why: `TP ${tp}: ${judged.failure ?? 'crashed at the target traffic'}` };
      if (missed(q.slo, judged.result).length > 0) break;
      runs.push({ result: run.result, latencies: judged.result, replicas: share.replicas });
    }
    // Every share must meet the SLOs, else one more replica lightens them.
    if (runs.length < shares.length) continue;
    return describe(q, deps, { hw, model, config, tp, replicas, headroom: perReplica, headroomAtCap: head.atCap, runs, correction });
  }
  return { why: `TP ${tp}: misses the SLOs at the target traffic however it is split` };
}

/**
 * The run a share's SLOs are checked on and its p99s read from. An open loop on a server slower than
 * simulated (speed < 1) is the simulator at rate ÷ speed: the rate its slower decoding loads it like,
 * the same mapping its headroom was shrunk by (a replica passes r req/s when the simulator passes
 * r ÷ speed, so head × speed). The run at the share's own rate once gave them: a lighter load than the
 * corrected server carries, whose p99s (and SLO check) were below what the replicas were sized against.
 * A closed loop keeps its users in flight whatever the speed (they wait longer, and send less: the
 * throughput in `describe`), and a faster server is not credited a lighter load (sizeCandidate).
 */
function judgedRun(share: Share, speed: number, maxRunning: number, probe: (arrival: Arrival, prompts: number) => Probe, atShare: BenchmarkResult): Probe {
  const a = share.arrival;
  if (!(speed < 1) || a.kind !== 'poisson' || a.rate_rps === undefined) return { result: atShare, failure: null };
  const rate = a.rate_rps / speed;
  return probe({ kind: 'poisson', rate_rps: rate }, promptsFor(rate) + 2 * maxRunning);
}

/** One sized deployment of a GPU type: its replica's layout and headroom, and the run at its share of the traffic. */
interface Sized {
  readonly hw: Hardware;
  readonly model: ModelSpec;
  readonly config: ServerConfig;
  readonly tp: number;
  readonly replicas: number;
  /** Per replica, corrected by the history (a slower server's shrinks, a faster one's stays the simulator's): the one the replicas were counted from. */
  readonly headroom: number;
  /** The headroom search passed every probe up to its cap: `headroom` is a lower bound. */
  readonly headroomAtCap: boolean;
  /** The runs at the replicas' shares of the traffic, heaviest first (one for an even split). */
  readonly runs: readonly ShareRun[];
  readonly correction: HistoryCorrection | null;
}

interface ShareRun {
  /** The run at the share's traffic: the throughput, power and J/token. */
  readonly result: BenchmarkResult;
  /** The run its SLOs were checked on, the p99s printed (`judgedRun`; `result` but for a slower server's open loop). */
  readonly latencies: BenchmarkResult;
  /** How many replicas take this share. */
  readonly replicas: number;
}

/**
 * One replica's output throughput and joules per token over one window: the simulator's energy window
 * (its steady state, or the whole load when the run never reached one), where the throughput is the
 * tokens generated in it over its length, which is its average power over its joules per token. Without
 * a power model there is no window but the run: its throughput over the whole run, and no energy.
 */
function windowFigures(r: BenchmarkResult): { outputTokS: number; jPerTok: number | null; window: PlanDeployment['figures_window'] } {
  const e = r.energy;
  if (e !== null && e !== undefined && e.window !== null && e.avg_power_w !== null && e.energy_per_output_token_j !== null && e.energy_per_output_token_j > 0) {
    return { outputTokS: e.avg_power_w / e.energy_per_output_token_j, jPerTok: e.energy_per_output_token_j, window: { rule: e.window.rule, duration_s: e.window.end_s - e.window.start_s } };
  }
  return { outputTokS: r.output_throughput, jPerTok: null, window: { rule: 'run', duration_s: r.duration } };
}

/** The deployment's GPUs at idle, W (the simulator's power model's), or null without one. */
function idleW(deps: PlanDeps, hw: Hardware, gpus: number): number | null {
  return deps.idleTdpFrac === undefined || deps.idleTdpFrac === null ? null : deps.idleTdpFrac * hw.tdp_w * gpus;
}

/**
 * Joules per output token of a server `speed` times as fast as simulated, at the same output tok/s. It
 * is busy longer (or shorter) for each token at about the same power: the energy above idle scales by
 * 1/speed, while the idle draw is the GPUs' whatever their speed, and the whole never passes their TDP.
 * Scaling the idle draw too once put a faster server's 8B replica at 1 req/s below its GPU's idle power
 * (and a slower one's power past its TDP).
 */
export function correctedJPerTok(simPowerW: number, outputTokS: number, idle: number | null, tdpW: number, speed: number): number {
  if (speed === 1 || !(outputTokS > 0)) return simPowerW / outputTokS;
  if (idle === null) return simPowerW / speed / outputTokS;
  const powerW = Math.min(Math.max(tdpW, simPowerW), idle + Math.max(0, simPowerW - idle) / speed);
  return powerW / outputTokS;
}

/**
 * How many times the simulated output tok/s a closed-loop share emits on the corrected server. Each
 * user sends its next request when the last ends (no think time): its cycle is the request's latency,
 * TTFT × latencyFactor then the decode at 1/speed the simulated time, and the share's tokens a second
 * go as 1/cycle. `r`'s latencies are already × latencyFactor (the probe's), so the simulator's are
 * theirs ÷ it. An open loop emits what its traffic asks for whatever the speed: 1. Once every
 * deployment emitted the simulated tok/s: N users on a server twice as fast printed the simulator's
 * tok/s and $ per M tokens beside half its power, and on a slower one a $ per M tokens too low.
 */
export function closedLoopTokSRatio(r: BenchmarkResult, speed: number, latencyFactor: number): number {
  const ttftMs = r.mean_ttft_ms / latencyFactor;
  const e2elMs = r.mean_e2el_ms / latencyFactor;
  if (!(e2elMs > 0) || !Number.isFinite(e2elMs) || !(ttftMs >= 0) || !(speed > 0)) return 1;
  const decodeMs = Math.max(0, e2elMs - ttftMs);
  return e2elMs / (ttftMs * latencyFactor + decodeMs / speed);
}

function describe(q: PlanQuestion, deps: PlanDeps, sized: Sized): Candidate {
  const { hw, model, config, tp, replicas, headroom, headroomAtCap, runs, correction } = sized;
  const gpus = replicas * tp;
  const speed = correction?.speedFactor ?? 1;
  const latency = correction?.latencyFactor ?? 1;
  const closed = q.traffic.kind === 'users';
  const shares = runs.map((s) => ({ w: windowFigures(s.result), n: s.replicas, ratio: closed ? closedLoopTokSRatio(s.result, speed, latency) : 1 }));
  // The heaviest share's run gives the p99s (the slowest replica's) and names the window.
  const r = (runs[0] as ShareRun).latencies;
  const w = (shares[0] as (typeof shares)[number]).w;
  // The simulated output tok/s; at the target traffic an open loop emits what the traffic asks for,
  // whatever its speed, while closed-loop users send as fast as the corrected server answers them.
  const simTokS = shares.reduce((a, s) => a + s.w.outputTokS * s.n, 0);
  const outputTokS = shares.reduce((a, s) => a + s.w.outputTokS * s.n * s.ratio, 0);
  // One ratio for the whole deployment's energy above idle: the shares' differ by a user's worth of load at most.
  const tokSRatio = simTokS > 0 ? outputTokS / simTokS : 1;
  const cost = deploymentCost(deps.prices, hw, gpus, outputTokS);
  // Replicas no user reaches (more replicas than users) idle at their GPUs' idle power.
  const idleReplicas = replicas - shares.reduce((a, s) => a + s.n, 0);
  const simPowerW = shares.every((s) => s.w.jPerTok !== null) ? shares.reduce((a, s) => a + (s.w.jPerTok as number) * s.w.outputTokS * s.n, 0) + (idleW(deps, hw, idleReplicas * tp) ?? 0) : null;
  // Closed-loop users emitting tokSRatio × the simulated tokens, each at 1/speed its simulated energy
  // above idle, draw tokSRatio ÷ speed the simulated energy above idle a second: what correctedJPerTok
  // gives a server speed ÷ tokSRatio as fast at the corrected tok/s (an open loop: speed, the same tok/s).
  const jPerTok = simPowerW === null ? null : correctedJPerTok(simPowerW, outputTokS, idleW(deps, hw, gpus), hw.tdp_w * gpus, speed / tokSRatio);
  const sd = correction?.logSd ?? SIMULATOR_LOG_SD.output_throughput_per_gpu;
  const d: PlanDeployment = {
    gpu: hw.id,
    gpus,
    feasible: true,
    reason: null,
    replicas,
    tensor_parallel_size: tp,
    config,
    vllm_command: vllmServeCommand(model, config),
    p99_ttft_ms: r.p99_ttft_ms,
    p99_itl_ms: r.p99_itl_ms,
    max_rate_rps: q.traffic.kind === 'rate' ? headroom * replicas : null,
    max_users: q.traffic.kind === 'users' ? Math.floor(headroom * replicas) : null,
    headroom_lower_bound: headroomAtCap,
    output_throughput_tok_s: outputTokS,
    avg_power_w: jPerTok === null ? null : jPerTok * outputTokS,
    usd_per_hour: cost?.usd_per_hour ?? null,
    usd_per_million_output_tokens: cost?.usd_per_million_output_tokens ?? null,
    energy_per_output_token_j: jPerTok,
    source: correction === null ? 'estimated' : 'measured',
    uncertainty_pct: (Math.exp(2 * sd) - 1) * 100,
    price_source: cost?.price_source ?? null,
    figures_window: w.window,
  };
  return { ...d, rank: score(d, q.objective) };
}

export function plan(q: PlanQuestion, deps: PlanDeps): PlanAnswer {
  const model = deps.catalog.model(q.model);
  const out: PlanDeployment[] = [];
  q.gpus.forEach((gpuId, i) => {
    const hw = deps.catalog.gpu(gpuId);
    const reasons: string[] = [];
    const sizes: Candidate[] = [];
    for (const tp of TP_SIZES) {
      if (tp > q.maxGpus) break;
      const c = sizeCandidate(q, deps, hw, model, tp);
      if ('why' in c) reasons.push(c.why);
      else sizes.push(c);
    }
    const best = sizes.sort((a, b) => compareScores(a.rank, b.rank))[0];
    if (best === undefined) out.push(infeasible(hw.id, reasons.join('; ')));
    else {
      const { rank: _rank, ...d } = best;
      out.push(d);
    }
    deps.onGpu?.(hw.id, i, q.gpus.length);
  });
  const ranked = out.map((d) => ({ d, s: d.feasible ? score(d, q.objective) : [Number.POSITIVE_INFINITY] })).sort((a, b) => compareScores(a.s, b.s) || Number(b.d.feasible) - Number(a.d.feasible));
  return { model: model.hf_name, traffic: q.traffic, slo: q.slo, objective: q.objective, rule: rule(q.objective), vllm_version: q.vllmVersion ?? null, feasible: out.some((d) => d.feasible), deployments: ranked.map((x) => x.d) };
}
