import { createHash } from 'node:crypto';
import type { ExportSubject } from './types.js';

/**
 * Stable names for exported things: the same stored run or trial always gets the same file name and
 * the same report ids, so exporting twice overwrites rather than duplicates, and a reader can tell two
 * exports of one measurement are one.
 */

/** sha256 hex of a value's JSON with object keys sorted (so key order never changes an id). */
export function stableHash(value: unknown): string {
  return createHash('sha256').update(stableJson(value)).digest('hex');
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** 32 hex digits, the width llm-d's reports use for their ids. */
export function shortId(value: unknown): string {
  return stableHash(value).slice(0, 32);
}

/** A study name as a file-name part: anything but letters, digits, `.`, `_` and `-` becomes `_`. */
export function safeName(name: string): string {
  const s = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  return s === '' ? '_' : s;
}

/** `<study>-trial-<n>` or `run-<id>`: the base of every file written for one measurement. */
export function baseName(subject: ExportSubject): string {
  switch (subject.kind) {
    case 'trial':
      return `${safeName(subject.study)}-trial-${subject.trial}`;
    case 'run':
      return `run-${subject.run_id}`;
  }
}

/** How a subject is named in text: "study chat trial 3", "run 12". */
export function subjectLabel(subject: ExportSubject): string {
  switch (subject.kind) {
    case 'trial':
      return `study ${subject.study} trial ${subject.trial}`;
    case 'run':
      return `run ${subject.run_id}`;
  }
}
