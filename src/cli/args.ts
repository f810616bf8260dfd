import { parseArgs, type ParseArgsConfig } from 'node:util';
import { LmBenchError } from '../errors.js';
import { readDecimal } from '../domain/slo.js';
import { newPromptSalt } from '../util/salt.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** node:util parseArgs, strict, with its errors turned into LMB_ERR_INVALID_ARGUMENT (exit 2). */
export function parseFlags<O extends Options>(argv: readonly string[], options: O, allowPositionals = false) {
  const args = withNegativeValues(argv, options);
  let parsed;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals, tokens: true });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const unknown = /^Unknown option '(-[^']*)'/.exec(message)?.[1];
    if (unknown !== undefined) {
      // parseArgs' own advice (put it after `--` as a positional) fits no lm-bench command; a typo is the likely cause.
      const near = nearestName(unknown.replace(/^-+/, ''), Object.keys(options));
      const hint = near === undefined ? 'run the command with --help for its flags' : `did you mean --${near}?`;
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `Unknown option '${unknown}'; ${hint}`, { cause: err, details: { field: unknown.replace(/^-+/, ''), value: unknown } });
    }
    const unexpected = /^Unexpected argument '([^']*)'/.exec(message)?.[1];
    if (unexpected !== undefined) {
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `Unexpected argument '${unexpected}': this command takes flags only; ${positionalHint(unexpected, args, options)}`, { cause: err, details: { value: unexpected } });
    }
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', message, { cause: err });
  }
  refuseRepeats(parsed.tokens, options);
  return parsed;
}

/**
 * What a stray word most likely was. After a switch (`--json true`): a value the switch does not
 * take. A command with a --model flag not given: the model, as `vllm serve MODEL` writes it.
 */
function positionalHint(word: string, args: readonly string[], options: Options): string {
  const before = args[args.indexOf(word) - 1];
  const flag = before === undefined ? undefined : /^--([^=]+)$/.exec(before)?.[1];
  if (flag !== undefined && options[flag]?.type === 'boolean') return `--${flag} is a switch and takes no value`;
  const modelGiven = args.some((a) => a === '--model' || a.startsWith('--model=') || (options['model']?.short !== undefined && a === `-${options['model'].short}`));
  if (options['model']?.type === 'string' && !modelGiven) return `did you mean --model ${word}?`;
  return 'run the command with --help for its flags';
}

type Token = NonNullable<ReturnType<typeof parseArgs>['tokens']>[number];

/**
 * A flag that does not repeat, given twice with different values (`--gpu H100 … --gpu A100`), or a
 * switch given with its `--no-` form: parseArgs keeps the last silently, so a pasted or edited command
 * line could run with a value its reader does not see. Refused, naming both; the same value twice is
 * the same request and passes.
 */
function refuseRepeats(tokens: readonly Token[], options: Options): void {
  const seen = new Map<string, string | undefined>();
  for (const t of tokens) {
    if (t.kind !== 'option' || options[t.name]?.multiple === true) continue;
    const value = t.value;
    if (seen.has(t.name) && seen.get(t.name) !== value) {
      const first = seen.get(t.name);
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${t.name} was given twice, as "${String(first)}" and then "${String(value)}"; give it once`, {
        details: { field: t.name, values: [first, value] },
      });
    }
    seen.set(t.name, value);
    const opposite = t.name.startsWith('no-') ? t.name.slice(3) : `no-${t.name}`;
    if (options[t.name]?.type === 'boolean' && options[opposite]?.type === 'boolean' && seen.has(opposite)) {
      throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${opposite} and --${t.name} contradict each other; give one`, { details: { field: t.name } });
    }
  }
}

/** The name a mistyped flag or command most likely meant: at most 2 edits away, and fewer than half its letters. */
export function nearestName(typed: string, names: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    const d = editDistance(typed, name);
    if (d <= 2 && d * 2 < Math.max(typed.length, name.length) && (best === undefined || d < best.d)) best = { name, d };
  }
  return best?.name;
}

/** Levenshtein distance, a swap of two neighbouring letters counting as one edit (`--jsno` → `--json`). */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      let best = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, ((d[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = best;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
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

/** An integer as a person writes a count: digits, an optional sign, nothing else. */
const PLAIN_INTEGER = /^[+-]?\d+$/;

/**
 * A flag that must be a number in [min, max] (integers when `int`), written in plain decimal: `12`,
 * `-3`, `0.5`, `2e6`. Node's Number() also reads `0x10`, `0b1`, `0o7`, `""` and padded text, none of
 * which a person means as a count or a rate, so those are refused rather than read as 16, 1, 7 or 0.
 * An integer flag (a count, a seed, a port) takes digits only: `1e1` or `8.0` is more likely a slip
 * than a count of 10 or 8, and past 2^53 a seed would silently become a different one (…993 → …992).
 * `min: Number.MIN_VALUE` is how callers say "positive": it reads "> 0".
 */
export function numberFlag(
  raw: string | undefined,
  flag: string,
  opts: { int?: boolean; min?: number; max?: number } = {},
): number | undefined {
  if (raw === undefined) return undefined;
  const read = opts.int === true && !PLAIN_INTEGER.test(raw) ? undefined : readDecimal(raw);
  // `-0` is 0: a seed or count never carries a sign bit into JSON or a cache key.
  const n = read === 0 ? 0 : read;
  // The largest integer a flag without its own `max` can mean: one held exactly (past 2^53 a seed
  // would silently become its neighbour).
  const cap = opts.int !== true ? undefined : Number.MAX_SAFE_INTEGER;
  const tooLarge = cap !== undefined && n !== undefined && n > cap && (opts.max === undefined || opts.max > cap);
  const bad =
    n === undefined ||
    tooLarge ||
    (opts.int === true && !Number.isInteger(n)) ||
    (opts.min !== undefined && n < opts.min) ||
    (opts.max !== undefined && n > opts.max);
  if (bad) {
    // A bound the flag's own range does not state is named only when it is the one broken.
    const range = rangeText(tooLarge ? { ...opts, max: cap } : opts);
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--${flag} must be ${opts.int === true ? 'an integer' : 'a number'}${range}, got "${raw}"`, { details: { field: flag, value: raw } });
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
