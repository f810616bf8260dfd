import type { ServerMetrics } from '../domain/index.js';
import { authHeaders, openPool, type Transport } from './transport.js';

/**
 * vLLM's Prometheus `/metrics`, scraped before, every second during, and after a run, and reduced to
 * the `server_metrics` block. Old and new names are both read (reference §6.3: `gpu_cache_usage_perc`
 * became `kv_cache_usage_perc` in 0.9.2; `gpu_prefix_cache_*` became `prefix_cache_*`). Series with
 * several label sets (one per DP engine) are summed, except KV usage, whose peak is per engine. A
 * server without `/metrics` just gives no block.
 */
export type Sample = ReadonlyMap<string, number[]>;

/** Prometheus text exposition → metric name → the values of its series (labels dropped). */
export function parsePrometheus(text: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    let nameEnd = line.search(/[{\s]/);
    if (nameEnd < 0) continue;
    const name = line.slice(0, nameEnd);
    if (line[nameEnd] === '{') {
      const close = line.indexOf('}', nameEnd);
      if (close < 0) continue;
      nameEnd = close + 1;
    }
    const value = Number(line.slice(nameEnd).trim().split(/\s+/)[0]);
    if (!Number.isFinite(value)) continue;
    const list = out.get(name);
    if (list === undefined) out.set(name, [value]);
    else list.push(value);
  }
  return out;
}

function pick(s: Sample, names: readonly string[]): number[] | undefined {
  for (const n of names) {
    const v = s.get(n);
    if (v !== undefined) return v;
  }
  return undefined;
}
const sum = (xs: number[] | undefined): number | null => (xs === undefined ? null : xs.reduce((a, b) => a + b, 0));
const max = (xs: number[] | undefined): number | null => (xs === undefined || xs.length === 0 ? null : Math.max(...xs));

const KV_USAGE = ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'];
const PREEMPT = ['vllm:num_preemptions_total', 'vllm:num_preemptions'];
const RUNNING = ['vllm:num_requests_running'];
const WAITING = ['vllm:num_requests_waiting'];
const PC_HITS = ['vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total', 'vllm:prefix_cache_hits'];
const PC_QUERIES = ['vllm:prefix_cache_queries_total', 'vllm:gpu_prefix_cache_queries_total', 'vllm:prefix_cache_queries'];

/** Peak over the scrapes of gauges, deltas (after − before) of counters. */
export function summarizeScrapes(samples: readonly Sample[]): ServerMetrics | null {
  if (samples.length === 0) return null;
  const first = samples[0] as Sample;
  const last = samples[samples.length - 1] as Sample;
  const peak = (names: readonly string[], reduce: (xs: number[] | undefined) => number | null): number | null => {
    let best: number | null = null;
    for (const s of samples) {
      const v = reduce(pick(s, names));
      if (v !== null && (best === null || v > best)) best = v;
    }
    return best;
  };
  const delta = (names: readonly string[]): number | null => {
    const a = sum(pick(first, names));
    const b = sum(pick(last, names));
    return a === null || b === null ? null : Math.max(0, b - a);
  };
  const hits = delta(PC_HITS);
  const queries = delta(PC_QUERIES);
  const kv = peak(KV_USAGE, max);
  return {
    kv_cache_usage_peak: kv === null ? null : Math.min(1, Math.max(0, kv)),
    kv_cache_peak_gib: null,
    kv_cache_capacity_tokens: null,
    gpu_memory_reserved_gib: null,
    num_preemptions: delta(PREEMPT),
    num_requests_running_peak: peak(RUNNING, sum),
    num_requests_waiting_peak: peak(WAITING, sum),
    prefix_cache_hit_rate: hits !== null && queries !== null && queries > 0 ? Math.min(1, hits / queries) : null,
  };
}

type ScrapePool = ReturnType<typeof openPool>;

export async function scrapeOnce(pool: ScrapePool, t: Transport, timeoutMs = 2000): Promise<Map<string, number[]> | null> {
  try {
    const res = await pool.request({ method: 'GET', path: '/metrics', headers: authHeaders(t), headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    const text = await res.body.text();
    if (res.statusCode !== 200) return null;
    const parsed = parsePrometheus(text);
    return parsed.size === 0 ? null : parsed;
  } catch {
    return null;
  }
}

export interface Scraper {
  /** Stops the periodic scrape, takes the final one, and reduces them all. */
  stop(): Promise<ServerMetrics | null>;
}

/** Takes the "before" scrape, then one a second; a server without /metrics costs one failed GET. */
export async function startScraper(origin: string, t: Transport, intervalMs = 1000): Promise<Scraper> {
  const samples: Sample[] = [];
  // Its own connection, so a scrape never waits behind the load's streams.
  const pool = openPool(origin, t, 1);
  const close = (): Promise<void> => pool.close().catch(() => pool.destroy());
  const before = await scrapeOnce(pool, t);
  if (before === null) {
    await close();
    return { stop: () => Promise.resolve(null) };
  }
  samples.push(before);
  let inFlight: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (inFlight !== null) return;
    inFlight = scrapeOnce(pool, t).then((s) => {
      if (s !== null) samples.push(s);
      inFlight = null;
    });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      if (inFlight !== null) await inFlight;
      const after = await scrapeOnce(pool, t);
      if (after !== null) samples.push(after);
      await close();
      return summarizeScrapes(samples);
    },
  };
}
