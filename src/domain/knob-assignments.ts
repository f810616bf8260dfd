import { LmBenchError } from '../errors.js';
import { dottedPath, formatZodIssues } from '../util/zod-issues.js';
import { coerceKnobValue, knobNamed } from './knob-value.js';
import { ServerConfig } from './server-config.js';

/**
 * `knob=value` pairs (the CLI's `--set`, a sweep's serve parameters, a sidecar's overrides) → a
 * validated ServerConfig. It lives beside the schema because every reader of knob assignments needs
 * the same coercion and the same errors: an unknown knob is LMB_ERR_UNKNOWN_KNOB; a value vLLM would
 * refuse at parse time (wrong type, out of its field bounds) is LMB_ERR_KNOB_OUT_OF_DOMAIN. Values are
 * read by `coerceKnobValue` (src/domain/knob-value.ts), the rules every reader of knob text shares.
 */

export function parseKnobAssignments(pairs: readonly string[] | undefined, base: ServerConfig = {}, field = 'set'): ServerConfig {
  const raw: Record<string, unknown> = { ...base };
  for (const pair of pairs ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${field} expects knob=value, got "${pair}"`, { details: { field, value: pair } });
    const name = knobNamed(pair.slice(0, eq));
    raw[name] = coerceKnobValue(name, pair.slice(eq + 1));
  }
  return validateServerConfig(raw);
}

export function validateServerConfig(raw: unknown, where = 'server config'): ServerConfig {
  const res = ServerConfig.safeParse(raw);
  if (res.success) return res.data;
  const issues = res.error.issues;
  // An unknown knob outranks a bad value: the code says what to fix first; the message lists every issue.
  const unknown = issues.find((i) => i.code === 'unrecognized_keys');
  const field = unknown !== undefined ? (unknown.keys[0] ?? '') : dottedPath(issues[0]?.path ?? []);
  const values = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  // Each bad value is shown beside its knob, as given (`max_num_seqs = -4: Too small…`), every issue of them.
  const text = issues.map((i) => {
    if (i.code === 'unrecognized_keys') return `unknown knob(s) ${i.keys.join(', ')}`;
    const knob = i.path[0];
    return typeof knob === 'string' ? `${dottedPath(i.path)} = ${JSON.stringify(values[knob])}: ${i.message}` : formatZodIssues([i]);
  });
  if (unknown !== undefined) throw new LmBenchError('LMB_ERR_UNKNOWN_KNOB', `${where}: ${text.join('; ')}`, { details: { field } });
  throw new LmBenchError('LMB_ERR_KNOB_OUT_OF_DOMAIN', `${where}: ${text.join('; ')}`, { details: { field, value: values[field] } });
}
