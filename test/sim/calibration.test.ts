import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Workload } from '../../src/domain/index.js';
import { fixed, run } from './helpers.js';

/** The checklist to reproduce before trusting the simulator (docs/references/vllm-engine.md#calibration-measurements). */

const sharegpt = (n: number): Workload => ({
  name: 'sharegpt-like',
  api: 'completions',
  input_len: { dist: 'lognormal', mean: 250, std: 250, min: 4, max: 1024 },
  output_len: { dist: 'lognormal', mean: 220, std: 200, min: 4, max: 1024 },
  arrival: { kind: 'burst' },
  num_prompts: n,
  ignore_eos: true,
});

test('single-stream decode: 8B on H100 TPOT ≈ 6.5 ms (K2) and 8B on A100-40GB ≈ 75 tok/s (K1), within 15%', () => {
  const w = fixed(128, 256, { kind: 'closed', concurrency: 1 }, 6);
  const h = run('H100-SXM', 1, 'llama-3.1-8b', {}, w).result.median_tpot_ms;
  assert.ok(Math.abs(h - 6.48) / 6.48 < 0.15, `H100 TPOT ${h} ms`);
  const a = 1000 / run('A100-40GB', 1, 'llama-3.1-8b', {}, w).result.median_tpot_ms;
  assert.ok(Math.abs(a - 75) / 75 < 0.15, `A100-40GB ${a} tok/s`);
});

test('saturated H100/A100-80GB output throughput ratio: at least K5/K6’s 2.0–2.2, at most what issue 28’s A100 runs allow (2.7)', () => {
  const w = sharegpt(400);
  const h = run('H100-SXM', 1, 'llama-3.1-8b', {}, w).result.output_throughput;
  const a = run('A100-80GB', 1, 'llama-3.1-8b', {}, w).result.output_throughput;
  const ratio = h / a;
  // K5/K6 (2.0, 2.2) ran vLLM 0.5's V0 engine, whose CPU time per step, the same on both GPUs, narrows the
  // gap (LLM-Inference-Bench's V0 pairs show it: docs/calibration.md "Profiles beyond Hopper"): a floor for a
  // V1 engine. The ceiling: on vLLM 0.15.1 the A100 ran 15–23% slower than the profile that gave 2.21 here
  // (issue 28), so at most 2.21 × 1.23 ≈ 2.7.
  assert.ok(ratio >= 2.0 * 0.97 && ratio <= 2.7, `ratio ${ratio}`);
});

test('70B-FP8 TP scaling 2→4→8 H100s is sublinear with diminishing returns (K7)', () => {
  const w = sharegpt(300);
  const thr = [2, 4, 8].map((tp) => run('H100-SXM', tp, 'llama-3.1-70b', { tensor_parallel_size: tp, quantization: 'fp8' }, w).result.output_throughput);
  const [t2, t4, t8] = thr as [number, number, number];
  assert.ok(t4 / t2 > 1.05 && t4 / t2 < 1.9, `2→4 ×${t4 / t2}`);
  assert.ok(t8 / t4 > 1.0 && t8 / t4 < t4 / t2, `4→8 ×${t8 / t4} after ×${t4 / t2}`);
});
