import type { Energy } from '../domain/index.js';
import { isObject } from './vllm-serve.js';

/**
 * Power kept from an AIPerf export (`profile_export_aiperf.json`) made with `--gpu-telemetry`: the
 * per-vendor totals AIPerf derives over its profiling window (`nvidia_total_gpu_energy` J,
 * `nvidia_average_gpu_power` W, `nvidia_energy_per_output_token` mJ/token, `nvidia_output_tokens_per_joule`;
 * `amd_*` alike), and `telemetry_data.endpoints.*.gpus.*` for the GPU count and, without totals, each
 * GPU's average power (`nvidia_power_usage`, before schema 1.5 `gpu_power_usage`; `amd_power`), summed.
 * Only figures the file states are kept (a figure and its reciprocal count as stated); the window is
 * AIPerf's, not on lm-bench's clock, so it is left null. A file without telemetry yields nothing.
 */
const VENDORS = ['nvidia', 'amd'] as const;
const GPU_POWER: Record<(typeof VENDORS)[number], readonly string[]> = {
  nvidia: ['nvidia_power_usage', 'gpu_power_usage', 'power_usage'],
  amd: ['amd_power', 'amd_power_usage'],
};
/** Units → factor to the base unit; negative: a divisor (so 700 mJ/token is 0.7 J exactly, not 0.7000000000000001). */
const SCALE: Record<string, number> = { w: 1, kw: 1e3, mw: -1e3, j: 1, kj: 1e3, 'mj/token': -1e3, 'j/token': 1, 'tokens/j': 1 };

/** A metric block's `avg` in base units (W, J, J/token, tokens/J), or undefined when absent or not a finite, known-unit figure. */
function stat(block: unknown, defaultUnit: string): number | undefined {
  if (!isObject(block) || typeof block['avg'] !== 'number' || !Number.isFinite(block['avg']) || block['avg'] < 0) return undefined;
  const unit = typeof block['unit'] === 'string' ? block['unit'].trim() : defaultUnit;
  // "MJ" is megajoules and "mJ" millijoules: case matters for energy, not for the rest.
  if (unit === 'MJ') return block['avg'] * 1e6;
  if (unit === 'mJ') return block['avg'] / 1e3;
  const f = SCALE[unit.toLowerCase()];
  return f === undefined ? undefined : f < 0 ? block['avg'] / -f : block['avg'] * f;
}

/** The GPUs of a vendor in `telemetry_data`, each with its average power when the file gives it. */
function telemetryGpus(raw: Record<string, unknown>, vendor: (typeof VENDORS)[number]): (number | undefined)[] {
  const endpoints = isObject(raw['telemetry_data']) ? raw['telemetry_data']['endpoints'] : undefined;
  if (!isObject(endpoints)) return [];
  const out: (number | undefined)[] = [];
  for (const ep of Object.values(endpoints)) {
    const gpus = isObject(ep) ? ep['gpus'] : undefined;
    if (!isObject(gpus)) continue;
    for (const g of Object.values(gpus)) {
      if (!isObject(g) || !isObject(g['metrics'])) continue;
      const platform = typeof g['platform'] === 'string' ? g['platform'] : 'nvidia';
      if (platform !== vendor) continue;
      const m = g['metrics'];
      const name = GPU_POWER[vendor].find((k) => k in m);
      out.push(name === undefined ? undefined : stat(m[name], 'W'));
    }
  }
  return out;
}

export function aiperfEnergy(raw: Record<string, unknown>, notes: string[]): Energy | undefined {
  for (const v of VENDORS) {
    const gpus = telemetryGpus(raw, v);
    const energyJ = stat(raw[`${v}_total_gpu_energy`], 'J');
    const totalW = stat(raw[`${v}_average_gpu_power`], 'W') ?? stat(raw[`${v}_total_gpu_power`], 'W');
    const perGpuW = gpus.length > 0 && gpus.every((w) => w !== undefined) ? gpus.reduce((a: number, w) => a + (w ?? 0), 0) : undefined;
    const avgW = totalW ?? perGpuW;
    if (energyJ === undefined && avgW === undefined) continue;
    if (gpus.length === 0) {
      notes.push(`AIPerf ${v} power totals left out: telemetry_data names no GPU, so their count is unknown`);
      return undefined;
    }
    let perToken = stat(raw[`${v}_energy_per_output_token`], 'mJ/token');
    let perJoule = stat(raw[`${v}_output_tokens_per_joule`], 'tokens/J');
    if (perToken === undefined && perJoule !== undefined && perJoule > 0) perToken = 1 / perJoule;
    if (perJoule === undefined && perToken !== undefined && perToken > 0) perJoule = 1 / perToken;
    notes.push(`energy from AIPerf GPU telemetry (${v}, ${gpus.length} GPU${gpus.length === 1 ? '' : 's'}${totalW === undefined ? ', power = sum of per-GPU averages' : ''})`);
    return {
      source: 'ingest',
      gpus: gpus.length,
      window: null,
      avg_power_w: avgW ?? null,
      energy_j: energyJ ?? null,
      energy_per_output_token_j: perToken ?? null,
      output_tokens_per_joule: perJoule ?? null,
      unavailable_reason: null,
    };
  }
  return undefined;
}
