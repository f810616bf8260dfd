import { isObject } from './vllm-serve.js';

/**
 * Reading optional settings out of a tool's free-form config block (genai-perf's `input_config`,
 * AIPerf's, a GuideLLM `config`): the first path that holds a value of the wanted type wins. These
 * describe what was asked, so callers use them only for context (model, concurrency, rate), never for
 * a measured figure.
 */
export function at(root: unknown, path: readonly (string | number)[]): unknown {
  let cur: unknown = root;
  for (const k of path) {
    if (typeof k === 'number') cur = Array.isArray(cur) ? cur[k] : undefined;
    else cur = isObject(cur) ? cur[k] : undefined;
  }
  return cur;
}

export function numAt(root: unknown, ...paths: (string | number)[][]): number | undefined {
  for (const p of paths) {
    const v = at(root, p);
    if (typeof v === 'number' && Number.isFinite(v)) return v;
  }
  return undefined;
}

/** A positive integer (a concurrency, a count asked for), else undefined. */
export function posIntAt(root: unknown, ...paths: (string | number)[][]): number | undefined {
  const v = numAt(root, ...paths);
  return v !== undefined && Number.isInteger(v) && v > 0 ? v : undefined;
}

export function strAt(root: unknown, ...paths: (string | number)[][]): string | undefined {
  for (const p of paths) {
    const v = at(root, p);
    if (typeof v === 'string' && v.trim() !== '') return v;
    // Model lists: the first name is the one benchmarked (tools send round-robin over several).
    if (Array.isArray(v) && typeof v[0] === 'string' && v[0] !== '') return v[0];
  }
  return undefined;
}

/** "2025-10-03T13:13:39.146443" → vLLM's `date` format "20251003-131339" (clock time as written). */
export function vllmDate(iso: unknown): string | undefined {
  if (typeof iso !== 'string') return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})/.exec(iso);
  return m ? `${m[1]}${m[2]}${m[3]}-${m[4]}${m[5]}${m[6]}` : undefined;
}
