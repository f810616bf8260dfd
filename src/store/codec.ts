import { LmBenchError } from '../errors.js';
import { isFinished, type StudySpec, type Trial } from '../domain/index.js';

/**
 * Faithful JSON for stored columns. Plain JSON turns ±Infinity and NaN into null, which would make a
 * failed trial's `Infinity` latency look like "no value"; here a non-finite number is written as
 * `{"$lmb_num":"Infinity"|"-Infinity"|"NaN"}` and revived on read. Absent keys stay absent and null
 * stays null. (An object whose only key is `$lmb_num` is reserved for this.) JSON.stringify also writes
 * -0 as `0`; here it is written `-0`, which is JSON, which JSON.parse reads back as -0 and SQLite's
 * json_extract as 0, so a figure comes back with the sign it was stored with and a knob filter on 0
 * still matches it. (The string NEG_ZERO is reserved for this.)
 */
const TAG = '$lmb_num';
/** What -0 stands as while JSON.stringify runs: a string no figure holds (NUL-delimited), replaced by `-0` after. */
const NEG_ZERO = '\u0000$lmb_num:-0\u0000';
const NEG_ZERO_JSON = JSON.stringify(NEG_ZERO);

export function encodeJson(value: unknown): string {
  let negativeZero = false;
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return { [TAG]: String(v) };
      if (Object.is(v, -0)) {
        negativeZero = true;
        return NEG_ZERO;
      }
    } else if (v === NEG_ZERO || (v !== null && typeof v === 'object' && Object.hasOwn(v, NEG_ZERO))) {
      throw new LmBenchError('LMB_ERR_STORE_FAILED', "a string equal to the store's reserved -0 marker cannot be stored");
    }
    return v;
  });
  return negativeZero ? text.replaceAll(NEG_ZERO_JSON, '-0') : text;
}

export function decodeJson<T = unknown>(text: string): T {
  return JSON.parse(text, (_key, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === TAG) {
        const s = (v as Record<string, unknown>)[TAG];
        if (s === 'Infinity') return Infinity;
        if (s === '-Infinity') return -Infinity;
        if (s === 'NaN') return NaN;
      }
    }
    return v;
  }) as T;
}

/**
 * Objective values as SQL rows, after Optuna's `TrialValueModel`: SQL REAL cannot hold ±Infinity, so the
 * value column is NULL and `value_type` says which non-finite value (or a real null) it was.
 */
export type ValueType = 'finite' | 'inf_pos' | 'inf_neg' | 'nan' | 'null';

export function valueToStored(v: number | null): { value: number | null; valueType: ValueType } {
  if (v === null) return { value: null, valueType: 'null' };
  if (Number.isNaN(v)) return { value: null, valueType: 'nan' };
  if (v === Infinity) return { value: null, valueType: 'inf_pos' };
  if (v === -Infinity) return { value: null, valueType: 'inf_neg' };
  return { value: v, valueType: 'finite' };
}

export function valueFromStored(value: number | null, valueType: string): number | null {
  switch (valueType) {
    case 'finite':
      if (value === null) throw new LmBenchError('LMB_ERR_STORE_FAILED', 'finite trial value stored as NULL');
      return value;
    case 'inf_pos':
      return Infinity;
    case 'inf_neg':
      return -Infinity;
    case 'nan':
      return NaN;
    case 'null':
      return null;
    default:
      throw new LmBenchError('LMB_ERR_STORE_FAILED', `unknown value_type "${valueType}"`);
  }
}

/**
 * Key-order-independent JSON, for comparing study specs. -0 compares as 0: a spec stored before the
 * codec kept the sign of zero reads back 0, and a resumed study is the same study.
 */
export function canonicalJson(value: unknown): string {
  return encodeJson(sortKeys(value));
}

function sortKeys(v: unknown): unknown {
  if (Object.is(v, -0)) return 0;
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}

export function sameSpec(a: StudySpec, b: StudySpec): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

export function studyExists(name: string): LmBenchError {
  return new LmBenchError('LMB_ERR_STUDY_EXISTS', `a study named "${name}" already exists with different settings`, {
    details: { study: name },
  });
}

export function studyNotFound(idOrName: number | string): LmBenchError {
  return new LmBenchError('LMB_ERR_STUDY_NOT_FOUND', `no study ${typeof idOrName === 'number' ? `with id ${idOrName}` : `named "${idOrName}"`}`, {
    details: { study: idOrName },
  });
}

/**
 * A run `storeRuns` refuses: its figures (content hash `hash`) are the stored run `id`'s under another
 * context, or, `id` null, came earlier in the same batch under another context (the batch is rolled
 * back, so that run has no id to name). `change` is what differs.
 */
export interface RunConflict {
  readonly id: number | null;
  readonly hash: string;
  readonly change: string;
}

/** The first hex digits of a content hash, enough to tell a batch's figures apart in a message. */
const HASH_SHOWN_CHARS = 12;

/**
 * The figures `storeRuns` refuses, grouped by what differs: "run #3 has GPUs 1× A100-80GB (this
 * ingest: 1× H100-SXM)", and for figures given twice in one batch "figures 0123456789ab came first
 * with …"; `details.runs` holds the stored runs' ids (only runs that exist), `details.repeated` the
 * hashes given twice, where there are any.
 */
export function runContextConflict(conflicts: readonly RunConflict[]): LmBenchError {
  const stored = conflicts.flatMap((c) => (c.id === null ? [] : [{ id: c.id, change: c.change }]));
  const repeated = conflicts.filter((c) => c.id === null);
  const byChange = new Map<string, number[]>();
  for (const c of stored) byChange.set(c.change, [...(byChange.get(c.change) ?? []), c.id]);
  const parts = [...byChange].map(([change, ids]) => `run${ids.length === 1 ? '' : 's'} ${ids.map((i) => `#${i}`).join(', ')} ${ids.length === 1 ? 'has' : 'have'} ${change}`);
  const twice = repeated.map((c) => `figures ${c.hash.slice(0, HASH_SHOWN_CHARS)} came first with ${c.change}`);
  const said = [
    ...(parts.length === 0 ? [] : [`already stored under another context: ${parts.join('; ')}`]),
    ...(twice.length === 0 ? [] : [`given twice in one batch under two contexts: ${twice.join('; ')}`]),
  ];
  return new LmBenchError('LMB_ERR_INGEST_REJECTED', `${said.join('; ')}; nothing stored`, {
    details: { runs: stored.map((c) => c.id), ...(repeated.length === 0 ? {} : { repeated: repeated.map((c) => c.hash) }) },
  });
}

export function notFound(what: string, id: number): LmBenchError {
  return new LmBenchError('LMB_ERR_NOT_FOUND', `no ${what} with id ${id}`, { details: { [what]: id } });
}

/** Optuna's `check_trial_is_updatable`. */
export function assertUpdatable(trial: Trial): void {
  if (isFinished(trial.state)) {
    throw new LmBenchError('LMB_ERR_TRIAL_FINISHED', `trial ${trial.id} is ${trial.state} and cannot be changed`, {
      details: { trial: trial.id, state: trial.state },
    });
  }
}

export function assertWaiting(trial: Trial): void {
  assertUpdatable(trial);
  if (trial.state !== 'waiting') {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `trial ${trial.id} is already ${trial.state}`, {
      details: { trial: trial.id, state: trial.state },
    });
  }
}

export function staleReason(trial: Trial): string {
  const last = trial.heartbeat_at_ms ?? trial.started_at_ms;
  return `stale: no heartbeat since ${last === null ? 'start' : new Date(last).toISOString()}`;
}
