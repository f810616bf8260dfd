import type { Pool } from 'undici';
import { LmBenchError } from '../../errors.js';
import { isLoopbackHost } from '../../util/loopback.js';
import { classifyError } from '../client.js';
import { parsePrometheusSeries } from '../scrape.js';
import { DEFAULT_TRANSPORT, openPool } from '../transport.js';
import type { GpuSeries, PowerMeter, PowerReading, PowerSpec } from './types.js';
import { SeriesBuilder } from './types.js';

/**
 * Power from NVIDIA's DCGM exporter (its Prometheus `/metrics`), scraped on the client's clock while the
 * load runs. Two series per GPU (`gpu` label), from the exporter's default counters
 * (etc/default-counters.csv): DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, a counter of millijoules since the
 * driver loaded, and DCGM_FI_DEV_POWER_USAGE, a gauge in watts. The counter's rise is preferred (it
 * misses nothing between scrapes); the gauge, integrated, when the counter is absent or does not
 * advance. The exporter refreshes its values every `-c` milliseconds (30 000 by default): values that
 * never change during a run say that interval is longer than the run, and power is then unavailable.
 */
export const DCGM_ENERGY = 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION';
export const DCGM_POWER = 'DCGM_FI_DEV_POWER_USAGE';
const NAMES = new Set([DCGM_ENERGY, DCGM_POWER]);

type DcgmSpec = Extract<PowerSpec, { kind: 'dcgm' }>;

export interface MetricsUrl {
  readonly origin: string;
  readonly path: string;
  readonly host: string;
  /** What messages name: origin and path. */
  readonly display: string;
}

/**
 * A `--power-metrics` URL checked as the load's endpoint is: http(s), no credentials, and on loopback
 * when LMB_LOOPBACK_ONLY=1 (tests and benchmarks never reach off this machine). No path: `/metrics`.
 */
export function parseMetricsUrl(raw: string, env: Readonly<Record<string, string | undefined>>): MetricsUrl {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--power-metrics "${raw}" is not a URL`, { details: { field: 'power-metrics', value: raw } });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--power-metrics must be http(s), got ${u.protocol}`, { details: { field: 'power-metrics', value: raw } });
  }
  if (u.username !== '' || u.password !== '') {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', '--power-metrics must not carry credentials', { details: { field: 'power-metrics' } });
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (env['LMB_LOOPBACK_ONLY'] === '1' && !isLoopbackHost(host)) {
    throw new LmBenchError('LMB_ERR_ENDPOINT_NOT_LOOPBACK', `--power-metrics: ${host} is not a loopback address and LMB_LOOPBACK_ONLY=1 is set (tests and benchmarks only reach this machine)`, {
      details: { field: 'power-metrics', host },
    });
  }
  const path = u.pathname === '/' ? '/metrics' : `${u.pathname}${u.search}`;
  return { origin: u.origin, path, host, display: `${u.origin}${path}` };
}

