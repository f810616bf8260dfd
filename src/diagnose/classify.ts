import type { BenchmarkResult, Bottleneck, ClientEvidence, Diagnosis, EvidenceItem, ModelSpec, ServerConfig, RunEvidence, ServerEvidence, Slo, SloKey } from '../domain/index.js';
import { BOTTLENECK_TEXT, checkSlo, sloField } from '../domain/index.js';
import { adviseKnobs } from './advice.js';
import { engineHints } from './engines.js';
import { atLimit, evidenceFromServerMetrics, oneTokenPromptsPerStep } from './evidence.js';
import { boundName, evidencePhrase, saturationText } from './text.js';

/**
 * The bottleneck of one run, from the evidence gathered while it ran (pure). The order of the tests
 * is the order in which one limit hides another:
 *
 * 1. **client**: the load generator sent over 5% of requests more than 100 ms late, or its event loop
 *    lagged (p99 > 50 ms) enough to account for a miss (or for a saturation with none missed); nothing
 *    the server did can be read from such a run.
 * 2. **kv_cache**: the engine preempted requests, or its KV cache was ≥ 95% full for a quarter of the
 *    run: requests are recomputed or held back for blocks, which inflates TTFT and ITL alike.
 * 3. For a missed TTFT (or E2EL whose time went to the first token) or a saturated run: vLLM's TTFT is
 *    queue time + prefill time. When queueing dominates and the running count sat at its limit
 *    (max_num_seqs × replicas, or the running peak when the limit is unknown) for at least half of the
 *    time requests waited, **admission**; when requests waited below that limit with room in the
 *    cache, the token budget (max_num_batched_tokens) is what admits them, and when prefill time
 *    dominates, prompts take long to prefill: both **prefill**. Requests that answer one token finish
 *    in the step that prefills them, unseen by the running gauge: the prompts a step holds are their
 *    batch, a cap when it is about max_num_seqs (or, unknown, when the steps are not full of tokens).
 * 4. A missed ITL or TPOT (or E2EL whose time went to decoding): **decode**.
 * 5. **none**: the SLOs held and the server kept up (no standing queue for half the run).
 *
 * When two limits act (a TTFT and an ITL miss), the one whose metric is further over its limit is
 * the bottleneck and the other is `also`.
 */
export interface DiagnoseInput {
  readonly result: BenchmarkResult;
  readonly evidence: RunEvidence | null;
  /** Knob values known to be in force (resolved or given); any may be missing. */
  readonly known: ServerConfig;
  readonly slo: Slo | null;
  readonly source: Diagnosis['source'];
  /**
   * The served checkpoint, where the caller knows it: a pre-quantized one (an FP8 repo, AWQ, GPTQ) is
   * not advised `--quantization` (advice.ts). Absent or null: the advice says whom it is for.
   */
  readonly model?: Pick<ModelSpec, 'native_quantization'> | null | undefined;
}

export const THRESHOLDS = {
  /** Client: p99 event-loop lag, and the share of sends over 100 ms late. */
  clientLagP99Ms: 50,
  clientLateShare: 0.05,
  /** KV: the share of the run at ≥ 95% usage that makes it the limit (any preemption does). */
  kvFullShare: 0.25,
  /** A standing queue: requests waiting for at least this share of the run. */
  queueShare: 0.1,
  /** Saturated: a queue for at least half the run. */
  saturatedShare: 0.5,
  /** Capped: at the running limit for at least this share of the waiting time. */
  cappedOfWaiting: 0.5,
  /** A client queue (open loop under a cap) longer than this also means the server did not keep up. */
  clientQueueMs: 100,
  /** A prefill spanning this many engine steps (timed: a step's time is a decode's) is sliced by the token budget. */
  slicedPrefillSteps: 4,
  /**
   * The same, counted in tokens (requests that answer one token: no decode to time a step by). A count,
   * not a timing, so no mixed step inflates it: a prompt that needs two steps is sliced.
   */
  slicedPrefillStepsByTokens: 2,
  /** A step holding this share of the token budget is full. */
  fullStepShare: 0.8,
  /** vLLM's smallest default max_num_batched_tokens, the budget assumed when none is known. */
  smallestDefaultBudget: 2048,
  /**
   * Saturation seen from the client (open loop): the requests in flight grew, over the second half of
   * the sending, by at least this many and by more than this share of the arrivals in it.
   */
  backlogMin: 5,
  backlogShare: 0.2,
} as const;

