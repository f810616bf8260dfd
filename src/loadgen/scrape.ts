import type { RunEvidence, ServerMetrics } from '../domain/index.js';
import { ENGINE_METRICS, KEPT_SERIES, detectEngine } from '../diagnose/engines.js';
import { pickMetric as pick, scrapesEngine, type Scrape } from '../diagnose/evidence.js';
import { authHeaders, openPool, type Transport } from './transport.js';

/**
 * The server's Prometheus `/metrics`, scraped before, every half second during, and after a run, and
 * reduced to the `server_metrics` block (and, in diagnose/evidence.ts, to the run's evidence), in the
 * names of the engine it recognises (diagnose/engines.ts: vLLM, SGLang, llama.cpp, TGI). vLLM's old
 * and new names are both read (docs/references/load-runners.md#vllm-prometheus-metrics: `gpu_cache_usage_perc` became `kv_cache_usage_perc` in
 * 0.9.2; `gpu_prefix_cache_*` became `prefix_cache_*`). Series with several label sets (one per DP
 * engine) are summed, except KV usage, whose peak is per engine. A server without `/metrics`, or with
 * none of those series, gives no block (never one of nulls) and says which it was.
 */
export type Sample = Scrape;

/** One sample line of a Prometheus text exposition: name, the raw `{…}` label text (without braces), value. */
interface PromLine {
  readonly name: string;
  readonly labelText: string;
  readonly value: number;
}

function promLine(raw: string): PromLine | null {
  const line = raw.trim();
  if (line === '' || line.startsWith('#')) return null;
  let nameEnd = line.search(/[{\s]/);
  if (nameEnd < 0) return null;
  const name = line.slice(0, nameEnd);
  let labelText = '';
  if (line[nameEnd] === '{') {
    const close = labelsEnd(line, nameEnd + 1);
    if (close < 0) return null;
    labelText = line.slice(nameEnd + 1, close);
    nameEnd = close + 1;
  }
  const value = Number(line.slice(nameEnd).trim().split(/\s+/)[0]);
  return Number.isFinite(value) ? { name, labelText, value } : null;
}

/** Index of the `}` closing a label set that starts at `from`, skipping quoted values (which may hold `}`). */
function labelsEnd(line: string, from: number): number {
  let quoted = false;
  for (let i = from; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '}') return i;
  }
  return -1;
}

/** Prometheus text exposition → metric name → the values of its series (labels dropped). */
export function parsePrometheus(text: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const raw of text.split('\n')) {
    const p = promLine(raw);
    if (p === null) continue;
    const list = out.get(p.name);
    if (list === undefined) out.set(p.name, [p.value]);
    else list.push(p.value);
  }
  return out;
}

