import { spawn } from 'node:child_process';
import type { PowerMeter, PowerReading, PowerSpec } from './types.js';
import { SeriesBuilder, spawnFailure, tail } from './types.js';

/**
 * Power from `amd-smi metric --power --json` (ROCm's AMD SMI CLI), polled: one process per reading,
 * stamped at the middle of its run on the run's clock. Its JSON is a list with one object per GPU
 * (newer releases wrap it as `{"gpu_data": [...]}`), each `{"gpu": 0, "power": {"socket_power":
 * {"value": 142, "unit": "W"}, …}}`; a value it cannot read is "N/A". Older releases name the field
 * `average_socket_power` or `current_socket_power`. amd-smi may print a warning line before the JSON.
 */
type AmdSpec = Extract<PowerSpec, { kind: 'amd-smi' }>;

export function amdSmiArgv(spec: AmdSpec): string[] {
  return ['metric', '--power', '--json', ...(spec.gpus === undefined ? [] : ['-g', ...spec.gpus])];
}

const WATTS_PER: Record<string, number> = { w: 1, mw: 1e-3, uw: 1e-6, 'µw': 1e-6 };

/** amd-smi's JSON → GPU id → watts (null where it printed N/A); throws a reason when it is not that JSON. */
export function parseAmdSmiPower(text: string): Map<string, number | null> {
  const start = text.search(/^\s*[[{]/m);
  if (start < 0) throw new Error(`no JSON in its output: ${tail(text, 120)}`);
  let doc: unknown;
  try {
    doc = JSON.parse(text.slice(start));
  } catch {
    throw new Error(`its output is not JSON: ${tail(text, 120)}`);
  }
  const list = Array.isArray(doc) ? doc : isObj(doc) && Array.isArray(doc['gpu_data']) ? doc['gpu_data'] : null;
  if (list === null) throw new Error('its JSON holds no list of GPUs');
  const out = new Map<string, number | null>();
  for (const g of list) {
    if (!isObj(g) || (typeof g['gpu'] !== 'number' && typeof g['gpu'] !== 'string') || !isObj(g['power'])) continue;
    const p = g['power'];
    out.set(String(g['gpu']), watts(p['socket_power'] ?? p['average_socket_power'] ?? p['current_socket_power']));
  }
  if (out.size === 0) throw new Error('its JSON has no GPU with a power block');
  return out;
}

function watts(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? v : null;
  if (!isObj(v)) return null;
  const value = typeof v['value'] === 'number' ? v['value'] : Number(v['value']);
  const per = WATTS_PER[(typeof v['unit'] === 'string' ? v['unit'] : 'W').toLowerCase()];
  return per === undefined || !Number.isFinite(value) || value < 0 ? null : value * per;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Poll {
  readonly out: string;
  readonly err: string;
  readonly code: number | null;
  readonly failure: string | null;
}

function runOnce(spec: AmdSpec, env: Readonly<Record<string, string | undefined>>, timeoutMs: number): Promise<Poll> {
  return new Promise((resolve) => {
    let out = '';
    let err = '';
    let child;
    try {
      child = spawn(spec.executable, amdSmiArgv(spec), { env, stdio: ['ignore', 'pipe', 'pipe'], shell: false });
    } catch (e) {
      resolve({ out, err, code: null, failure: spawnFailure(spec.executable, e) });
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve({ out, err, code: null, failure: spawnFailure(spec.executable, e) });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ out, err, code, failure: signal === 'SIGKILL' ? `${spec.executable} did not answer within ${timeoutMs} ms` : null });
    });
  });
}

export function createAmdSmiMeter(spec: AmdSpec, deps: { readonly env: Readonly<Record<string, string | undefined>>; readonly pollTimeoutMs?: number }): PowerMeter {
  const series = new SeriesBuilder();
  const naGpus = new Set<string>();
  let clock: () => number = () => 0;
  let failure: string | null = null;
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  let stopped: Promise<PowerReading> | null = null;

  /** One reading; returns why it failed, or null. */
  const poll = async (): Promise<string | null> => {
    const t0 = clock();
    const r = await runOnce(spec, deps.env, deps.pollTimeoutMs ?? 5000);
    const tS = (t0 + clock()) / 2;
    if (r.failure !== null) return r.failure;
    if (r.code !== 0) return `${spec.executable} exited ${r.code ?? '?'}: ${tail(r.err || r.out)}`;
    try {
      for (const [gpu, w] of parseAmdSmiPower(r.out)) {
        if (w === null) naGpus.add(gpu);
        else series.add(gpu, tS, w);
      }
      return null;
    } catch (e) {
      return `${spec.executable} metric --power --json: ${(e as Error).message}`;
    }
  };

  return {
    source: 'amd-smi',
    async start(c) {
      clock = c;
      failure = await poll();
      if (failure !== null) return;
      timer = setInterval(() => {
        if (inFlight === null) inFlight = poll().then(() => undefined).finally(() => (inFlight = null));
      }, spec.interval_ms);
      timer.unref();
    },
    stop() {
      stopped ??= (async (): Promise<PowerReading> => {
        if (timer !== null) clearInterval(timer);
        if (failure !== null) return { ok: false, source: 'amd-smi', reason: failure };
        if (inFlight !== null) await inFlight;
        const last = await poll();
        const built = series.build('power_w');
        const missing = [...naGpus].filter((g) => !built.some((s) => s.gpu === g));
        if (missing.length > 0) return { ok: false, source: 'amd-smi', reason: `${spec.executable} reports socket power as N/A for GPU ${missing.join(', ')}` };
        if (built.length === 0) return { ok: false, source: 'amd-smi', reason: last ?? `${spec.executable} reported no power` };
        return { ok: true, source: 'amd-smi', series: built };
      })();
      return stopped;
    },
  };
}
