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
    // An export of a run is the run it came from, stored under its own source's format.
    if (!existing.has(row.contentHash)) for (const r of store.listRuns({})) existing.set(r.content_hash, r.id);
    return storedRun(row, existing.get(row.contentHash) ?? null);
  });
}

/**
 * Runs skipped as already stored whose stored context (GPU, GPU count, model, server config) differs
 * from the one this ingest gave them: the dedupe key is the file's figures alone, so re-ingesting a file
 * with a corrected `--gpu` or `--model` changes nothing, and without a word the user would believe it
 * did. One note per difference, naming the runs and what they keep.
 */
export function contextNotes(store: Store, rows: readonly NewRun[], ids: readonly (number | 'duplicate')[], stored: readonly StoredRun[]): string[] {
  const byChange = new Map<string, number[]>();
  for (const [i, row] of rows.entries()) {
    // A run this ingest stored has the context it was given; only a skipped one may keep another.
    const id = ids[i] === 'duplicate' ? stored[i]?.run_id : null;
    if (id === null || id === undefined) continue;
    const prev = store.getRun(id);
    const diffs: string[] = [];
    const was = `${prev.hardware.count}× ${prev.hardware.gpu}`;
    const now = `${row.hardware.count}× ${row.hardware.gpu}`;
    if (was !== now) diffs.push(`GPUs ${was} (this ingest: ${now})`);
    if (prev.model !== row.model) diffs.push(`model ${prev.model} (this ingest: ${row.model})`);
    const knobs = [...new Set([...Object.keys(prev.server_config), ...Object.keys(row.serverConfig)])].sort();
    // Knob values are scalars (ServerConfig); JSON.stringify keeps anything else readable all the same.
    const cfg = (c: Readonly<Record<string, unknown>>, k: string): string => {
      const x = c[k];
      return x === undefined ? 'unset' : typeof x === 'string' ? x : JSON.stringify(x);
    };
    const changed = knobs.filter((k) => cfg(prev.server_config, k) !== cfg(row.serverConfig, k));
    if (changed.length > 0) diffs.push(`${changed.map((k) => `${k}=${cfg(prev.server_config, k)}`).join(' ')} (this ingest: ${changed.map((k) => `${k}=${cfg(row.serverConfig, k)}`).join(' ')})`);
    if (diffs.length === 0) continue;
    const key = diffs.join(', ');
    byChange.set(key, [...(byChange.get(key) ?? []), id]);
  }
  return [...byChange].map(
    ([change, ids]) => `already stored with another context, kept as first stored: run${ids.length === 1 ? '' : 's'} ${ids.map((i) => `#${i}`).join(', ')} ${ids.length === 1 ? 'has' : 'have'} ${change}`,
  );
}