/** A series with its labels, for the readers that tell series apart (a DCGM exporter's one per GPU). */
export interface PromSeries {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/**
 * The series of the named metrics, labels kept. Same line grammar as parsePrometheus; only the named
 * metrics have their labels parsed, so a large exposition costs little more than the plain parse.
 */
export function parsePrometheusSeries(text: string, names: ReadonlySet<string>): PromSeries[] {
  const out: PromSeries[] = [];
  for (const raw of text.split('\n')) {
    const p = promLine(raw);
    if (p !== null && names.has(p.name)) out.push({ name: p.name, labels: parseLabels(p.labelText), value: p.value });
  }
  return out;
}

/** `a="1",b="x\"y"` → { a: '1', b: 'x"y' } (the exposition format's escapes: \\, \", \n). */
export function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?/gy;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    out[m[1] as string] = (m[2] as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return out;
}

const sum = (xs: readonly number[] | undefined): number | null => (xs === undefined ? null : xs.reduce((a, b) => a + b, 0));
const max = (xs: readonly number[] | undefined): number | null => (xs === undefined || xs.length === 0 ? null : Math.max(...xs));

const PC_HITS = ['vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total', 'vllm:prefix_cache_hits'];
const PC_QUERIES = ['vllm:prefix_cache_queries_total', 'vllm:gpu_prefix_cache_queries_total', 'vllm:prefix_cache_queries'];
/** The series a run keeps from each scrape (the rest of a vLLM exposition is dropped on arrival). */
const KEPT = new Set<string>([...KEPT_SERIES, ...PC_HITS, ...PC_QUERIES]);

/** Peak over the scrapes of gauges, deltas (after − before) of counters. */
export function summarizeScrapes(samples: readonly Sample[]): ServerMetrics | null {
  const engine = scrapesEngine(samples);
  if (samples.length === 0 || engine === null) return null;
  const METRIC = ENGINE_METRICS[engine];
  const first = samples[0] as Sample;
  const last = samples[samples.length - 1] as Sample;
  const peak = (names: readonly string[], reduce: (xs: readonly number[] | undefined) => number | null): number | null => {
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
  const kv = peak(METRIC.kvUsage, max);
  const out: ServerMetrics = {
    kv_cache_usage_peak: kv === null ? null : Math.min(1, Math.max(0, kv)),
    kv_cache_peak_gib: null,
    kv_cache_capacity_tokens: null,
    gpu_memory_reserved_gib: null,
    num_preemptions: delta(METRIC.preemptions),
    num_requests_running_peak: peak(METRIC.running, sum),
    num_requests_waiting_peak: peak(METRIC.waiting, sum),
    prefix_cache_hit_rate: hits !== null && queries !== null && queries > 0 ? Math.min(1, hits / queries) : null,
  };
  return Object.values(out).every((v) => v === null) ? null : out;
}

type ScrapePool = ReturnType<typeof openPool>;

/** One GET of /metrics, cut to the series a run keeps; null when the server has none. */
export async function scrapeOnce(pool: ScrapePool, t: Transport, timeoutMs = 2000, path = '/metrics'): Promise<Scrape | null> {
  const all = await scrapeAll(pool, t, timeoutMs, path);
  return all === null ? null : keptOf(all);
}

/** One GET of /metrics, every series; null when the server has none. */
async function scrapeAll(pool: ScrapePool, t: Transport, timeoutMs = 2000, path = '/metrics'): Promise<Map<string, number[]> | null> {
  try {
    const res = await pool.request({ method: 'GET', path, headers: authHeaders(t), headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    const text = await res.body.text();
    if (res.statusCode !== 200) return null;
    const parsed = parsePrometheus(text);
    return parsed.size === 0 ? null : parsed;
  } catch {
    return null;
  }
}

function keptOf(parsed: Map<string, number[]>): Scrape {
  for (const name of parsed.keys()) if (!KEPT.has(name)) parsed.delete(name);
  return parsed;
}

export interface Scraped {
  /** Peaks and counter deltas (the result's `server_metrics`). */
  readonly serverMetrics: ServerMetrics | null;
  /** Every scrape, in order, for the run's evidence (diagnose/evidence.ts). */
  readonly scrapes: readonly Scrape[];
  /** When each was taken (performance.now(), ms). */
  readonly timesMs: readonly number[];
  /** What /metrics was: the engine recognised, `unrecognised`, or `absent`. */
  readonly metrics: NonNullable<RunEvidence['metrics']>;
}

export interface Scraper {
  /** Stops the periodic scrape, takes the final one, and reduces them all. */
  stop(): Promise<Scraped>;
}

/**
 * Takes the "before" scrape, then one every `intervalMs` (500 ms: a short run still gives the
 * diagnosis a few points of its queue), then the "after"; a server without /metrics costs one failed GET.
 */
export async function startScraper(origin: string, t: Transport, intervalMs = 500, paths: readonly string[] = ['/metrics']): Promise<Scraper> {
  const samples: Sample[] = [];
  // Its own connection, so a scrape never waits behind the load's streams.
  const pool = openPool(origin, t, 1);
  const close = (): Promise<void> => pool.close().catch(() => pool.destroy());
  // The first of the places /metrics may be (routes.ts metricsPathsOf) that answers is the one kept.
  let path = '/metrics';
  let first: Map<string, number[]> | null = null;
  for (const p of paths) {
    first = await scrapeAll(pool, t, 2000, p);
    path = p;
    if (first !== null) break;
  }
  if (first === null) {
    await close();
    return { stop: () => Promise.resolve({ serverMetrics: null, scrapes: [], timesMs: [], metrics: 'absent' }) };
  }
  // Whose names the server speaks, from the whole first exposition (the kept series are only ours).
  const engine = detectEngine(first.keys());
  const before = keptOf(first);
  const timesMs: number[] = [];
  const keep = (s: Sample): void => {
    samples.push(s);
    timesMs.push(performance.now());
  };
  keep(before);
  let inFlight: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (inFlight !== null) return;
    inFlight = scrapeOnce(pool, t, 2000, path).then((s) => {
      if (s !== null) keep(s);
      inFlight = null;
    });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      if (inFlight !== null) await inFlight;
      const after = await scrapeOnce(pool, t, 2000, path);
      if (after !== null) keep(after);
      await close();
      const serverMetrics = summarizeScrapes(samples);
      return { serverMetrics, scrapes: samples, timesMs, metrics: engine === null || serverMetrics === null ? 'unrecognised' : engine };
    },
  };
}
