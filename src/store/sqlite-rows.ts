import type { ModelSpec, ServerConfig, Study, StudySpec, StudyState, Trial, TrialOrigin, TrialState } from '../domain/index.js';
import { decodeJson, encodeJson, valueFromStored } from './codec.js';
import type { EventRecord, ModelInfo, ModelRecord, RunContext, RunFilter, RunMeta, RunRecord, SourceFormat, StoredModelSpec } from './records.js';

/** SQLite rows ↔ the Store's records (JSON columns decoded faithfully, 0/1 back to booleans). */
export type Row = Record<string, unknown>;

export function runParams(filter: Omit<RunFilter, 'limit' | 'offset'>) {
  return {
    model: filter.model ?? null,
    gpu: filter.gpu ?? null,
    gpu_count: filter.gpuCount ?? null,
    source_format: filter.sourceFormat ?? null,
    // json_each yields JSON booleans as 1/0, the same as json_extract does on the stored config.
    config: JSON.stringify(filter.config ?? {}),
  };
}

export interface ValueRow {
  trial_id: number;
  objective: string;
  value: number | null;
  value_type: string;
}

export function groupValues(rows: readonly ValueRow[]): Map<number, Record<string, number | null>> {
  const out = new Map<number, Record<string, number | null>>();
  for (const r of rows) {
    let m = out.get(r.trial_id);
    if (!m) out.set(r.trial_id, (m = {}));
    m[r.objective] = valueFromStored(r.value, r.value_type);
  }
  return out;
}

const str = (r: Row, k: string): string => r[k] as string;
const numOrNull = (r: Row, k: string): number | null => (r[k] as number | null) ?? null;
const jsonOrNull = <T>(r: Row, k: string): T | null => (r[k] === null ? null : decodeJson<T>(str(r, k)));

export function studyFromRow(r: Row): Study {
  return {
    id: r['id'] as number,
    state: str(r, 'state') as StudyState,
    spec: decodeJson<StudySpec>(str(r, 'spec')),
    created_at_ms: r['created_at_ms'] as number,
    updated_at_ms: r['updated_at_ms'] as number,
  };
}

export function trialFromRow(r: Row, values: Record<string, number | null>): Trial {
  const started = r['started'] as number | null;
  return {
    id: r['id'] as number,
    study_id: r['study_id'] as number,
    number: r['number'] as number,
    state: str(r, 'state') as TrialState,
    origin: str(r, 'origin') as TrialOrigin,
    config: decodeJson<ServerConfig>(str(r, 'config')),
    values,
    result: jsonOrNull<Trial['result']>(r, 'result'),
    failure_reason: (r['failure_reason'] as string | null) ?? null,
    started: started === null ? null : started === 1,
    created_at_ms: r['created_at_ms'] as number,
    started_at_ms: numOrNull(r, 'started_at_ms'),
    finished_at_ms: numOrNull(r, 'finished_at_ms'),
    heartbeat_at_ms: numOrNull(r, 'heartbeat_at_ms'),
    attrs: decodeJson<Record<string, unknown>>(str(r, 'attrs')),
  };
}

/**
 * A run's context as its columns, which `runFromRow` reads back: what storing a run writes and what
 * replacing its context overwrites, so the two cannot drift apart.
 */
export function contextColumns(c: RunContext) {
  return { model: c.model, gpu: c.hardware.gpu, gpu_count: c.hardware.count, server_config: encodeJson(c.server_config) };
}

export function runFromRow(r: Row): RunRecord {
  return {
    id: r['id'] as number,
    result: decodeJson<RunRecord['result']>(str(r, 'result')),
    server_config: decodeJson<ServerConfig>(str(r, 'server_config')),
    hardware: { gpu: str(r, 'gpu'), count: r['gpu_count'] as number },
    model: str(r, 'model'),
    workload: jsonOrNull<RunRecord['workload'] & object>(r, 'workload'),
    source_format: str(r, 'source_format') as SourceFormat,
    source_path: (r['source_path'] as string | null) ?? null,
    content_hash: str(r, 'content_hash'),
    meta: decodeJson<RunMeta>(str(r, 'meta')),
    created_at_ms: r['created_at_ms'] as number,
  };
}

export function modelInfoFromRow(r: Row): ModelInfo {
  return {
    id: r['id'] as number,
    kind: str(r, 'kind'),
    slot: (r['slot'] as string | null) ?? null,
    metadata: decodeJson<Record<string, unknown>>(str(r, 'metadata')),
    metrics: decodeJson<Record<string, number | null>>(str(r, 'metrics')),
    size_bytes: r['size_bytes'] as number,
    created_at_ms: r['created_at_ms'] as number,
  };
}

export function modelFromRow(r: Row): ModelRecord {
  const buf = r['blob'] as Buffer;
  // A fresh Uint8Array (not the driver's Buffer) so callers get the same type they saved.
  return { ...modelInfoFromRow(r), blob: new Uint8Array(buf) };
}

export function eventFromRow(r: Row): EventRecord {
  return {
    id: r['id'] as number,
    study_id: numOrNull(r, 'study_id'),
    kind: str(r, 'kind'),
    payload: decodeJson(str(r, 'payload')),
    at_ms: r['at_ms'] as number,
  };
}

export function modelSpecFromRow(r: Row): StoredModelSpec {
  return {
    id: str(r, 'id'),
    spec: decodeJson<ModelSpec>(str(r, 'spec')),
    config_hash: str(r, 'config_hash'),
    origin: str(r, 'origin'),
    location: str(r, 'location'),
    created_at_ms: r['created_at_ms'] as number,
  };
}
