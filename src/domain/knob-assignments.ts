import { LmBenchError } from '../errors.js';
import { CONDITIONAL_KNOB_NAMES, KNOB_NAMES, ServerConfig } from './server-config.js';

/**
 * `knob=value` pairs (the CLI's `--set`, a sweep's serve parameters, a sidecar's overrides) → a
 * validated ServerConfig. It lives beside the schema because every reader of knob assignments needs
 * the same coercion and the same errors: an unknown knob is LMB_ERR_UNKNOWN_KNOB; a value vLLM would
 * refuse at parse time (wrong type, out of its field bounds) is LMB_ERR_KNOB_OUT_OF_DOMAIN.
 */
const ALL_KNOBS: readonly string[] = [...KNOB_NAMES, ...CONDITIONAL_KNOB_NAMES];

function coerce(raw: string): number | boolean | string {
  const lower = raw.trim().toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  if (raw.trim() !== '' && Number.isFinite(Number(raw))) return Number(raw);
  return raw.trim();
}

export function parseKnobAssignments(pairs: readonly string[] | undefined, base: ServerConfig = {}, field = 'set'): ServerConfig {
  const raw: Record<string, unknown> = { ...base };
  for (const pair of pairs ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${field} expects knob=value, got "${pair}"`, { details: { field, value: pair } });
    const name = pair.slice(0, eq).trim().replaceAll('-', '_');
    if (!ALL_KNOBS.includes(name)) {
      throw new LmBenchError('LMB_ERR_UNKNOWN_KNOB', `unknown knob "${name}"; known: ${ALL_KNOBS.join(', ')}`, { details: { field: name } });
    }
    raw[name] = coerce(pair.slice(eq + 1));
  }
  return validateServerConfig(raw);
}

export function validateServerConfig(raw: unknown, where = 'server config'): ServerConfig {
  const res = ServerConfig.safeParse(raw);
  if (res.success) return res.data;
  const issue = res.error.issues[0];
  const field = issue?.path.map(String).join('.') ?? '';
  if (issue?.code === 'unrecognized_keys') {
    throw new LmBenchError('LMB_ERR_UNKNOWN_KNOB', `${where}: unknown knob(s) ${issue.keys.join(', ')}`, { details: { field: issue.keys[0] } });
  }
  const value = field && typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>)[field] : undefined;
  throw new LmBenchError('LMB_ERR_KNOB_OUT_OF_DOMAIN', `${where}: ${field} = ${JSON.stringify(value)}: ${issue?.message ?? 'invalid'}`, { details: { field, value } });
}