const TTFT_SIDE = new Set(['ttft']);
const DECODE_SIDE = new Set(['itl', 'tpot']);

/**
 * The client's own lag delays when it reads a token, so it inflates a measured latency by about that
 * lag and no more: a miss still over its limit with the lag taken off is the server's, and a busy
 * load machine must not hide it (and its advice) behind "client-bound". Late sends are the client's
 * whatever was missed.
 */
function clientBound(c: ClientEvidence | null, checks: ReturnType<typeof checkSlo>): boolean {
  if (c === null) return false;
  if ((c.late_send_share ?? 0) > THRESHOLDS.clientLateShare) return true;
  const lagMs = c.loop_lag_p99_ms ?? 0;
  if (lagMs <= THRESHOLDS.clientLagP99Ms) return false;
  const misses = checks.filter((ch) => !ch.ok);
  return misses.length === 0 || misses.some((ch) => ch.valueMs - lagMs <= ch.limitMs);
}

function kvBound(s: ServerEvidence | null): boolean {
  if (s === null) return false;
  return (s.preemptions ?? 0) > 0 || (s.kv_full_share ?? 0) >= THRESHOLDS.kvFullShare;
}

/**
 * Engine steps one prefill spans: the mean prefill time over the mean step time (a request's decode
 * time over its tokens after the first). Many steps mean the token budget slices each prompt.
 */
export function prefillSteps(s: ServerEvidence | null, result: BenchmarkResult): number | null {
  if (s === null || s.prefill_ms_mean === null || s.decode_ms_mean === null || result.completed === 0) return null;
  const outTokens = result.total_output_tokens / result.completed;
  if (outTokens <= 1 || s.decode_ms_mean <= 0) return null;
  return s.prefill_ms_mean / (s.decode_ms_mean / (outTokens - 1));
}

/**
 * Requests waited while the running count sat at its limit for most of that time. When max_num_seqs
 * is not known the limit is the plateau the running count reached, which the token budget makes too
 * when it slices long prompts (a few requests prefill at a time, the rest wait): a plateau whose
 * prefills span several steps is the budget's, not max_num_seqs's.
 */
function capped(s: ServerEvidence | null, result: BenchmarkResult, known: ServerConfig): boolean {
  if (s === null || s.waiting_share === null || s.waiting_share < THRESHOLDS.queueShare) return false;
  const perStep = oneTokenPromptsPerStep(s, result);
  if (perStep !== null) return oneTokenCapped(s, perStep, known);
  if ((s.capped_share ?? 0) < THRESHOLDS.cappedOfWaiting * s.waiting_share) return false;
  if (s.running_limit_known) return true;
  const steps = prefillSteps(s, result);
  return steps === null || steps < THRESHOLDS.slicedPrefillSteps;
}

/**
 * The same for requests that answer one token. Each finishes in the step that prefills it, so the
 * running gauge (read between steps) misses it and cannot show a plateau; a step's prompts are the
 * batch. A known max_num_seqs caps when the steps hold about that many; an unknown one when the steps
 * hold whole prompts but are not full of tokens (a sliced prompt, or a full step, is the budget's).
 */
function oneTokenCapped(s: ServerEvidence, perStep: number, known: ServerConfig): boolean {
  if (s.running_limit_known && s.running_limit !== null) return perStep >= atLimit(s.running_limit);
  if (perStep < 1 / THRESHOLDS.slicedPrefillStepsByTokens) return false;
  const budget = known.max_num_batched_tokens ?? THRESHOLDS.smallestDefaultBudget;
  return (s.step_tokens_mean ?? 0) < THRESHOLDS.fullStepShare * budget;
}

/** Steps a one-token request's prompt spans (at least one), or null for longer answers. */
function oneTokenSteps(s: ServerEvidence | null, result: BenchmarkResult): number | null {
  const perStep = s === null ? null : oneTokenPromptsPerStep(s, result);
  return perStep === null ? null : Math.max(1, 1 / perStep);
}

