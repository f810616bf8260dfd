import type { Catalog } from '../catalog/index.js';
import { LmBenchError, isLmBenchError } from '../errors.js';
import { contentHash, parseFile, parseSidecar, resolveRun, storedRuns, contextNotes, type IngestContext, type StoredRun } from '../ingest/index.js';
import type { NewRun, SourceFormat, Store } from '../store/store.js';
import type { IngestRequest } from './schemas.js';

/**
 * `POST /v1/runs`: every file of the body is parsed and given its context first; only when all of
 * them pass are their runs stored, in one transaction (`insertRuns`). A rejected body leaves the
 * store as it was, and the 400 names each rejected file with its code and reason.
 */
export interface IngestReply {
  readonly accepted: number;
  readonly skipped: number;
  readonly files: { name: string; format: SourceFormat | null; runs: number; accepted: number; skipped: number; run_ids: number[]; stored: StoredRun[]; warnings: string[] }[];
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
        resolveRun({ run, format: parsed.format, sourcePath: file.name, contentHash: contentHash(run.record), sidecar, context, catalog, warnings }),
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
  const ids = store.insertRuns(prepared.flatMap((p) => p.rows));
  let k = 0;
  const files = prepared.map((p) => {
    const mine = ids.slice(k, k + p.rows.length);
    k += p.rows.length;
    const runIds = mine.filter((id): id is number => id !== 'duplicate');
    const stored = storedRuns(store, p.rows, mine, p.format);
    // A run already stored keeps the context it was stored with: say what this request gave differently
    // (another GPU, model or knob), as `lm-bench ingest` does, rather than a silent "skipped".
    const warnings = [...p.warnings, ...contextNotes(store, p.rows, mine, stored)];
    return { name: p.name, format: p.format, runs: mine.length, accepted: runIds.length, skipped: mine.length - runIds.length, run_ids: runIds, stored, warnings };
  });
  return { accepted: files.reduce((s, f) => s + f.accepted, 0), skipped: files.reduce((s, f) => s + f.skipped, 0), files };
}
