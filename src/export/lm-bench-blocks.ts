import type { ExportItem } from './types.js';

/**
 * lm-bench's figures that neither target format has a field for — the run's power and energy (all its
 * GPUs over its window) and the server's peaks — as the blocks both writers add under keys of their
 * own (`lm_bench_energy`, `lm_bench_server_metrics`): llm-d's Observability takes extra keys, and a
 * `vllm bench serve` result takes them as its `--metadata` adds them. lm-bench's ingest reads them
 * back (ingest/lm-bench-blocks.ts), so an exported run comes back whole. Pure.
 */
type Json = Record<string, unknown>;

const dropNull = (o: Json): Json => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined));

/** The energy block, or null when the run has no power or energy figure (none read, or none asked for). */
export function energyBlock(item: ExportItem): Json | null {
  const e = item.result.energy ?? null;
  // Any figure the block holds is written: ML.ENERGY states power and J/token but no energy total.
  if (e === null || (e.avg_power_w === null && e.energy_j === null && e.energy_per_output_token_j === null && e.output_tokens_per_joule === null)) return null;
  return dropNull({
    source: e.source,
    gpus: e.gpus,
    window: e.window,
    avg_power_w: e.avg_power_w,
    energy_j: e.energy_j,
    energy_per_output_token_j: e.energy_per_output_token_j,
    output_tokens_per_joule: e.output_tokens_per_joule,
  });
}

/** The server's peaks that were read, or null when none was. */
export function serverMetricsBlock(item: ExportItem): Json | null {
  const peaks = item.result.server_metrics === null ? {} : dropNull({ ...item.result.server_metrics });
  return Object.keys(peaks).length === 0 ? null : peaks;
}
