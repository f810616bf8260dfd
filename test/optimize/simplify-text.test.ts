import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vllmServeArgs, type KnobValue, type ServerConfig } from '../../src/domain/index.js';
import type { AttributionStep } from '../../src/optimize/simplify.js';
import { explanationLines, type Explanation } from '../../src/optimize/simplify-text.js';
import { runCli } from '../helpers/cli.js';
import { PROJECT_ROOT } from '../../src/catalog/index.js';

// A pick that turns a boolean off: the line a user pastes must say --no-enable-prefix-caching, as the
// `vllm serve` command does; `--enable-prefix-caching false` is refused by vLLM and by `sim run`.
const pick = { block_size: 128, enable_prefix_caching: false, kv_cache_dtype: 'fp8_e4m3', enable_chunked_prefill: true } satisfies ServerConfig & Record<string, KnobValue>;
const simplified = { enable_prefix_caching: false, kv_cache_dtype: 'fp8_e4m3' } satisfies ServerConfig & Record<string, KnobValue>;
const step = (knobs: Record<string, KnobValue>, figure: number): AttributionStep => ({ knobs, figure, gain_pct: 5, meets_slo: true, p99_ttft_ms: 100, p99_itl_ms: 20, source: 'simulated' });
const explanation: Explanation = {
  simplification: {
    figure: 'output_throughput_per_gpu',
    tolerance_rel: 0.03,
    source: 'simulated',
    before: { changed: pick, figure: 1010, meets_slo: true },
    after: { changed: simplified, figure: 1000, meets_slo: true },
    reverted: [{ knob: 'block_size', pick_value: 128, default_value: 16, figure_change_pct: -1 }],
  },
  attribution: {
    figure: 'output_throughput_per_gpu',
    defaults: { ...step({}, 900), gain_pct: null },
    steps: [step({ kv_cache_dtype: 'fp8_e4m3' }, 950), step({ enable_prefix_caching: false }, 1000)],
  },
  warnings: [],
};

/** The flags a printed line ends with: everything from its first `--`. */
const flagsIn = (line: string | undefined): string => {
  assert.ok(line !== undefined);
  const at = line.indexOf(' --');
  assert.ok(at > 0, `no flags in ${line}`);
  return line.slice(at + 1).replace(/\s+\(simulated\)$/, '').replace(/\s+p99 TTFT.*$/, '');
};

test('the Simplified and Why-each-flag lines print flags as vllm serve takes them: a false boolean is --no-flag', () => {
  const lines = explanationLines(explanation);
  const text = lines.join('\n');
  assert.doesNotMatch(text, /\s(true|false)\b/);
  const serve = (c: ServerConfig): string => vllmServeArgs('', c).slice(2).join(' ');
  assert.equal(flagsIn(lines.find((l) => l.startsWith("  search's pick"))), serve(pick));
  assert.equal(flagsIn(lines.find((l) => l.startsWith('  simplified'))), serve(simplified));
  assert.match(serve(simplified), /--no-enable-prefix-caching/);
  const steps = lines.filter((l) => l.startsWith('  + '));
  assert.equal(steps.length, 2);
  assert.match(steps[1] ?? '', /^ {2}\+ --no-enable-prefix-caching\s/);
});

test('the printed pick pastes into `lm-bench sim run` and sets what the pick sets', async () => {
  const line = explanationLines(explanation).find((l) => l.startsWith("  search's pick"));
  const flags = flagsIn(line).split(' ');
  const dir = mkdtempSync(join(tmpdir(), 'lmb-simplify-text-'));
  try {
    const run = await runCli(['sim', 'run', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--input-len', '64', '--output-len', '8', '--num-prompts', '4', ...flags, '--db', join(dir, 'a.db'), '--json'], { cwd: PROJECT_ROOT });
    assert.equal(run.status, 0, run.stderr);
    const config = (JSON.parse(run.stdout) as { server_config: Record<string, unknown> }).server_config;
    for (const [k, v] of Object.entries(pick)) assert.equal(config[k], v, k);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('joules per token print with three significant digits, so steps a few percent apart read apart', () => {
  const base = explanation.simplification;
  assert.ok(base !== null);
  const energy: Explanation = {
    simplification: { ...base, figure: 'energy_per_output_token_j', before: { changed: pick, figure: 0.0608, meets_slo: true }, after: { changed: simplified, figure: 0.0622, meets_slo: true } },
    attribution: { figure: 'energy_per_output_token_j', defaults: { ...step({}, 0.1), gain_pct: null }, steps: [step({ kv_cache_dtype: 'fp8_e4m3' }, 0.0652), step({ enable_prefix_caching: false }, 0.0622)] },
    warnings: [],
  };
  const text = explanationLines(energy).join('\n');
  assert.match(text, /search's pick\s+0\.0608 J\/token/);
  assert.match(text, /simplified\s+0\.0622 J\/token/);
  assert.match(text, /0\.0652 J\/token/);
  assert.match(text, /vLLM defaults\s+0\.100 J\/token/);
});
