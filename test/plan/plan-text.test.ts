import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatPlan } from '../../src/cli/commands/plan.js';
import type { PlanAnswer, PlanDeployment } from '../../src/plan/types.js';

// The plan's text: a GPU without a price says so, where it once printed "$–/h".

const row: PlanDeployment = {
  gpu: 'MI300X',
  gpus: 1,
  feasible: true,
  reason: null,
  replicas: 1,
  tensor_parallel_size: 1,
  config: { tensor_parallel_size: 1, max_model_len: 4096 },
  vllm_command: 'vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 1 --max-model-len 4096',
  p99_ttft_ms: 60,
  p99_itl_ms: 28.3,
  max_rate_rps: 33,
  max_users: null,
  headroom_lower_bound: false,
  output_throughput_tok_s: 3911,
  avg_power_w: 544,
  usd_per_hour: null,
  usd_per_million_output_tokens: null,
  energy_per_output_token_j: 0.139,
  source: 'estimated',
  uncertainty_pct: 75,
  price_source: null,
  figures_window: { rule: 'steady-state', duration_s: 32 },
};
const answer = (d: PlanDeployment): PlanAnswer => ({ model: 'meta-llama/Llama-3.1-8B-Instruct', traffic: { kind: 'rate', rate_rps: 20 }, slo: { ttft_p99_ms: 1000 }, objective: 'usd_per_mtok', rule: 'r', vllm_version: null, feasible: true, deployments: [d] });

test('plan text: an unpriced GPU reads "price unknown", a priced one its $/h and $ per M output tokens', () => {
  const unpriced = formatPlan(answer(row));
  assert.match(unpriced, /MI300X: 1 GPU .*\n.*price unknown \(no price for MI300X in data\/prices\.yaml: give --prices FILE\)/);
  assert.doesNotMatch(unpriced, /\$–/);
  const priced = formatPlan(answer({ ...row, gpu: 'H100-SXM', usd_per_hour: 3.9492, usd_per_million_output_tokens: 0.2805, price_source: 'data/prices.yaml' }));
  assert.match(priced, /\$3\.95\/h, \$0\.281 per M output tokens/);
});

test('plan text: a trickle of traffic keeps two significant digits of its throughput and headroom, never "0"', () => {
  // 0.001 req/s of 200 tokens: 0.2 tok/s, idle power over it; a headroom of 0.042 req/s.
  const text = formatPlan({ ...answer({ ...row, output_throughput_tok_s: 0.2, avg_power_w: 98, energy_per_output_token_j: 490, max_rate_rps: 0.042 }), traffic: { kind: 'rate', rate_rps: 0.001 } });
  // Before: "0 output tok/s, 98 W, 490.000 J/token" and "headroom 0.0 req/s".
  assert.match(text, / 0\.2 output tok\/s, 98 W, 490\.000 J\/token/);
  assert.match(text, /headroom 0\.042 req\/s/);
  // The usual sizes read as before.
  assert.match(formatPlan(answer(row)), /headroom 33\.0 req\/s; .*\n {5}3911 output tok\/s/);
  // A headroom search that passed every probe up to its cap is a lower bound.
  assert.match(formatPlan(answer({ ...row, headroom_lower_bound: true })), /headroom ≥ 33\.0 req\/s;/);
});