const queued = (s: ServerEvidence | null): boolean => s !== null && (s.waiting_share ?? 0) >= THRESHOLDS.queueShare;

/** How far over its limit the worst missed key of one side is (value ÷ limit), 0 when none missed. */
function overBy(checks: ReturnType<typeof checkSlo>, side: (k: SloKey) => boolean): number {
  let worst = 0;
  for (const c of checks) if (!c.ok && side(c.key)) worst = Math.max(worst, c.valueMs / c.limitMs);
  return worst;
}

/** Where an E2EL miss's time went: to the first token (TTFT side) or to decoding. */
function e2elSide(result: BenchmarkResult): 'ttft' | 'decode' {
  const decodeMs = result.mean_e2el_ms - result.mean_ttft_ms;
  return result.mean_ttft_ms >= decodeMs ? 'ttft' : 'decode';
}

export function diagnose(input: DiagnoseInput): Diagnosis {
  const { result, slo, known } = input;
  const server = input.evidence?.server ?? evidenceFromServerMetrics(result.server_metrics, known);
  const client = input.evidence?.client ?? null;
  const checks = slo === null ? [] : checkSlo(slo, result);
  const missed = checks.filter((c) => !c.ok).map((c) => c.key);
  const e2el = e2elSide(result);
  const isTtftSide = (k: SloKey): boolean => {
    const m = sloField(k).metric;
    return TTFT_SIDE.has(m) || (m === 'e2el' && e2el === 'ttft');
  };
  const isDecodeSide = (k: SloKey): boolean => {
    const m = sloField(k).metric;
    return DECODE_SIDE.has(m) || (m === 'e2el' && e2el === 'decode');
  };
  const ttftOver = overBy(checks, isTtftSide);
  const decodeOver = overBy(checks, isDecodeSide);
  const openLoop = typeof result.request_rate === 'number';
  // An open-loop run says itself whether its queue grew without bound (metrics/saturation.ts), simulated or measured.
  const unbounded = saturationText(result.saturation);
  const saturated =
    unbounded !== null || (server?.waiting_share ?? 0) >= THRESHOLDS.saturatedShare || (openLoop && result.lmb.mean_client_queue_ms > THRESHOLDS.clientQueueMs) || fellBehind(client);

  let bottleneck: Bottleneck;
  let also: Bottleneck | null = null;
  if (clientBound(client, checks)) bottleneck = 'client';
  else if (missed.length === 0 && !saturated) bottleneck = 'none';
  else if (kvBound(server)) bottleneck = 'kv_cache';
  else {
    // The TTFT side: queueing at the limit (admission) or prefill (the budget, or long prompts).
    const ttftSide = (): Bottleneck => {
      const q = server?.queue_ms_mean ?? null;
      const p = server?.prefill_ms_mean ?? null;
      const queueDominates = q !== null && p !== null ? q > p : queued(server);
      if (queueDominates && capped(server, result, known)) return 'admission';
      return 'prefill';
    };
    if (ttftOver > 0 && ttftOver >= decodeOver) {
      bottleneck = ttftSide();
      if (decodeOver > 0) also = 'decode';
    } else if (decodeOver > 0) {
      bottleneck = 'decode';
      if (ttftOver > 0) also = ttftSide();
      else if (saturated && capped(server, result, known)) also = 'admission';
    } else {
      // Saturated within the SLOs: what stops it taking more.
      bottleneck = capped(server, result, known) ? 'admission' : queued(server) ? 'prefill' : 'decode';
    }
  }
  if (also === bottleneck) also = null;

  const evidence = evidenceItems(bottleneck, { result, server, client, checks, known });
  // Knob advice in the server's own vocabulary: vLLM's knobs for vLLM (or a server that did not say
  // what it is), the engine's own flags for another, nothing for a server whose /metrics no one reads.
  const metrics = input.evidence?.metrics ?? null;
  const engine = server?.engine ?? (metrics === 'unrecognised' || metrics === 'absent' || metrics === null ? null : metrics);
  const vllmLike = engine === 'vllm' || (engine === null && metrics !== 'unrecognised');
  const knobs = vllmLike ? adviseKnobs(bottleneck, { result, server, known, checkpoint: input.model?.native_quantization ?? null }) : [];
  const hints = engine !== null && engine !== 'vllm' ? engineHints(engine, bottleneck) : [];
  const failures = failureFinding(result);
  // Every request failed (or none was sent): there is no answered request to judge an SLO on, and no "met".
  const noneAnswered = result.completed === 0;
  // A run given no SLO met none and missed none: its text must not say that SLOs held.
  const judged = checks.length > 0;
  // Per-request thresholds alone (vLLM's --goodput) set goodput, not a percentile this judges.
  const unjudged = slo !== null && Object.values(slo.request ?? {}).some((v) => v !== undefined) ? 'no percentile SLO to judge' : 'no SLO given';
  // A queue that grows without bound meets no SLO, whatever its percentiles say: say so before them.
  // A request the server lost was not served within any SLO: a run that lost some met none of them,
  // however fast it answered the rest (a llama.cpp server dropping half a load read "met its SLOs").
  const missedText = noneAnswered
    ? 'no request completed, so no SLO could be judged'
    : failures !== null && missed.length === 0 && judged && unbounded === null
      ? `not met: ${failures.count} of ${failures.of} requests were lost`
      : unbounded !== null
      ? `${missed.length === 0 ? '' : `missed ${missed.join(', ')}; `}${unbounded}`
      : missed.length === 0
        ? saturated
          ? judged
            ? 'saturated within its SLOs'
            : `saturated; ${unjudged}`
          : judged
            ? 'met its SLOs'
            : unjudged
        : `missed ${missed.join(', ')}`;
  const numbers = evidence.slice(0, 3).map(evidencePhrase).join(', ');
  const failedText = failures === null ? '' : `${failures.count} of ${failures.of} requests failed (${failures.first_errors[0] ?? 'no message'}); `;
  const head = noneAnswered
    ? 'the server answered no request'
    : bottleneck === 'none' && failures !== null
      ? judged
        ? `the server failed requests; of those it answered, ${missed.length === 0 ? 'none missed an SLO' : `missed ${missed.join(', ')}`}`
        : 'the server failed requests'
      : bottleneck === 'none' && !judged
        ? 'no bottleneck: the server kept up'
        : BOTTLENECK_TEXT[bottleneck];
  const blind =
    server !== null || bottleneck === 'client' || bottleneck === 'none'
      ? ''
      : metrics === 'unrecognised'
        ? '; the server’s /metrics has none of the series lm-bench reads (vLLM, SGLang, llama.cpp, TGI): inferred from the client’s timings'
        : '; no server metrics: inferred from the client’s timings';
  // A lag too small to account for the miss still shades every latency by that much: say so.
  const lagMs = client?.loop_lag_p99_ms ?? 0;
  const lagged = bottleneck !== 'client' && lagMs > THRESHOLDS.clientLagP99Ms ? `; the client lagged too (loop lag p99 ${Math.round(lagMs)} ms), too little to account for the miss` : '';
  const summary = `${failedText}${head} (${missedText}${numbers === '' ? '' : `; ${numbers}`})${also === null ? '' : `; also ${boundName(also)}`}${blind}${lagged}`;
  return { bottleneck, also, source: input.source, missed, saturated, summary, evidence, knobs, hints, failures };
}

