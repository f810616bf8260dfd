import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PlanAnswer, PlanDeployment } from '../../src/plan/types.js';
import { planReportHtml } from '../../src/report/plan.js';

// The plan's HTML page: a small headroom keeps its significant digits in the table.

const row: PlanDeployment = {
  gpu: 'A100-80GB',
  gpus: 2,
  feasible: true,
  reason: null,
  replicas: 1,
  tensor_parallel_size: 2,
  config: { tensor_parallel_size: 2, max_model_len: 4096 },
  vllm_command: 'vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 2 --max-model-len 4096',
  p99_ttft_ms: 310,
  p99_itl_ms: 45,
  max_rate_rps: 0.042,
  max_users: null,
  headroom_lower_bound: false,
  output_throughput_tok_s: 6,
  avg_power_w: 160,
  usd_per_hour: 4.9968,
  usd_per_million_output_tokens: 231.3,
  energy_per_output_token_j: 26.7,
  source: 'estimated',
  uncertainty_pct: 75,
  price_source: 'data/prices.yaml',
  figures_window: { rule: 'steady-state', duration_s: 3000 },
};

test('plan HTML: a headroom under 1 req/s reads with two significant digits, not "0.0 req/s"', async () => {
  const a: PlanAnswer = { model: 'meta-llama/Llama-3.1-70B-Instruct', traffic: { kind: 'rate', rate_rps: 0.03 }, slo: { ttft_p99_ms: 350 }, objective: 'usd_per_mtok', rule: 'r', vllm_version: null, feasible: true, deployments: [row] };
  const html = await planReportHtml(a, { generatedAt: '2026-12-08T00:00:00Z', interactive: false });
  assert.match(html, />0\.042 req\/s</);
  assert.doesNotMatch(html, /0\.0 req\/s/);
  const usual = await planReportHtml({ ...a, deployments: [{ ...row, max_rate_rps: 11.04 }] }, { generatedAt: '2026-12-08T00:00:00Z', interactive: false });
  assert.match(usual, />11\.0 req\/s</);
  const capped = await planReportHtml({ ...a, deployments: [{ ...row, max_rate_rps: 11.04, headroom_lower_bound: true }] }, { generatedAt: '2026-12-08T00:00:00Z', interactive: false });
  assert.match(capped, />≥ 11\.0 req\/s</, 'a headroom at the search cap is a lower bound');
});
