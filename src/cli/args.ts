import { parseArgs, type ParseArgsConfig } from 'node:util';
import { LmBenchError } from '../errors.js';
import { readDecimal } from '../domain/slo.js';
import { newPromptSalt } from '../util/salt.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** node:util parseArgs, strict, with its errors turned into LMB_ERR_INVALID_ARGUMENT (exit 2). */
export function parseFlags<O extends Options>(argv: readonly string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args: withNegativeValues(argv, options), options, strict: true, allowPositionals });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', message, { cause: err });
  }
}

/** A token that reads as a negative number (`-1`, `-.5`, `-inf`), never as a flag: no flag starts with a digit. */
const NEGATIVE = /^-(\d|\.\d|inf)/i;

/**
 * `--seed -1` as `--seed=-1`. parseArgs refuses a value that starts with a dash ("argument is
 * ambiguous"), so a negative number never reached the flag's own check, whose message says what range
 * the flag takes; joined to its flag, it does. Only after a flag that takes a value, and never past `--`.
 */
function withNegativeValues(argv: readonly string[], options: Options): string[] {
  const out: string[] = [];
  const takesValue = (token: string): boolean => {
    const long = /^--([^=]+)$/.exec(token);
    if (long !== null) return options[long[1] as string]?.type === 'string';
    const short = /^-([^-])$/.exec(token);
    return short !== null && Object.values(options).some((o) => o.short === short[1] && o.type === 'string');
  };
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    if (next !== undefined && takesValue(token) && NEGATIVE.test(next)) {
      out.push(`${token}=${next}`);
      i++;
    } else out.push(token);
  }
  return out;
}

export function requireFlag<T>(value: T | undefined, flag: string): T {
  if (value === undefined) throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `missing required flag --${flag}`, { details: { field: flag } });
  return value;
}

/**
 * A flag that must be a number in [min, max] (integers when `int`), written in plain decimal: `12`,
 * `-3`, `0.5`, `2e6`. Node's Number() also reads `0x10`, `0b1`, `0o7`, `""` and padded text, none of
 * which a person means as a count or a rate, so those are refused rather than read as 16, 1, 7 or 0.
 * `min: Number.MIN_VALUE` is how callers say "positive": it reads "> 0".
 */
export function numberFlag(
  raw: string | undefined,
  flag: string,
  opts: { int?: boolean; min?: number; max?: number } = {},
): number | undefined {
  if (raw === undefined) return undefined;
  const n = readDecimal(raw);
  const bad =
    n === undefined ||
    (opts.int === true && !Number.isInteger(n)) ||
    (opts.min !== undefined && n < opts.min) ||
    (opts.max !== undefined && n > opts.max);
  if (bad) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${flag} must be ${opts.int === true ? 'an integer' : 'a number'}${rangeText(opts)}, got "${raw}"`, { details: { field: flag, value: raw } });
  }
  return n;
}

/** " ≥ 1 and ≤ 64", " > 0", or nothing: the bounds as a person writes them (never 5e-324). */
function rangeText(opts: { min?: number; max?: number }): string {
  const low = opts.min === undefined ? '' : opts.min === Number.MIN_VALUE ? '> 0' : `≥ ${opts.min}`;
  const high = opts.max === undefined ? '' : `≤ ${opts.max}`;
  const range = [low, high].filter(Boolean).join(' and ');
  return range === '' ? '' : ` ${range}`;
}

/**
 * `--prompt-salt S` as given (to send a run's prompts again word for word: its result's
 * `lmb.prompt_salt`), else a fresh one, so no two invocations send the same words to a server's cache.
 */
export function promptSaltFlag(raw: string | undefined): string {
  if (raw === undefined) return newPromptSalt();
  // 56, so that a sweep's point suffix (`.12`) keeps it a short label.
  if (!/^[A-Za-z0-9._-]{1,56}$/.test(raw)) {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--prompt-salt must be 1–56 letters, digits, ".", "_" or "-", got "${raw}"`, { details: { field: 'prompt-salt' } });
  }
  return raw;
}
