import { z } from 'zod';
import { runMetric, type NewRun, type SourceFormat, type Store } from '../store/index.js';

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

/**
 * One entry per row: its new id, or for a duplicate the id of the stored run with the same content
 * hash (looked up among the runs of that format only when the batch had duplicates).
 */
export function storedRuns(store: Store, rows: readonly NewRun[], ids: readonly (number | 'duplicate')[], format: SourceFormat): StoredRun[] {
  let existing: Map<string, number> | null = null;
  return rows.map((row, i) => {
    const id = ids[i];
    if (typeof id === 'number') return storedRun(row, id);
    existing ??= new Map(store.listRuns({ sourceFormat: format }).map((r) => [r.content_hash, r.id]));
    return storedRun(row, existing.get(row.contentHash) ?? null);
  });
}
