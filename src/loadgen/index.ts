import { availableParallelism } from 'node:os';
import type { BenchmarkResult, RequestRecord, ServerConfig, Slo, Workload } from '../domain/index.js';
import { clientEvidence, serverEvidenceFromScrapes } from '../diagnose/evidence.js';
import { LmBenchError } from '../errors.js';
import { createWorkerPool, workerEntry } from '../workers/pool.js';
import { concurrencyCap } from '../workload/sample.js';
import { clockFrom, nowNs } from './clock.js';
import type { RampUp } from './config.js';
import { CTRL_DONE, CTRL_FAILED, CTRL_SLOTS, CTRL_STOP, drive, type DriveResult, type DriveSpec } from './drive.js';
import { requestBody } from './client.js';
import { connectTarget } from './connect.js';
import { warmupRequests, type PreparedRequest } from './prompts.js';
import { loadTraffic } from './traffic.js';
import { buildResult } from './result.js';
import { sendLateness, type SendLateness } from './lateness.js';
import { outputLengths, type OutputLengths } from './output-lengths.js';
import { startScraper } from './scrape.js';
import { metricsPathsOf } from './routes.js';
import { createPowerMeter, energyFromReading, expectedGpus, loadWindow, type PowerMeter, type PowerSpec } from './power/index.js';
import type { Transport } from './transport.js';

/**
 * The load runner's programmatic API (the tuner and `lm-bench run` call it): checks the endpoint,
 * sends the workload's requests (drawn from the seed as the simulator draws them), and returns the
 * vLLM-compatible result with every per-request record. Bounded: at most `num_prompts` requests, no
 * request outlives `timeoutMs`, and nothing new is sent after `durationS`.
 */
export interface Progress {
  readonly done: number;
  readonly failed: number;
  readonly total: number;
}

export interface RunBenchmarkOptions {
  readonly endpoint: string;
  readonly model?: string | undefined;
  readonly workload: Workload;
  readonly seed: number;
  readonly slo?: Slo | undefined;
  /** Per-request limit (default 600 s). */
  readonly timeoutMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Scrape the server's /metrics (default true), every `scrapeIntervalMs` (default 500). */
  readonly scrapeMetrics?: boolean | undefined;
  readonly scrapeIntervalMs?: number | undefined;
  /** Threads driving the streams: 1 = this thread; more spreads them over piscina workers. */
  readonly workers?: number | undefined;
  readonly onProgress?: ((p: Progress) => void) | undefined;
  /** Prompts from a file dataset, used instead of the workload's synthetic ones. */
  readonly requests?: readonly PreparedRequest[] | undefined;
  readonly rampUp?: RampUp | undefined;
  readonly burstiness?: number | undefined;
  readonly durationS?: number | undefined;
  readonly warmupRequests?: number | undefined;
  /**
   * Changes the synthetic prompts' words, not their lengths or sharing (`syntheticRequests`), so a
   * server's prefix cache cannot serve them from an earlier run of the same seed; the result records it.
   */
  readonly promptSalt?: string | undefined;
  readonly temperature?: number | undefined;
  readonly label?: string | undefined;
  /** TLS trust, API key and connect time-out (defaults: system CAs, no key, 10 s). */
  readonly transport?: Partial<Transport> | undefined;
  /** Told, before anything is sent, where the load goes and how it is bounded (the CLI prints it). */
  readonly onTarget?: ((line: string) => void) | undefined;
  /** Environment read for LMB_LOOPBACK_ONLY (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Knob values the server runs with, when known (a trial's config, `run --set`): the diagnosis reads them. */
  readonly knownConfig?: ServerConfig | undefined;
  /**
   * Where to read the GPUs' power over the load window (a DCGM exporter, nvidia-smi, amd-smi): the
   * result then carries an `energy` block, unavailable with the reason when the source fails. Absent:
   * no block.
   */
  readonly power?: PowerSpec | undefined;
  /** Environment of the power sampler (its PATH, the loopback policy); default `env`, then process.env. */
  readonly powerEnv?: Readonly<Record<string, string | undefined>> | undefined;
  /**
   * Called, and awaited, with what was measured when the run is stopped part-way (`signal` aborted, as
   * Ctrl-C does) after measured requests were sent, just before `runBenchmark` throws LMB_ERR_INTERRUPTED:
   * `records` are every request sent (those the stop cut short marked `aborted`), and `result` counts the
   * others (a request the caller cut short is not one the server failed), as slo-hold's stop does.
   * Minutes of load the server did are not lost to the throw.
   */
  readonly onStopped?: ((measured: RunBenchmarkOutput, err: LmBenchError) => Promise<void> | void) | undefined;
}

export interface RunBenchmarkOutput {
  readonly result: BenchmarkResult;
  readonly records: RequestRecord[];
  /** Open loop: how late each send was against its schedule; null for a closed loop. */
  readonly lateness: SendLateness | null;
  /** Answers whose length was not their max_tokens although ignore_eos was sent; null: none (or not asked). */
  readonly outputLengths: OutputLengths | null;
}

