import { z } from 'zod';
import { EnergySource, EnergyWindow, ServerMetrics, type BenchmarkResult, type Energy } from '../domain/index.js';
import { parseRaw } from './draft.js';

/**
 * The blocks lm-bench's export adds where a format has no field of its own (export/lm-bench-blocks.ts):
 * `lm_bench_energy` (the run's power and energy, all its GPUs over its window) and
 * `lm_bench_server_metrics` (the server's peaks), in an llm-d report's `results.observability` or at the
 * top of a `vllm bench serve` result. Read back so an exported run comes back whole. They do not pass
 * through the draft's checks, so each figure is checked here: one outside its range rejects the file,
 * as any broken measurement does.
 */
const nonNeg = z.number().nonnegative().nullable().optional();
const ExportedEnergy = z.looseObject({
  source: EnergySource,
  gpus: z.int().positive(),
  window: EnergyWindow.nullable().optional(),
  avg_power_w: nonNeg,
  energy_j: nonNeg,
  energy_per_output_token_j: nonNeg,
  output_tokens_per_joule: nonNeg,
});
const ExportedServerMetrics = z.looseObject(ServerMetrics.partial().shape);

export type LmBenchBlocks = Partial<Pick<BenchmarkResult, 'energy' | 'server_metrics'>>;

/** `where` names the blocks' parent in a rejection ("document: results.observability"). */
export function lmBenchBlocks(energyRaw: unknown, peaksRaw: unknown, where: string): LmBenchBlocks {
  const out: LmBenchBlocks = {};
  if (energyRaw !== undefined && energyRaw !== null) {
    const e = parseRaw(ExportedEnergy, energyRaw, `${where}.lm_bench_energy`);
    const energy: Energy = {
      source: e.source,
      gpus: e.gpus,
      window: e.window ?? null,
      avg_power_w: e.avg_power_w ?? null,
      energy_j: e.energy_j ?? null,
      energy_per_output_token_j: e.energy_per_output_token_j ?? null,
      output_tokens_per_joule: e.output_tokens_per_joule ?? null,
      unavailable_reason: null,
    };
    out.energy = energy;
  }
  if (peaksRaw !== undefined && peaksRaw !== null) {
    const p = parseRaw(ExportedServerMetrics, peaksRaw, `${where}.lm_bench_server_metrics`);
    out.server_metrics = {
      kv_cache_usage_peak: p.kv_cache_usage_peak ?? null,
      kv_cache_peak_gib: p.kv_cache_peak_gib ?? null,
      kv_cache_capacity_tokens: p.kv_cache_capacity_tokens ?? null,
      gpu_memory_reserved_gib: p.gpu_memory_reserved_gib ?? null,
      num_preemptions: p.num_preemptions ?? null,
      num_requests_running_peak: p.num_requests_running_peak ?? null,
      num_requests_waiting_peak: p.num_requests_waiting_peak ?? null,
      prefix_cache_hit_rate: p.prefix_cache_hit_rate ?? null,
    };
  }
  return out;
}
