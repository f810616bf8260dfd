import type { BenchmarkResult, RequestRecord, ServerConfig } from '../../domain/index.js';
import { SLO_KEYS, SLO_METRICS, SLO_STATS, type SloKey } from '../../domain/index.js';
import { bottleneckLabel, hasBottleneck } from '../../diagnose/text.js';
import { requestLatencyLines } from '../../domain/request-latency.js';
import { LmBenchError } from '../../errors.js';
import type { BenchConfig } from '../../loadgen/config.js';
import type { PowerSpec } from '../../loadgen/power/index.js';
import { DEFAULT_TRANSPORT, apiKeyFrom, outputLengthsWarning, parseEndpoint, runBenchmark, type OutputLengths } from '../../loadgen/index.js';
import { describeTarget } from '../../loadgen/endpoint.js';
import { planRun } from '../../loadgen/plan.js';
import { routeFor } from '../../loadgen/connect.js';
import { runSloHold, type RatePoint, type SloHoldOutcome } from '../../loadgen/slo-hold.js';
import { sweepReportHtml } from '../../report/sweep.js';
import { meetsSlo, searchMaxRate } from '../../tune/max-rate.js';
import { numberFlag, requireFlag } from '../args.js';
import { jsonReplacer, writeJson, type CliIo } from '../io.js';
import { keepStopped, summaryText, writeOutput, type RunOutputPaths } from './run-output.js';

/** What `requireFlag` names when nothing names the server (`run` in every mode). */
export const ENDPOINT_FLAG = 'endpoint URL (or --base-url URL, --host H --port P, or `endpoint:` in the config file)';

/**
 * `lm-bench run --mode slo-hold` and `--mode max-rate` (docs/load-modes.md): one load point, searched
 * for the rate the SLOs allow, each answer with the diagnosis of what stops the server going higher.
 */
export interface AdaptiveInput {
  readonly raw: Record<string, unknown>;
  readonly base: BenchConfig;
  readonly baseDir: string;
  /** `--set` knobs: what the server is known to run with. */
  readonly knownConfig: ServerConfig | undefined;
  /** `--power-*`: where each load run of max-rate reads power (slo-hold has no single load window). */
  readonly power?: PowerSpec | undefined;
  /** The run's prompt salt (`--prompt-salt`, else fresh): every load run of the search sends its words. */
  readonly promptSalt: string;
  /** The output files, checked before the load: written to these paths. */
  readonly paths: RunOutputPaths;
}

/** The flags of `run` these modes read. */
export interface AdaptiveFlags {
  readonly label?: string | undefined;
  readonly 'api-key'?: string | undefined;
  readonly control?: string | undefined;
  readonly 'dry-run'?: boolean | undefined;
  readonly 'duration-s'?: string | undefined;
  readonly 'window-s'?: string | undefined;
  readonly 'start-rps'?: string | undefined;
  readonly json?: boolean | undefined;
}