/** A client that sent on schedule while the requests in flight grew: the server finished fewer than it was sent. */
function fellBehind(c: ClientEvidence | null): boolean {
  const growth = c?.backlog_growth ?? null;
  const arrivals = c?.backlog_arrivals ?? null;
  return growth !== null && arrivals !== null && growth >= THRESHOLDS.backlogMin && growth > THRESHOLDS.backlogShare * arrivals;
}

/** The failed requests of a run, with the first distinct error texts. */
function failureFinding(result: BenchmarkResult): Diagnosis['failures'] {
  if (result.failed <= 0) return null;
  const samples = [...(result.lmb.error_samples ?? [])].sort((a, b) => b.count - a.count);
  const texts = samples.length > 0 ? samples.map((e) => `${e.count}× ${e.status === null ? '' : `HTTP ${e.status}: `}${e.message}`) : Object.entries(result.lmb.errors_by_kind).map(([kind, n]) => `${n}× ${kind}`);
  return { count: result.failed, of: result.failed + result.completed, first_errors: texts.slice(0, 3) };
}

interface ItemContext {
  readonly result: BenchmarkResult;
  readonly server: ServerEvidence | null;
  readonly client: ClientEvidence | null;
  readonly checks: ReturnType<typeof checkSlo>;
  readonly known: ServerConfig;
}