export { parseEndpoint, isLoopbackHost } from './endpoint.js';
export { DEFAULT_TRANSPORT, apiKeyFrom, type Transport } from './transport.js';
export type { PreparedRequest } from './prompts.js';
export type { SendLateness } from './lateness.js';
export { outputLengthsWarning, type OutputLengths } from './output-lengths.js';

/** Streams one thread handles well before its event loop starts to distort timestamps (bench/loadgen.md). */
const STREAMS_PER_THREAD = 512;

export function autoWorkers(streams: number): number {
  return Math.max(1, Math.min(Math.ceil(streams / STREAMS_PER_THREAD), Math.max(1, availableParallelism() - 1), 8));
}

function split(total: number, parts: number, k: number): number {
  return Math.floor(total / parts) + (k < total % parts ? 1 : 0);
}

export async function runBenchmark(opts: RunBenchmarkOptions): Promise<RunBenchmarkOutput> {
  const timeoutMs = opts.timeoutMs ?? 600_000;
  const w = opts.workload;
  // Lengths and arrivals as the simulator draws them from this seed (traffic.ts); words the runner's own.
  const { requests, n, arrivals } = loadTraffic(w, opts.seed, opts);
  // Built before any connection: a power URL the loopback policy refuses fails the run before it starts.
  const meter: PowerMeter | null = opts.power === undefined ? null : createPowerMeter(opts.power, opts.powerEnv ?? opts.env ?? process.env);
  const { ep, transport, target, model, api } = await connectTarget({
    endpoint: opts.endpoint,
    model: opts.model,
    workload: w,
    timeoutMs,
    temperature: opts.temperature,
    transport: opts.transport,
    env: opts.env,
    onTarget: opts.onTarget,
    signal: opts.signal,
    bounds: { prompts: n === 0 ? 0 : n + (opts.warmupRequests ?? 0), durationS: opts.durationS },
  });

  const cap = concurrencyCap(w.arrival);
  const load = arrivals === null ? (cap ?? 1) : (cap ?? n);
  // Never more threads than streams (closed) or than the cap or requests (open): each thread gets at least one.
  const workers = Math.max(1, Math.min(opts.workers ?? autoWorkers(load), load));
  const ctrl = new SharedArrayBuffer(CTRL_SLOTS * 4);
  const ctrlView = new Int32Array(ctrl);
  const onAbort = (): void => {
    Atomics.store(ctrlView, CTRL_STOP, 1);
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    // Warm-up: the first prompts' lengths in other words, closed loop, left out of every metric.
    const warm = opts.warmupRequests ?? 0;
    let warmRecords: RequestRecord[] = [];
    // One time axis for the whole run, warm-up included: seconds from here (start_epoch_ms).
    const originNs = nowNs();
    const startEpochMs = Date.now();
    const clock = clockFrom(originNs);
    if (warm > 0) {
      const warmReqs = warmupRequests(requests.slice(0, n), warm, opts.seed, opts.promptSalt);
      const warmOut = await drive(
        {
          origin: ep.origin, transport, target, workerId: 0, phase: 'warmup', requests: warmReqs, arrivalsS: null,
          streams: Math.min(warm, cap ?? 16), originNs: String(originNs), startS: 0, deadlineS: Number.POSITIVE_INFINITY,
          ctrl: new SharedArrayBuffer(CTRL_SLOTS * 4),
        },
        opts.signal,
      );
      warmRecords = warmOut.records.sort((a, b) => Number(a.request_id.slice(1)) - Number(b.request_id.slice(1)));
    }
    const pool = workers > 1 ? createWorkerPool<DriveSpec | 'ping', DriveResult | 'pong'>({ entry: workerEntry(import.meta.url, 'drive'), what: 'load', minThreads: workers, maxThreads: workers, idleTimeoutMs: 1000 }) : null;
    try {
      if (pool !== null) await Promise.all(Array.from({ length: workers }, () => pool.run('ping')));
      const scraper = opts.scrapeMetrics === false ? null : await startScraper(ep.origin, transport, opts.scrapeIntervalMs, metricsPathsOf(ep.path));
      // Its first reading is in before the first request goes: the readings cover the window's start.
      await meter?.start(clock);
      // On this thread an open loop's bodies are serialized before its schedule starts, not after (its
      // first sends would be late by the work: ~20 µs a body, tens of ms for a long trace).
      const measuredBodies = pool === null && arrivals !== null ? requests.slice(0, n).map((r) => requestBody(target, r)) : undefined;
      // Workers start on a common instant a little ahead, so none begins before the others are ready:
      // each serializes its share of the bodies first. On this thread an open loop waits only for its
      // first connections (a few ms on loopback), so its first send is on time too.
      const startS = clock() + (pool === null ? (arrivals === null ? 0 : 0.01) : 0.02 + (arrivals === null ? 0 : (20e-6 * n) / workers));
      const cpuBefore = process.cpuUsage();
      const wallBeforeMs = performance.now();
      const deadlineS = opts.durationS === undefined ? Number.POSITIVE_INFINITY : startS + opts.durationS;
      const measured = requests.slice(0, n);
      const specs: DriveSpec[] = [];
      for (let k = 0; k < workers; k++) {
        const mine = arrivals === null ? measured : measured.filter((_, i) => i % workers === k);
        const streams = arrivals === null ? split(load, workers, k) : cap === null ? 0 : Math.max(1, split(cap, workers, k));
        specs.push({
          origin: ep.origin, transport, target, workerId: k, phase: 'measure', requests: mine,
          arrivalsS: arrivals === null ? null : Array.from(arrivals, (t) => t + startS).filter((_, i) => i % workers === k && i < n),
          streams, originNs: String(originNs), startS, deadlineS, ctrl,
          ...(measuredBodies === undefined ? {} : { bodies: measuredBodies }),
        });
      }
      const progress = opts.onProgress === undefined ? null : setInterval(() => {
        opts.onProgress?.({ done: Atomics.load(ctrlView, CTRL_DONE), failed: Atomics.load(ctrlView, CTRL_FAILED), total: n });
      }, 250);
      let outs: DriveResult[];
      try {
        outs = await Promise.all(specs.map((s) => (pool === null ? drive(s, opts.signal) : (pool.run(s) as Promise<DriveResult>))));
      } finally {
        if (progress !== null) clearInterval(progress);
      }
      opts.onProgress?.({ done: Atomics.load(ctrlView, CTRL_DONE), failed: Atomics.load(ctrlView, CTRL_FAILED), total: n });
      const cpu = process.cpuUsage(cpuBefore);
      const wallMs = performance.now() - wallBeforeMs;
      const [scraped, reading] = await Promise.all([scraper === null ? null : scraper.stop(), meter === null ? null : meter.stop()]);
      const interrupted = opts.signal?.aborted === true ? new LmBenchError('LMB_ERR_INTERRUPTED', 'the run was aborted') : null;
      // Exact merge: every record once, in request order, each tagged with the thread that sent it.
      const sent = outs.flatMap((o) => o.records).sort((a, b) => Number(a.request_id.slice(1)) - Number(b.request_id.slice(1)));
      if (interrupted !== null && (sent.length === 0 || opts.onStopped === undefined)) throw interrupted;
      // Stopped part-way: the requests the stop cut short stay on record, out of the metrics.
      const records = interrupted === null ? sent : sent.filter((r) => r.error_kind !== 'aborted');
      const maxLoopLagMs = Math.max(...outs.map((o) => o.maxLoopLagMs));
      const known = opts.knownConfig ?? {};
      const evidence = {
        server: scraped === null ? null : serverEvidenceFromScrapes(scraped.scrapes, known, { idleEnds: true }),
        client: clientEvidence(records, { loopLagP99Ms: Math.max(...outs.map((o) => o.p99LoopLagMs)), loopLagMaxMs: maxLoopLagMs, cpuMs: (cpu.user + cpu.system) / 1000, wallMs, threads: workers }, arrivals !== null),
        metrics: scraped?.metrics ?? 'absent',
      };
      const result = buildResult(records, {
        workload: w, model, api, slo: opts.slo, serverMetrics: scraped?.serverMetrics ?? null, maxLoopLagMs, startEpochMs, label: opts.label,
        burstiness: opts.rampUp !== undefined ? (opts.burstiness ?? 1) : undefined, evidence, known,
        scheduleStartS: arrivals === null || opts.rampUp !== undefined ? undefined : startS,
        // The measured requests are the schedule's first (an open loop sends in order, and stops at the deadline).
        fromSchedule: true,
        promptSalt: opts.requests === undefined ? opts.promptSalt : undefined,
      });
      const askedTokens = new Map(measured.map((r) => [`r${r.index}`, r.maxTokens]));
      const energy = reading === null || opts.power === undefined ? undefined : energyFromReading(reading, loadWindow(records), result.total_output_tokens, expectedGpus(opts.power));
      const output: RunBenchmarkOutput = {
        result: energy === undefined ? result : { ...result, energy },
        records: [...warmRecords, ...sent],
        lateness: arrivals === null ? null : sendLateness(records),
        outputLengths: outputLengths(records, (r) => askedTokens.get(r.request_id), w.ignore_eos),
      };
      if (interrupted !== null) {
        await opts.onStopped?.(output, interrupted);
        throw interrupted;
      }
      return output;
    } finally {
      await pool?.destroy();
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    // A run that failed or was aborted still releases its sampler (stop answers once, whoever asks).
    await meter?.stop();
  }
}
