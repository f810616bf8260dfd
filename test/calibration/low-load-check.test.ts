import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { lowLoadCheck, lowLoadSection, parseLowLoadRows } from '../../src/calibration/low-load-check.js';
import { isLmBenchError } from '../../src/errors.js';

const catalog = defaultCatalog();
const file = join(PROJECT_ROOT, 'data', 'calibration', 'gpustack', 'qwen3_8b_h100_latency.csv');
const text = readFileSync(file, 'utf8');

test('the shipped rows read as printed upstream: four vLLM concurrencies, SGLang and TensorRT-LLM at 4', () => {
  const rows = parseLowLoadRows(text, file);
  assert.deepEqual(rows.map((r) => `${r.engine}@${r.concurrency}`), ['vllm@1', 'vllm@2', 'vllm@4', 'vllm@8', 'sglang@4', 'tensorrt-llm@4']);
  const [one] = rows;
  assert.equal(one?.meanTtftMs, 59.01);
  assert.equal(one?.meanTpotMs, 7.28);
  assert.ok(Math.abs((one?.meanInputTokens ?? 0) - 232.6) < 1e-9);
  assert.ok(Math.abs((one?.meanOutputTokens ?? 0) - 220.61) < 1e-9);
});

test('a bad figure names the file, line and column', () => {
  const bad = text.replace('0.60,59.01', '0.60,n/a');
  assert.throws(
    () => parseLowLoadRows(bad, 'g.csv'),
    (e: unknown) => isLmBenchError(e, 'LMB_ERR_CONFIG_INVALID') && /g\.csv:2: mean_ttft_ms must be a positive number, got "n\/a"/.test((e as Error).message),
  );
  // A count must be whole: half a user is a typo, not a measurement.
  const [header = '', first = ''] = text.split('\n');
  assert.throws(
    () => parseLowLoadRows(`${header}\n${first.replace(/^vllm,0\.11\.0,1,/, 'vllm,0.11.0,1.5,')}\n`, 'h.csv'),
    (e: unknown) => isLmBenchError(e, 'LMB_ERR_CONFIG_INVALID') && /h\.csv:2: max_concurrency must be a whole number, got "1\.5"/.test((e as Error).message),
  );
});

test('the vLLM rows are simulated at their release, the other engines only shown, and the section lays both out', () => {
  const rows = parseLowLoadRows(text, file).filter((r) => r.concurrency === 4);
  const results = lowLoadCheck(rows, catalog, catalog.profile);
  const [vllm, sglang, trt] = results;
  assert.ok(vllm?.sim !== null && vllm?.sim !== undefined);
  // Four users of 233-token prompts on one H100: a few tens of milliseconds to the first token, decode steps of a few.
  assert.ok(vllm.sim.meanTtftMs > 5 && vllm.sim.meanTtftMs < 200, String(vllm.sim.meanTtftMs));
  assert.ok(vllm.sim.meanTpotMs > 3 && vllm.sim.meanTpotMs < 15, String(vllm.sim.meanTpotMs));
  assert.equal(sglang?.sim, null);
  assert.equal(trt?.sim, null);
  const md = lowLoadSection(results);
  assert.match(md, /\| vllm 0\.11\.0 \| 4 \| 64\.0 \| \d+\.\d \| [+-]\d+\.\d% \|/);
  assert.match(md, /\| sglang 0\.5\.3\.post3 \| 4 \| 27\.7 \| – \| – \|/);
});