/** The numbers behind a class, the deciding ones first; missed SLO values always included. */
function evidenceItems(b: Bottleneck, ctx: ItemContext): EvidenceItem[] {
  const { result, server: s, client: c, known } = ctx;
  const out: EvidenceItem[] = [];
  const add = (name: string, value: number | null | undefined, unit: string, limit: number | null = null): void => {
    if (value !== null && value !== undefined && Number.isFinite(value)) out.push({ name, value, unit, limit });
  };
  const meanPrompt = result.completed > 0 ? result.total_input_tokens / result.completed : null;
  switch (b) {
    case 'client':
      add('client loop lag p99', c?.loop_lag_p99_ms, 'ms', THRESHOLDS.clientLagP99Ms);
      add('requests sent late', c?.late_send_share, 'share', THRESHOLDS.clientLateShare);
      add('client CPU', c?.cpu_share, 'share');
      break;
    case 'kv_cache':
      add('preemptions', s?.preemptions, 'count');
      add('KV cache peak', s?.kv_usage_peak, 'share');
      add('time with KV ≥ 95%', s?.kv_full_share, 'share', THRESHOLDS.kvFullShare);
      add('time with requests waiting', s?.waiting_share, 'share');
      add('gpu_memory_utilization', known.gpu_memory_utilization, 'fraction');
      break;
    case 'admission': {
      // One-token answers never show on the running gauge (no plateau, no time at it): the prompts a step held are the batch.
      const perStep = s === null ? null : oneTokenPromptsPerStep(s, result);
      if (s?.running_limit_known === true || perStep === null) add(s?.running_limit_known === true ? 'running (max_num_seqs × replicas)' : 'running (plateau)', s?.running_limit, 'count');
      if (perStep !== null) add('prompts per engine step', perStep, 'count');
      else add('time at the limit with requests waiting', s?.capped_share, 'share');
      add('waiting (mean)', s?.waiting_mean, 'count');
      add('queue time (mean)', s?.queue_ms_mean, 'ms');
      add('KV cache (mean)', s?.kv_usage_mean, 'share');
      break;
    }
    case 'prefill':
      add('prefill time (mean)', s?.prefill_ms_mean, 'ms');
      add('engine steps per prefill', prefillSteps(s, result) ?? oneTokenSteps(s, result), 'steps');
      add('queue time (mean)', s?.queue_ms_mean, 'ms');
      add('prompt tokens (mean)', meanPrompt, 'tokens');
      add('max_num_batched_tokens', known.max_num_batched_tokens, 'tokens');
      add('tokens per step (mean)', s?.step_tokens_mean, 'tokens');
      add('time with requests waiting', s?.waiting_share, 'share');
      break;
    case 'decode':
      add('ITL (mean)', result.mean_itl_ms, 'ms');
      add('ITL p99', result.p99_itl_ms, 'ms');
      add('running batch (mean)', s?.running_mean, 'count');
      add('decode time (mean)', s?.decode_ms_mean, 'ms');
      break;
    case 'none':
      add('running batch (mean)', s?.running_mean, 'count');
      add('KV cache peak', s?.kv_usage_peak, 'share');
      break;
  }
  for (const ch of ctx.checks) if (!ch.ok) add(ch.key, ch.valueMs, 'ms', ch.limitMs);
  return out;
}

/**
 * A result as a trial stores it: its own diagnosis when the run made one, else one from what the
 * result holds (a harness's result: its `server_metrics` peaks at most), the trial's knobs and, where
 * the caller knows it, the served checkpoint.
 */
export function withDiagnosis(result: BenchmarkResult, config: ServerConfig, slo: Slo | null, model?: Pick<ModelSpec, 'native_quantization'> | null): BenchmarkResult {
  if (result.diagnosis !== undefined || result.completed === 0) return result;
  return { ...result, diagnosis: diagnose({ result, evidence: result.evidence ?? null, known: config, slo, source: result.lmb.source === 'sim' ? 'simulated' : 'measured', model }) };
}