export function createDcgmMeter(spec: DcgmSpec, env: Readonly<Record<string, string | undefined>>): PowerMeter {
  const targets = spec.urls.map((u) => parseMetricsUrl(u, env));
  const energy = new SeriesBuilder();
  const power = new SeriesBuilder();
  let pools: Pool[] = [];
  let clock: () => number = () => 0;
  let failure: string | null = null;
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<unknown> | null = null;
  let stopped: Promise<PowerReading> | null = null;
  const seenAsked = new Set<string>();

  const scrape = async (k: number): Promise<string | null> => {
    const t = targets[k] as MetricsUrl;
    const pool = pools[k] as Pool;
    const t0 = clock();
    // One deadline for the whole answer: an exporter that trickles bytes forever is as hung as a silent one.
    const ac = new AbortController();
    const deadline = setTimeout(() => ac.abort(), spec.timeout_ms);
    try {
      const res = await pool.request({ method: 'GET', path: t.path, headersTimeout: spec.timeout_ms, bodyTimeout: spec.timeout_ms, signal: ac.signal });
      const text = await res.body.text();
      if (res.statusCode !== 200) return `the DCGM exporter ${t.display} answered HTTP ${res.statusCode}`;
      const tS = (t0 + clock()) / 2;
      const seen = new Set<string>();
      for (const s of parsePrometheusSeries(text, NAMES)) {
        const gpu = s.labels['gpu'];
        if (gpu === undefined) continue;
        // --power-gpus names a GPU by the exporter's index or by its UUID.
        const asked = spec.gpus?.find((g) => g === gpu || g === s.labels['UUID']);
        if (spec.gpus !== undefined && asked === undefined) continue;
        if (asked !== undefined) seenAsked.add(asked);
        // host:port, not the host: two exporters tunnelled to one host are two nodes' GPUs.
        const key = targets.length > 1 ? `${t.origin}/${gpu}` : gpu;
        // Extra label sets for one GPU (pod attribution) repeat its reading: the first counts.
        if (seen.has(`${s.name}|${key}`)) continue;
        seen.add(`${s.name}|${key}`);
        if (s.name === DCGM_ENERGY) energy.add(key, tS, s.value / 1000);
        else power.add(key, tS, s.value);
      }
      if (seen.size > 0) return null;
      if (spec.gpus !== undefined && /\bgpu="/.test(text)) return `the DCGM exporter ${t.display} reports none of GPUs ${spec.gpus.join(', ')}`;
      return `${t.display} exports neither ${DCGM_ENERGY} nor ${DCGM_POWER} per GPU (is it a DCGM exporter? it answered ${JSON.stringify(text.slice(0, 80))})`;
    } catch (err) {
      const kind = ac.signal.aborted ? 'timeout' : classifyError(err);
      const why = kind === 'timeout' ? `did not answer within ${spec.timeout_ms} ms` : kind === 'connection_refused' ? 'refused the connection' : `failed: ${err instanceof Error ? err.message : String(err)}`;
      return `the DCGM exporter ${t.display} ${why}`;
    } finally {
      clearTimeout(deadline);
    }
  };
  const scrapeAll = async (): Promise<string | null> => (await Promise.all(targets.map((_, k) => scrape(k)))).find((e) => e !== null) ?? null;
  const release = async (): Promise<void> => {
    await Promise.all(pools.map((p) => p.destroy().catch(() => undefined)));
    pools = [];
  };

  return {
    source: 'dcgm-energy',
    async start(c) {
      clock = c;
      pools = targets.map((t) => openPool(t.origin, { ...DEFAULT_TRANSPORT, connectTimeoutMs: spec.timeout_ms }, 1));
      failure = await scrapeAll();
      if (failure !== null) {
        await release();
        return;
      }
      timer = setInterval(() => {
        // A slow scrape is not stacked on: the next tick waits for it.
        if (inFlight === null) inFlight = scrapeAll().finally(() => (inFlight = null));
      }, spec.interval_ms);
      timer.unref();
    },
    stop() {
      stopped ??= (async (): Promise<PowerReading> => {
        if (timer !== null) clearInterval(timer);
        if (failure !== null || pools.length === 0) return { ok: false, source: 'dcgm-energy', reason: failure ?? 'the DCGM exporter was never read' };
        if (inFlight !== null) await inFlight;
        const last = await scrapeAll();
        await release();
        // Every GPU asked for must be counted: a sum over fewer would pass for the deployment's.
        const missing = spec.gpus?.filter((g) => !seenAsked.has(g)) ?? [];
        if (missing.length > 0) return { ok: false, source: 'dcgm-energy', reason: `the DCGM exporter reports no GPU ${missing.join(', ')}` };
        return chooseSeries(energy.build('energy_j'), power.build('power_w'), last);
      })();
      return stopped;
    },
  };
}

const STALE = "the DCGM exporter's values did not change during the run: its collect interval (dcgm-exporter -c, 30000 ms by default) is longer than the run; start it with e.g. -c 1000";

const changes = (s: GpuSeries): boolean => s.values.some((v) => v !== s.values[0]);

/** The energy counter when every GPU has one that advanced; else the power gauge; else why neither serves. */
export function chooseSeries(energy: readonly GpuSeries[], power: readonly GpuSeries[], lastError: string | null): PowerReading {
  const gpus = new Set([...energy, ...power].map((s) => s.gpu));
  const counterOk = energy.length === gpus.size && energy.every((s) => s.values.length >= 2 && changes(s));
  if (counterOk) return { ok: true, source: 'dcgm-energy', series: energy };
  if (power.length === gpus.size && power.length > 0) {
    if (power.every((s) => s.values.length >= 2 && !changes(s)) && energy.every((s) => !changes(s))) return { ok: false, source: 'dcgm-power', reason: STALE };
    return { ok: true, source: 'dcgm-power', series: power };
  }
  if (energy.length > 0 && energy.every((s) => !changes(s))) return { ok: false, source: 'dcgm-energy', reason: STALE };
  return { ok: false, source: 'dcgm-energy', reason: lastError ?? 'the DCGM exporter did not report every GPU in every scrape' };
}
