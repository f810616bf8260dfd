import type { Catalog } from '../catalog/index.js';
import { LmBenchError, isLmBenchError } from '../errors.js';
import { contentHash, parseFile, parseSidecar, resolveRun, storedRun, contextJudge, replacedNotes, type IngestContext, type StoredRun } from '../ingest/index.js';
import type { NewRun, RunOutcome, SourceFormat, Store } from '../store/store.js';
import type { IngestRequest } from './schemas.js';

/**
 * `POST /v1/runs`: every file of the body is parsed and given its context first; only when all of
 * them pass are their runs stored, in one transaction (`storeRuns`). A rejected body leaves the
 * store as it was, and the 400 names each rejected file with its code and reason. Figures already
 * stored under another GPU, count, model or server config reject the body, as `lm-bench ingest` does,
 * unless `replace` gives the stored runs this request's context.
 */
export interface IngestReply {
  readonly accepted: number;
  readonly skipped: number;
  readonly replaced: number;
  readonly files: { name: string; format: SourceFormat | null; runs: number; accepted: number; skipped: number; replaced_ids: number[]; run_ids: number[]; stored: StoredRun[]; warnings: string[] }[];
}

function bytesOf(content: IngestRequest['files'][number]['content']): Uint8Array {
  return new TextEncoder().encode(typeof content === 'string' ? content : JSON.stringify(content));
}

export function ingestBody(store: Store, catalog: Catalog, body: IngestRequest): IngestReply {
  const context: IngestContext = {
    ...(body.server_config === undefined ? {} : { serverConfig: body.server_config }),
    ...(body.gpu === undefined ? {} : { gpu: body.gpu }),
    ...(body.gpus === undefined ? {} : { gpus: body.gpus }),
    ...(body.model === undefined ? {} : { model: body.model }),
  };
  const rejected: { name: string; code: string; reason: string }[] = [];
  const prepared: { name: string; format: SourceFormat; rows: NewRun[]; warnings: string[] }[] = [];
  for (const file of body.files) {
    const warnings: string[] = [];
    try {
      const sidecar = file.sidecar_yaml === undefined ? null : parseSidecar(file.sidecar_yaml, `${file.name}.config.yaml`);
      const parsed = parseFile(file.name, bytesOf(file.content));
      warnings.push(...parsed.warnings);
      const rows = parsed.runs.map((run) =>
        resolveRun({ run, format: parsed.format, sourcePath: file.name, contentHash: run.contentHash ?? contentHash(run.record), sidecar, context, catalog, warnings }),
      );
      prepared.push({ name: file.name, format: parsed.format, rows, warnings });
    } catch (err) {
      if (isLmBenchError(err) && err.httpStatus >= 500) throw err;
      rejected.push({ name: file.name, code: isLmBenchError(err) ? err.code : 'LMB_ERR_INGEST_REJECTED', reason: err instanceof Error ? err.message : String(err) });
    }
  }
  if (rejected.length > 0) {
    const first = rejected[0];
    throw new LmBenchError('LMB_ERR_INGEST_REJECTED', `${rejected.length} of ${body.files.length} files rejected, nothing stored; first: ${first?.name ?? ''}: ${first?.reason ?? ''}`, {
      details: { field: 'files', rejected },
    });
  }
  let outcomes: RunOutcome[];
  try {
    outcomes = store.storeRuns(
      prepared.flatMap((p) => p.rows),
      { replace: body.replace === true, change: contextJudge(catalog) },
    );
  } catch (err) {
    if (!isLmBenchError(err, 'LMB_ERR_INGEST_REJECTED')) throw err;
    // A request that only repeats its own figures under two contexts has no stored run to replace.
    const stored = err.details['runs'];
    const hint = Array.isArray(stored) && stored.length === 0
      ? 'Send each run once, with the context it was measured under'
      : 'If this request\'s context is the right one, send it again with "replace": true (the stored runs keep their ids and figures and take this context)';
    throw new LmBenchError('LMB_ERR_INGEST_REJECTED', `${err.message}. ${hint}`, {
      details: { ...err.details, field: 'replace' },
      cause: err,
    });
  }
  let k = 0;
  const files = prepared.map((p) => {
    const mine = outcomes.slice(k, k + p.rows.length);
    k += p.rows.length;
    const runIds = mine.flatMap((o) => (o.status === 'new' ? [o.id] : []));
    const replaced = mine.flatMap((o) => (o.status === 'replaced' ? [o] : []));
    const stored = p.rows.map((row, i) => storedRun(row, mine[i]?.id ?? null));
    const warnings = [...p.warnings, ...replacedNotes(replaced)];
    // As `lm-bench ingest` counts them: a replaced run was already stored, so it is among the skipped.
    const skipped = mine.length - runIds.length;
    return { name: p.name, format: p.format, runs: mine.length, accepted: runIds.length, skipped, replaced_ids: replaced.map((r) => r.id), run_ids: runIds, stored, warnings };
  });
  const sum = (f: (x: (typeof files)[number]) => number): number => files.reduce((s, x) => s + f(x), 0);
  return { accepted: sum((f) => f.accepted), skipped: sum((f) => f.skipped), replaced: sum((f) => f.replaced_ids.length), files };
}
