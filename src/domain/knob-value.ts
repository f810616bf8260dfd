import { z } from 'zod';
import { assertNever, LmBenchError } from '../errors.js';
import { formatZodIssues } from '../util/zod-issues.js';
import { ALL_KNOB_NAMES, ResolvedServerConfig, type AnyKnobName, type KnobValue } from './server-config.js';
import { readDecimal } from './slo.js';

/**
 * The one reading of a knob's value from text: the CLI's `--set` and vLLM-style flags, the service's
 * `GET /v1/runs?config.<knob>=` filters, `export --runs`, a sweep's serve parameters. Every reader goes
 * through here so the same text means the same value everywhere.
 *
 * Rules (surrounding whitespace is ignored throughout):
 * - a boolean knob takes `true` or `false` in any case (`True` from Python, `TRUE` from YAML 1.1) and
 *   nothing else: `1`/`0`, `yes`/`no` are refused, because a number where a switch belongs is more often
 *   a value meant for another knob than a spelling of "on";
 * - an integer knob takes digits with an optional sign (`128`), as vLLM's int() does; a real-valued knob a
 *   decimal number (`0.9`, `1e-3`); hex, `Infinity` and the empty string are refused, and the field's
 *   own bounds (positive, ≤ 1) apply;
 * - a choice knob (`kv_cache_dtype`, `quantization`) takes one of its options, spelt exactly as vLLM does.
 * A value that breaks a rule is LMB_ERR_KNOB_OUT_OF_DOMAIN naming the knob and the text as given.
 */

export type KnobKind = 'boolean' | 'integer' | 'number' | 'choice';

/** What a knob's field in the schema holds, read off the schema itself. */
export function knobKind(name: AnyKnobName): KnobKind {
  const field: z.ZodType = ResolvedServerConfig.shape[name];
  if (field instanceof z.ZodBoolean) return 'boolean';
  if (field instanceof z.ZodNumber) return field.isInt === true ? 'integer' : 'number';
  if (field instanceof z.ZodEnum) return 'choice';
  // A knob of another kind needs a rule above before any text can be read as its value.
  throw new LmBenchError('LMB_ERR_INTERNAL', `knob ${name}: no text reading for a ${field.def.type} field`);
}

const KNOB_SET: ReadonlySet<string> = new Set(ALL_KNOB_NAMES);

export function isKnobName(name: string): name is AnyKnobName {
  return KNOB_SET.has(name);
}

/** Where the text came from, for the error: `label` prefixes the message, `field` goes in details. */
export interface KnobTextSource {
  readonly label?: string;
  readonly field?: string;
}

/** A knob's name as given (`max-num-seqs` or `max_num_seqs`) → the knob; unknown is LMB_ERR_UNKNOWN_KNOB. */
export function knobNamed(text: string, at: KnobTextSource = {}): AnyKnobName {
  const name = text.trim().replaceAll('-', '_');
  if (isKnobName(name)) return name;
  const label = at.label ?? '';
  throw new LmBenchError('LMB_ERR_UNKNOWN_KNOB', `${label === '' ? '' : `${label}: `}unknown knob "${name}"; known: ${ALL_KNOB_NAMES.join(', ')}`, {
    details: { field: at.field ?? name },
  });
}


function expected(kind: KnobKind): string {
  switch (kind) {
    case 'boolean':
      return 'true or false';
    case 'integer':
      return 'an integer';
    case 'number':
      return 'a number';
    case 'choice':
      return 'one of its options';
    default:
      return assertNever(kind, 'knob kind');
  }
}

function read(kind: KnobKind, text: string): KnobValue | undefined {
  switch (kind) {
    case 'boolean': {
      const lower = text.toLowerCase();
      return lower === 'true' ? true : lower === 'false' ? false : undefined;
    }
    case 'integer':
      // vLLM's argparse reads an integer knob with int(): `1e2` and `8.0` are refused there, so here.
      return /^[+-]?\d+$/.test(text) ? readDecimal(text) : undefined;
    case 'number':
      return readDecimal(text);
    case 'choice':
      return text === '' ? undefined : text;
    default:
      return assertNever(kind, 'knob kind');
  }
}

/** `raw` as the value of knob `name`, checked against the knob's field (bounds, options). */
export function coerceKnobValue(name: AnyKnobName, raw: string, at: KnobTextSource = {}): KnobValue {
  const label = at.label ?? name;
  const details = { field: at.field ?? name, value: raw };
  const kind = knobKind(name);
  const value = read(kind, raw.trim());
  if (value === undefined) {
    throw new LmBenchError('LMB_ERR_KNOB_OUT_OF_DOMAIN', `${label} = ${JSON.stringify(raw)}: expected ${expected(kind)}`, { details });
  }
  const res = ResolvedServerConfig.shape[name].safeParse(value);
  if (!res.success) throw new LmBenchError('LMB_ERR_KNOB_OUT_OF_DOMAIN', formatZodIssues(res.error.issues, `${label} = ${JSON.stringify(raw)}`), { details });
  return value;
}
