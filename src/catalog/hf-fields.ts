import { LmBenchError } from '../errors.js';

/**
 * Reading fields of a Hugging Face `config.json` with errors that name the field (its path from the
 * top of the file, e.g. `text_config.hidden_size`). Pure: the resolver reads the file, these read the
 * parsed JSON.
 */
export type Json = Readonly<Record<string, unknown>>;

/** A section of config.json and where it sits (its path prefix in error messages). */
export interface Section {
  readonly json: Json;
  /** '' for the top level, 'text_config.' for a multimodal checkpoint's language model. */
  readonly at: string;
}

/** Bounds past which a value is a typo or a corrupt file, not a model (issue 24). */
export const MAX_LAYERS = 1000;
const MAX_WIDTH = 1 << 20;

export function invalid(field: string, message: string, value?: unknown): LmBenchError {
  return new LmBenchError('LMB_ERR_MODEL_CONFIG_INVALID', `config.json: ${field} ${message}`, { details: { field, value } });
}

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A positive integer field, at most `max` (2^20 for widths, MAX_LAYERS for layer counts). */
export function posInt(s: Section, key: string, max = MAX_WIDTH): number {
  const v = s.json[key];
  const field = s.at + key;
  if (v === undefined || v === null) throw invalid(field, 'is missing');
  if (typeof v !== 'number' || !Number.isInteger(v)) throw invalid(field, `must be an integer, got ${JSON.stringify(v)}`, v);
  if (v <= 0) throw invalid(field, `must be positive, got ${v}`, v);
  if (v > max) throw invalid(field, `is ${v}, more than ${max}: not a real model`, v);
  return v;
}

/** A positive integer field that may be absent or null (then `fallback`). */
export function optPosInt<T>(s: Section, key: string, fallback: T, max = MAX_WIDTH): number | T {
  const v = s.json[key];
  return v === undefined || v === null ? fallback : posInt(s, key, max);
}

/** A non-negative integer field that may be absent (then `fallback`). */
export function optCount(s: Section, key: string, fallback: number): number {
  const v = s.json[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw invalid(s.at + key, `must be a non-negative integer, got ${JSON.stringify(v)}`, v);
  return v;
}

export function optBool(s: Section, key: string, fallback: boolean): boolean {
  const v = s.json[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'boolean') throw invalid(s.at + key, `must be true or false, got ${JSON.stringify(v)}`, v);
  return v;
}

export function optString(s: Section, key: string): string | null {
  const v = s.json[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw invalid(s.at + key, `must be a string, got ${JSON.stringify(v)}`, v);
  return v;
}

/** An array field of strings or numbers (layer_types, no_rope_layers, moe_layers), or null when absent. */
export function optArray<T extends string | number>(s: Section, key: string, kind: 'string' | 'number'): readonly T[] | null {
  const v = s.json[key];
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) || v.some((x) => typeof x !== kind)) throw invalid(s.at + key, `must be an array of ${kind}s`, v);
  return v as T[];
}

/** A nested section (`text_config`, `vision_config`, `quantization_config`), or null when absent. */
export function optSection(s: Section, key: string): Section | null {
  const v = s.json[key];
  if (v === undefined || v === null) return null;
  if (!isObject(v)) throw invalid(s.at + key, 'must be an object', v);
  return { json: v, at: `${s.at}${key}.` };
}
