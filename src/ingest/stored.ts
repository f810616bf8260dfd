import { z } from 'zod';
import type { Catalog } from '../catalog/index.js';
import type { ServerConfig } from '../domain/index.js';
import { resolveConfig } from '../physics/index.js';
import { contextChange, describeContext, runMetric, type NewRun, type RunContext } from '../store/index.js';

/**
 * What ingest says it stored, per run (`lm-bench ingest --json` → `files[].stored`, and the table the
 * text output prints): the run's id — the new one, or for a run skipped as already stored the id it
 * has in the history — and the headline figures as stored, null where the file has no such figure
 * (the key is in the run's `meta.unavailable`), so a user sees at once what went in.
 */
export const StoredRun = z.strictObject({
  run_id: z.int().positive().nullable(),
  completed: z.number().nullable(),
  failed: z.number().nullable(),
  duration_s: z.number().nullable(),
  mean_ttft_ms: z.number().nullable(),
  output_throughput: z.number().nullable(),
});
export type StoredRun = z.infer<typeof StoredRun>;

export function storedRun(row: NewRun, runId: number | null): StoredRun {
  const run = { result: row.result, meta: row.meta ?? { unavailable: [], percentile_method: 'linear' as const, notes: [] } };
  return {
    run_id: runId,
    completed: runMetric(run, 'completed'),
    failed: runMetric(run, 'failed'),
    duration_s: runMetric(run, 'duration'),
    mean_ttft_ms: runMetric(run, 'mean_ttft_ms'),
    output_throughput: runMetric(run, 'output_throughput'),
  };
}

/** One note per run whose context `--replace` replaced: what it was. */
export function replacedNotes(replaced: readonly { readonly id: number; readonly was: RunContext }[]): string[] {
  return replaced.map((r) => `run #${r.id} already held these figures under another context, replaced by this ingest's (--replace): it was ${describeContext(r.was)}`);
}

/**
 * How ingest tells two contexts of the same figures apart (`store.storeRuns`' `change`): GPU, GPU count
 * and model as named; the server config as vLLM runs it on that GPU and model (physics/resolve.ts), so
 * an unset knob and the same knob set to vLLM's default are one config (an llm-d report states
 * `tensor_parallel_size: 1` where the run it was exported from left it unset). The difference is told
 * with the knobs as written, those whose resolved value differs.
 */
export function contextJudge(catalog: Catalog): (stored: RunContext, given: RunContext) => string | null {
  return (stored, given) => {
    const literal = contextChange(stored, given, 'this ingest');
    if (literal === null) return null;
    if (stored.hardware.gpu !== given.hardware.gpu || stored.hardware.count !== given.hardware.count || stored.model !== given.model) return literal;
    let keys: string[];
    try {
      const hw = catalog.gpu(stored.hardware.gpu);
      const model = catalog.model(stored.model);
      const a: Record<string, unknown> = resolveConfig(stored.server_config, hw, model);
      const b: Record<string, unknown> = resolveConfig(given.server_config, hw, model);
      keys = Object.keys(a).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
    } catch {
      // A GPU or model this catalog cannot price: the configs as written.
      return literal;
    }
    if (keys.length === 0) return null;
    const only = (c: ServerConfig): ServerConfig => Object.fromEntries(Object.entries(c).filter(([k]) => keys.includes(k)));
    return contextChange({ ...stored, server_config: only(stored.server_config) }, { ...given, server_config: only(given.server_config) }, 'this ingest') ?? literal;
  };
}
