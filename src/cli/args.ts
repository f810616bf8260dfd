import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CONDITIONAL_KNOB_NAMES, KNOB_NAMES, ServerConfig } from '../domain/index.js';
import { LmBenchError } from '../errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** node:util parseArgs, strict, with its errors turned into LMB_ERR_INVALID_ARGUMENT (exit 2). */
export function parseFlags<O extends Options>(argv: readonly string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', message, { cause: err });
  }
}

export function requireFlag<T>(value: T | undefined, flag: string): T {
  if (value === undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `missing required flag --${flag}`, { details: { field: flag } });
  return value;
}

/** A flag that must be a number in [min, max] (integers when `int`). */
export function numberFlag(
  raw: string | undefined,
  flag: string,
  opts: { int?: boolean; min?: number; max?: number } = {},
): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  const bad =
    raw.trim() === '' ||
    !Number.isFinite(n) ||
    (opts.int === true && !Number.isInteger(n)) ||
    (opts.min !== undefined && n < opts.min) ||
    (opts.max !== undefined && n > opts.max);
  if (bad) {
    const range = [opts.min === undefined ? '' : `≥ ${opts.min}`, opts.max === undefined ? '' : `≤ ${opts.max}`].filter(Boolean).join(' and ');
    throw new LmBenchError(
      'LMB_ERR_INVALID_ARGUMENT',
      `--${flag} must be ${opts.int === true ? 'an integer' : 'a number'}${range ? ` ${range}` : ''}, got "${raw}"`,
      { details: { field: flag, value: raw } },
    );
  }
  return n;
}

const ALL_KNOBS: readonly string[] = [...KNOB_NAMES, ...CONDITIONAL_KNOB_NAMES];

function coerce(raw: string): number | boolean | string {
  const lower = raw.trim().toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  if (raw.trim() !== '' && Number.isFinite(Number(raw))) return Number(raw);
  return raw.trim();
}

/**
 * `--set knob=value` pairs → a validated ServerConfig. An unknown knob is LMB_ERR_UNKNOWN_KNOB; a value
 * vLLM would refuse at parse time (wrong type, out of its field bounds) is LMB_ERR_KNOB_OUT_OF_DOMAIN.
 */
export function parseSetFlags(pairs: readonly string[] | undefined, base: ServerConfig = {}): ServerConfig {
  const raw: Record<string, unknown> = { ...base };
  for (const pair of pairs ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--set expects knob=value, got "${pair}"`, { details: { field: 'set', value: pair } });
    const name = pair.slice(0, eq).trim().replaceAll('-', '_');
    const value = pair.slice(eq + 1);
    if (!ALL_KNOBS.includes(name)) {
      throw new LmBenchError('LMB_ERR_UNKNOWN_KNOB', `unknown knob "${name}"; known: ${ALL_KNOBS.join(', ')}`, {
        details: { field: name },
      });
    }
    raw[name] = coerce(value);
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
  throw new LmBenchError(
    'LMB_ERR_KNOB_OUT_OF_DOMAIN',
    `${where}: ${field} = ${JSON.stringify(value)}: ${issue?.message ?? 'invalid'}`,
    { details: { field, value } },
  );
}
