import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import { main } from '../../src/cli/main.js';
import type { BenchmarkResult } from '../../src/domain/index.js';
import { costedOutcome } from '../../src/targets/costed.js';
import { captureIo } from '../helpers/cli.js';

const catalog = defaultCatalog();

test('a measured trial is priced where it ran: $/h of its GPUs and $ per million output tokens at its goodput; a failed one is left as it is', () => {
  const result = { hardware: { gpu: 'L40S', count: 4 }, output_throughput: 2000, request_throughput: 10, request_goodput: 5 } as BenchmarkResult;
  const ok = costedOutcome({ status: 'ok', result, durationMs: 1 }, catalog);
  assert.equal(ok.status, 'ok');
  const cost = ok.status === 'ok' ? ok.result.cost : undefined;
  assert.ok(cost !== undefined && cost !== null);
  assert.ok(Math.abs(cost.usd_per_hour - 4 * cost.usd_per_gpu_hour) < 1e-12);
  // Half the requests met their SLO: half the output counts.
  assert.ok(Math.abs((cost.usd_per_million_output_tokens ?? 0) - (cost.usd_per_hour / (1000 * 3600)) * 1e6) < 1e-9);
  const failed = { status: 'failed', started: false, failure: { class: 'oom', message: 'x' }, durationMs: 1 } as unknown as Parameters<typeof costedOutcome>[0];
  assert.equal(costedOutcome(failed, catalog), failed);
});

test('sim run --json carries the cost block beside the energy block', async () => {
  const io = captureIo(process.cwd(), {});
  const code = await main(['sim', 'run', '--gpu', 'H100-SXM', '--model', 'llama-3.1-8b', '--input-len', '256', '--output-len', '64', '--concurrency', '8', '--num-prompts', '60', '--json'], io);
  assert.equal(code, 0, io.err());
  const r = JSON.parse(io.out()) as BenchmarkResult;
  assert.ok(r.cost !== null && r.cost !== undefined && r.cost.usd_per_hour > 0);
  assert.match(r.cost.price_source, /data\/prices\.yaml/);
  const perM = (r.cost.usd_per_hour / (r.output_throughput * 3600)) * 1e6;
  assert.ok(r.request_goodput !== null || Math.abs((r.cost.usd_per_million_output_tokens ?? 0) / perM - 1) < 1e-9);
});