export async function runAdaptive(mode: 'slo-hold' | 'max-rate', cfg: AdaptiveInput, values: AdaptiveFlags, io: CliIo): Promise<number> {
  const { raw, base, baseDir, knownConfig, power } = cfg;
  if (mode === 'slo-hold' && power !== undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--mode slo-hold varies the rate all along, so no load window has one power; measure power in --mode fixed or max-rate', { details: { field: 'mode' } });
  if (raw['sweep'] !== undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--mode ${mode} searches the rate itself; remove the config's sweep`, { details: { field: 'mode' } });
  const plan = planRun(base, baseDir, values.label ?? base.name);
  const slo = plan.slo;
  const keys = slo === undefined ? [] : SLO_KEYS.filter((k) => slo[k] !== undefined);
  if (slo === undefined || keys.length === 0) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--mode ${mode} needs a latency target: --slo ttft_p95_ms=400 (any of ${SLO_METRICS.join(', ')} at ${SLO_STATS.join(', ')})`, { details: { field: 'slo' } });
  const endpoint = requireFlag(plan.endpoint, ENDPOINT_FLAG);
  const apiKey = apiKeyFrom(values['api-key'], io.env['OPENAI_API_KEY']);
  const transport = { ...plan.transport, apiKey };
  const controlled = mode === 'slo-hold' ? (values.control ?? (keys.length === 1 ? keys[0] : undefined)) : undefined;
  if (mode === 'slo-hold' && (controlled === undefined || !(keys as string[]).includes(controlled))) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', controlled === undefined ? `--mode slo-hold holds one percentile; --slo has ${keys.join(', ')}: name it with --control` : `--control ${controlled} is not one of the --slo keys (${keys.join(', ')})`, { details: { field: 'control' } });
  }
  if (values['dry-run'] === true) {
    const bound = mode === 'slo-hold' ? { prompts: 200_000, durationS: numberFlag(values['duration-s'], 'duration-s', { min: 1 }) ?? 120 } : { prompts: plan.workload.num_prompts * 5, durationS: plan.durationS };
    const line = describeTarget(routeFor(parseEndpoint(endpoint), plan.workload.api).route, { ...DEFAULT_TRANSPORT, ...transport }, { ...bound, timeoutS: (plan.timeoutMs ?? 600_000) / 1000 });
    if (values.json === true) writeJson(io, { dry_run: true, mode, target: line });
    else io.stdout.write(`would ${line} (--mode ${mode})\n`);
    return 0;
  }
  const ac = new AbortController();
  const onSignal = (): void => ac.abort();
  process.once('SIGINT', onSignal);
  const say = (line: string): void => {
    if (values.json !== true) io.stderr.write(`lm-bench: ${line}\n`);
  };
  try {
    if (mode === 'slo-hold') {
      const key = controlled as SloKey;
      const out = await runSloHold({
        endpoint, model: plan.model, workload: plan.workload, seed: plan.seed, slo, control: { key, limitMs: slo[key] as number },
        durationS: numberFlag(values['duration-s'], 'duration-s', { min: 1 }) ?? 120,
        windowS: numberFlag(values['window-s'], 'window-s', { min: 1, max: 600 }) ?? 10,
        startRps: numberFlag(values['start-rps'], 'start-rps', { min: 0.01 }) ?? 2,
        timeoutMs: plan.timeoutMs, transport, env: io.env, signal: ac.signal, onTarget: say, knownConfig, promptSalt: cfg.promptSalt,
        // Stopped part-way (Ctrl-C): the requests sent are load the server did, kept as max-rate keeps its probes.
        onStopped: ({ records, ...body }) =>
          keepStopped(`the slo-hold run stopped at ${body.window_s.to.toFixed(0)} s`, { n: records.length, noun: 'request' }, cfg.paths, () => writeAdaptiveFiles(body, { records, result: body.result, verdict: holdVerdict(body) }, cfg.paths), io),
        onTick: (p) => say(`t=${p.t_s.toFixed(0)} s: offered ${p.offered_rps.toFixed(2)} req/s, achieved ${p.achieved_rps.toFixed(2)}, ${key} ${p.value_ms === null ? '–' : p.value_ms.toFixed(0)} ms (${p.phase})`),
      });
      const { records, ...body } = out;
      return finishAdaptive(body, { records, result: body.result, verdict: holdVerdict(body), reliable: body.reliable }, cfg.paths, values, io);
    }
    const probes: Probe[] = [];
    /** The first probe whose answers missed their max_tokens although ignore_eos was sent. */
    let lengths: OutputLengths | null = null;
    // Every probe's requests, for --records and --requests-out: each id says its probe (probe3-r17 is
    // request r17 of probes[2]), as a sweep's say their point; times are from that probe's own start.
    const probeRecords: RequestRecord[] = [];
    /** The search's answer in words and JSON, from the probes measured (all of them, or those before a stop). */
    const answer = (chosen: { maxRateRps: number; result: BenchmarkResult }, stopped: string | null): { body: Record<string, unknown> & { reliable: boolean }; verdict: string } => {
      const reasons: string[] = [];
      if (stopped !== null) reasons.push(stopped);
      if (!probes.some((p) => p.meets_slo)) reasons.push('no probed rate met the SLOs');
      const clientBound = probes.find((p) => p.result.diagnosis?.bottleneck === 'client');
      if (clientBound !== undefined) reasons.push(`the client itself was the bottleneck in a probe: ${clientBound.result.diagnosis?.summary ?? ''}`);
      if (probes.some((p) => p.result.failed > 0 && p.meets_slo)) reasons.push('the server failed requests at a rate counted as met');
      // A rate found on shorter (or longer) answers than the workload's is not the workload's rate.
      if (lengths !== null) reasons.push(outputLengthsWarning(lengths));
      const body = {
        mode: 'max-rate' as const,
        max_rate_rps: reasons.length === 0 ? chosen.maxRateRps : null,
        reliable: reasons.length === 0,
        unreliable_reasons: reasons,
        probes: probes.map(({ result, ...p }) => ({ ...p, p95_ttft_ms: result.p95_ttft_ms, p99_ttft_ms: result.p99_ttft_ms, p99_itl_ms: result.p99_itl_ms, failed: result.failed, diagnosis: result.diagnosis ?? null })),
        result: chosen.result,
      };
      const verdict = body.reliable ? `max rate ${chosen.maxRateRps.toFixed(2)} req/s meeting ${keys.join(', ')} (${probes.length} load runs)` : `no reliable answer: ${reasons.join('; ')}`;
      return { body, verdict };
    };
    let found: Awaited<ReturnType<typeof searchMaxRate>>;
    try {
      found = await searchMaxRate(async (w, k) => {
        const t0 = Date.now();
        // Each probe draws its own requests; its result records the seed that drew them.
        const seed = plan.seed + k * 7919;
        const { result, records, outputLengths } = await runBenchmark({ ...plan, workload: { ...w, seed }, seed, promptSalt: cfg.promptSalt, endpoint, transport, env: io.env, signal: ac.signal, onTarget: k === 0 ? say : undefined, knownConfig, power, powerEnv: io.env });
        for (const r of records) probeRecords.push({ ...r, request_id: `probe${k + 1}-${r.request_id}` });
        lengths ??= outputLengths;
        const ok = meetsSlo(slo, result);
        probes.push({ rate_rps: w.arrival.kind === 'poisson' ? w.arrival.rate_rps : 'inf', meets_slo: ok, request_throughput: result.request_throughput, result });
        const why = hasBottleneck(result.diagnosis) ? ` (${bottleneckLabel(result.diagnosis)})` : '';
        say(`probe ${k + 1}: ${w.arrival.kind === 'poisson' ? `${w.arrival.rate_rps.toFixed(2)} req/s` : 'all at once'} → ${result.request_throughput.toFixed(2)} req/s, SLOs ${ok ? 'met' : 'missed'}${why}`);
        return { status: 'ok', result, durationMs: Date.now() - t0 };
      }, plan.workload, slo);
    } catch (err) {
      // A search that stops at a later probe (the server went away, Ctrl-C) keeps the probes it measured,
      // as a stopped sweep keeps its points: each is a load run the server did.
      await keepProbes(err, { probes, records: probeRecords, answer }, cfg.paths, io);
      throw err;
    }
    if (found.status !== 'ok' || found.maxRate === undefined) throw new LmBenchError('LMB_ERR_ENDPOINT_BAD_RESPONSE', 'the max-rate search could not measure the server');
    const chosen = found.maxRate;
    const { body, verdict } = answer(chosen, null);
    return finishAdaptive(body, { records: probeRecords, result: chosen.result, verdict, reliable: body.reliable }, cfg.paths, values, io);
  } finally {
    process.removeListener('SIGINT', onSignal);
  }
}

/** An slo-hold answer in words: the rate it held, or why there is none. */
function holdVerdict(body: Omit<SloHoldOutcome, 'mode'>): string {
  const { key, limit_ms } = body.controlled;
  return body.reliable ? `max sustainable rate ${body.max_sustainable_rps?.toFixed(2)} req/s with ${key} ≤ ${limit_ms} ms (settled at ${body.settled_at_s?.toFixed(0)} s)` : `no reliable answer: ${body.unreliable_reasons.join('; ')}`;
}

interface Probe {
  readonly rate_rps: number | 'inf';
  readonly meets_slo: boolean;
  readonly request_throughput: number;
  readonly result: BenchmarkResult;
}

/** What a max-rate search measured so far, and how it words an answer from it. */
interface MeasuredProbes {
  readonly probes: readonly Probe[];
  /** Every probe's requests, ids naming their probe. */
  readonly records: readonly RequestRecord[];
  readonly answer: (chosen: { maxRateRps: number; result: BenchmarkResult }, stopped: string) => { body: Record<string, unknown>; verdict: string };
}

/**
 * Writes the probes a stopped max-rate search measured to the output files, and says so; no rate is
 * answered from them (the bisection did not finish). Their `result` is the fastest probe that met the
 * SLOs, else the last one measured. A write that fails then is told, not thrown over the cause.
 */
async function keepProbes(err: unknown, search: MeasuredProbes, paths: RunOutputPaths, io: CliIo): Promise<void> {
  const { probes, records, answer } = search;
  const last = probes[probes.length - 1];
  if (last === undefined) return;
  const at = probes.length + 1;
  const rateOf = (p: Probe): number => (p.rate_rps === 'inf' ? p.request_throughput : p.rate_rps);
  const met = probes.filter((p) => p.meets_slo).sort((a, b) => rateOf(b) - rateOf(a))[0];
  const shown = met ?? last;
  const { body, verdict } = answer({ maxRateRps: rateOf(shown), result: shown.result }, `the search stopped at probe ${at}: ${causeOf(err)}`);
  await keepStopped(`the max-rate search stopped at probe ${at}`, { n: probes.length, noun: 'probe' }, paths, () => writeAdaptiveFiles(body, { records, result: shown.result, verdict }, paths), io);
}

const causeOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The output files of an adaptive run: its JSON body, every request sent, and the HTML summary. */
async function writeAdaptiveFiles(body: Record<string, unknown>, done: { records: readonly RequestRecord[]; result: BenchmarkResult; verdict: string }, paths: RunOutputPaths): Promise<void> {
  const { records, result, verdict } = done;
  const out = (v: unknown): string => JSON.stringify(v, jsonReplacer);
  if (paths.output !== undefined) writeOutput('output', paths.output, `${JSON.stringify(body, jsonReplacer, 2)}\n`);
  if (paths.records !== undefined) writeOutput('records', paths.records, records.map((r) => `${out(r)}\n`).join(''));
  if (paths['requests-out'] !== undefined) writeOutput('requests-out', paths['requests-out'], requestLatencyLines(records));
  if (paths.html !== undefined) {
    const timeline = Array.isArray(body['rate_timeline']) ? (body['rate_timeline'] as RatePoint[]) : null;
    const controlled = body['controlled'] as { key: string; limit_ms: number } | undefined;
    writeOutput('html', paths.html, await sweepReportHtml([result], {
      title: `lm-bench run --mode ${String(body['mode'])}`,
      generatedAt: new Date().toISOString(),
      verdict,
      ...(timeline === null ? {} : { rateTimeline: timeline }),
      ...(controlled === undefined ? {} : { timelineLabel: controlled.key, limitMs: controlled.limit_ms }),
    }));
  }
}

async function finishAdaptive(body: Record<string, unknown>, done: { records: readonly RequestRecord[]; result: BenchmarkResult; verdict: string; reliable: boolean }, paths: RunOutputPaths, values: AdaptiveFlags, io: CliIo): Promise<number> {
  await writeAdaptiveFiles(body, done, paths);
  if (values.json === true) writeJson(io, body);
  else io.stdout.write(`${done.verdict}\n${summaryText(done.result)}\n`);
  return done.reliable ? 0 : 1;
}
