import { ALL_KNOB_NAMES, parseKnobAssignments, type ServerConfig } from '../domain/index.js';
import { isLmBenchError } from '../errors.js';
import { rejected } from './json-text.js';
import type { ParsedRun } from './parsed.js';
import { isVllmServeRecord, parseVllmServeRecord } from './vllm-serve.js';

/**
 * `vllm bench sweep serve` output (vllm `vllm/benchmarks/sweep/serve.py`): an experiment
 * folder with one `SERVE-…-BENCH-…/` folder per combination, holding `run=N.json` (a `vllm bench serve`
 * result with the combination's serve and bench overrides and `run_number` merged in at the top
 * level), `summary.json` (the list of those runs) and `warmup.json` (run_number -1). The serve overrides
 * that are knobs become the run's server config; the base `--serve-cmd` is not recorded by vLLM, so its
 * knobs must come from a sidecar or flags.
 */
const KNOBS: readonly string[] = ALL_KNOB_NAMES;

export function isSweepRecord(v: unknown): v is Record<string, unknown> {
  return isVllmServeRecord(v) && typeof v['run_number'] === 'number';
}

/** A sweep run record → a run, or null for a warmup run (not a measurement). */
export function parseSweepRecord(raw: Record<string, unknown>, label: string, warnings: string[]): ParsedRun | null {
  if ((raw['run_number'] as number) < 0) {
    warnings.push(`${label}: warmup run (run_number ${String(raw['run_number'])}) skipped`);
    return null;
  }
  const run = parseVllmServeRecord(raw, label);
  const serverConfig = sweepServeParams(raw, label);
  return { ...run, hints: { ...run.hints, serverConfig } };
}

/** The knob-named top-level keys (`max_num_seqs` or `max-num-seqs`), validated like `--set`. */
export function sweepServeParams(raw: Record<string, unknown>, label: string): ServerConfig {
  const pairs: string[] = [];
  for (const [key, value] of Object.entries(raw)) {
    const name = key.replaceAll('-', '_');
    if (!KNOBS.includes(name)) continue;
    if (typeof value !== 'number' && typeof value !== 'boolean' && typeof value !== 'string') continue;
    pairs.push(`${name}=${String(value)}`);
  }
  try {
    return parseKnobAssignments(pairs);
  } catch (err) {
    if (isLmBenchError(err)) throw rejected(`${label}: serve parameter ${err.message}`, err);
    throw err;
  }
}
