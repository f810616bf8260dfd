import { parseArgs, type ParseArgsConfig } from 'node:util';
import { LmBenchError } from '../errors.js';
import { newPromptSalt } from '../util/salt.js';

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
