import type { Catalog } from '../catalog/index.js';
import { withoutTraceData, type Study, type Trial } from '../domain/index.js';
import { isLmBenchError } from '../errors.js';
import type { RunFilter, RunRecord, Store } from '../store/index.js';
import type { ExportItem, SkippedTrial } from './types.js';

/**
 * The store's side of `export`: a study's trials, or the runs a filter selects, as ExportItems in a
 * stable order (trial number, run id). Reads only. The model's published name comes from the catalog
 * (registered specs included), so a report names `meta-llama/Llama-3.1-8B-Instruct`, not a catalog id.
 */

/** A study's complete trials; the rest are listed as skipped (nothing measured to write). Throws LMB_ERR_STUDY_NOT_FOUND. */
export function gatherStudy(store: Store, catalog: Catalog, name: string): { study: Study; items: ExportItem[]; skipped: SkippedTrial[] } {
  const study = store.getStudy(name);
  const items: ExportItem[] = [];
  const skipped: SkippedTrial[] = [];
  // A complete trial is also a run of the history (tune/history.ts), named by the study and trial number:
  // its dedupe key goes with the export, so ingesting the export back is recognised as that run.
  const recorded = new Map(store.listRuns({ sourceFormat: 'lm_bench' }).flatMap((r) => (r.source_path === null ? [] : [[r.source_path, r.content_hash] as const])));
  for (const t of store.listTrials(study.id)) {
    if (t.state === 'complete' && t.result !== null) items.push(trialItem(catalog, study, t, t.result, recorded.get(`study:${study.spec.name}#${t.number}`)));
    else skipped.push({ trial: t.number, state: t.state, reason: t.failure_reason ?? (t.state === 'complete' ? 'no result stored' : `the trial is ${t.state}`) });
  }
  return { study, items, skipped };
}

/** The runs a filter selects, oldest first. */
export function gatherRuns(store: Store, catalog: Catalog, filter: RunFilter): ExportItem[] {
  return store
    .listRuns(filter)
    .sort((a, b) => a.id - b.id)
    .map((r) => runItem(catalog, r));
}

function trialItem(catalog: Catalog, study: Study, t: Trial, result: NonNullable<Trial['result']>, contentHash: string | undefined): ExportItem {
  const spec = study.spec;
  // Typed, not parsed: the store returns what its schemas describe, and a re-parse would only add ways to fail.
  return {
    subject: { kind: 'trial', study: spec.name, study_id: study.id, trial: t.number, trial_id: t.id, ...(contentHash === undefined ? {} : { content_hash: contentHash }) },
    result,
    server_config: t.config,
    hardware: spec.hardware,
    model: spec.model,
    model_name: modelName(catalog, spec.model, spec.model_spec?.hf_name ?? result.model_id),
    // A trace study's spec carries every request of its trace: the report names the trace, not them.
    workload: withoutTraceData(spec.workload),
    workload_derived: false,
    // A trial's result is lm-bench's own measurement: every key of it was measured (or simulated).
    unavailable: [],
  };
}

function runItem(catalog: Catalog, r: RunRecord): ExportItem {
  return {
    subject: { kind: 'run', run_id: r.id, source_format: r.source_format, source_path: r.source_path, content_hash: r.content_hash },
    result: r.result,
    server_config: r.server_config,
    hardware: r.hardware,
    model: r.model,
    model_name: modelName(catalog, r.model, r.result.model_id),
    workload: r.workload,
    // ingest/derive-workload.ts notes a reconstruction with this prefix.
    workload_derived: r.workload !== null && r.meta.notes.some((n) => n.startsWith('workload derived')),
    unavailable: r.meta.unavailable,
  };
}

/** The catalog's Hugging Face name for a model id; else what the run recorded; else the id. */
function modelName(catalog: Catalog, id: string, recorded: string): string {
  try {
    return catalog.model(id).hf_name;
  } catch (err) {
    if (!isLmBenchError(err, 'LMB_ERR_UNKNOWN_MODEL')) throw err;
    return recorded !== '' ? recorded : id;
  }
}
