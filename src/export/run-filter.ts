import { ALL_KNOB_NAMES, coerceKnobValue, isKnobName, validateServerConfig, type ServerConfig } from '../domain/index.js';
import { LmBenchError } from '../errors.js';
import { SourceFormat } from '../store/index.js';

/**
 * `--runs FILTER`: the filter `GET /v1/runs` takes, as one flag value, `key=value` pairs joined by
 * commas — `gpu=H100-SXM,model=llama-3.1-8b,gpus=1,source_format=vllm_bench_serve,config.max_num_seqs=128`
 * — or `all`. Same keys, same meaning (exact matches; a knob a run's config lacks never matches) and
 * the same error codes for knobs (LMB_ERR_UNKNOWN_KNOB, LMB_ERR_KNOB_OUT_OF_DOMAIN); anything else
 * malformed is LMB_ERR_INVALID_ARGUMENT naming the pair. Pure: GPU and model names are resolved to
 * the history's ids by the caller, as the route does.
 */
export interface RunFilterSpec {
  readonly model?: string;
  readonly gpu?: string;
  readonly gpus?: number;
  readonly source_format?: SourceFormat;
  readonly config?: ServerConfig;
}

import { RUN_FILTER_KEYS } from './run-filter-keys.js';

export { RUN_FILTER_KEYS };

const bad = (message: string, field = 'runs'): LmBenchError => new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `--runs: ${message}`, { details: { field } });

export function parseRunFilter(text: string): RunFilterSpec {
  const trimmed = text.trim();
  if (trimmed === 'all') return {};
  if (trimmed === '') throw bad('empty; give key=value pairs joined by commas (e.g. gpu=H100-SXM,model=llama-3.1-8b) or `all`');
  const out: { model?: string; gpu?: string; gpus?: number; source_format?: SourceFormat } = {};
  const knobs: Record<string, unknown> = {};
  const seen = new Set<string>();
  for (const pair of trimmed.split(',')) {
    const eq = pair.indexOf('=');
    const key = (eq < 0 ? pair : pair.slice(0, eq)).trim();
    const value = eq < 0 ? '' : pair.slice(eq + 1).trim();
    if (eq < 0 || key === '' || value === '') throw bad(`"${pair.trim()}" is not key=value`);
    if (seen.has(key)) throw bad(`${key} given twice`, key);
    seen.add(key);
    if (key.startsWith('config.')) {
      const knob = key.slice('config.'.length);
      if (!isKnobName(knob)) throw new LmBenchError('LMB_ERR_UNKNOWN_KNOB', `--runs ${key}: unknown knob "${knob}"; known: ${ALL_KNOB_NAMES.join(', ')}`, { details: { field: key } });
      // Read as the route's query and `--set` read it (one rule for knob text, src/domain/knob-value.ts).
      knobs[knob] = coerceKnobValue(knob, value, { label: `--runs ${key}`, field: key });
      continue;
    }
    switch (key) {
      case 'model':
      case 'gpu':
        out[key] = value;
        break;
      case 'gpus': {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 1) throw bad(`gpus must be a positive integer, got "${value}"`, 'gpus');
        out.gpus = n;
        break;
      }
      case 'source_format': {
        const f = SourceFormat.safeParse(value);
        if (!f.success) throw bad(`source_format must be one of ${SourceFormat.options.join(', ')}, got "${value}"`, 'source_format');
        out.source_format = f.data;
        break;
      }
      default:
        throw bad(`unknown key "${key}"; the keys are ${RUN_FILTER_KEYS.join(', ')}`, key);
    }
  }
  if (Object.keys(knobs).length === 0) return out;
  return { ...out, config: validateServerConfig(knobs, '--runs') };
}
