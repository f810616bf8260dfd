import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blocksPerRequest, checkMemory, estimatedMaxModelLen, memoryModel, resolveConfig } from '../../src/physics/index.js';
import type { ServerConfig } from '../../src/domain/index.js';
import { catalog } from '../sim/helpers.js';

/**
 * The memory model against figures real vLLM servers logged at start-up. Each case names its source; the
 * figures are vLLM's own log lines, the configurations the ones the posters ran.
 */

const gptOss = (config: ServerConfig) => {
  const hw = catalog.gpu('H100-SXM');
  const model = catalog.model('gpt-oss-120b');
  const r = resolveConfig(config, hw, model);
  return { r, hw, model, mem: memoryModel(r, hw, model) };
};

test('gpt-oss-120b on one H100 at 0.95 / 1024 batched tokens: the C13 refusal needs 4.54 GiB, as vLLM logged (issue #27508)', () => {
  // https://github.com/vllm-project/vllm/issues/27508 (vLLM 0.11, `vllm serve openai/gpt-oss-120b
  // --gpu-memory-utilization 0.95 --max-num-batched-tokens 1024`): "To serve at least one request with the
  // models's max seq len (131072), (4.54 GiB KV cache is needed, ...". A request's sliding-window group is
  // budgeted window − 1 + max_num_batched_tokens tokens (plus a block), not the 128-token window alone:
  // 8192 full blocks + ⌈1151 / 16⌉ + 1 = 8265 blocks of 18 layers × 32 KiB.
  const hw = catalog.gpu('H100-SXM');
  const model = catalog.model('gpt-oss-120b');
  const config = { gpu_memory_utilization: 0.95, max_num_batched_tokens: 1024 };
  const { r } = gptOss(config);
  const failure = checkMemory(r, { hardware: hw, gpuCount: 1, model });
  assert.equal(failure?.rule, 'C13');
  assert.match(failure.message, /\(4\.54 GiB KV cache is needed/);
  assert.equal(blocksPerRequest(r, model), 8265);
});

test('gpt-oss-120b "Maximum concurrency" counts the sliding group\'s budget: 7.77x at 81,920 → 6.51x at 98,304 (vLLM 0.11.2, one H100)', () => {
  // AIMO3 gpt-oss-120b notebook changelog (Kaggle H100, vLLM 0.11.2, fp8 KV cache, 2048 batched tokens, utilization 0.96), "Mk II"
  // version 18: "Maximum concurrency for 98,304 tokens per request: 6.51x (from 7.77x)" when the context went from
  // 81,920 to 98,304 on the same pool. vLLM divides the pool by 5120 + 137 and 6144 + 137 blocks (the sliding
  // group's ⌈(127 + 2048) / 16⌉ + 1); dividing by the full-attention blocks alone gives a ratio of 1.2 (6.48x).
  const at = (len: number) => gptOss({ max_model_len: len, max_num_batched_tokens: 2048, kv_cache_dtype: 'fp8', gpu_memory_utilization: 0.96 }).mem;
  const short = at(81_920);
  const long = at(98_304);
  assert.ok(short.numBlocks > 0);
  assert.equal(short.numBlocks, long.numBlocks, 'max_model_len does not move the pool');
  const ratio = short.maxConcurrency / long.maxConcurrency;
  // 7.77 and 6.51 are rounded to 0.01: the logged ratio lies in [7.765 / 6.515, 7.775 / 6.505].
  assert.ok(ratio >= 7.765 / 6.515 && ratio <= 7.775 / 6.505, `ratio ${ratio}`);
});

test('full-attention models keep vLLM\'s plain figures: blocks ÷ ⌈max_model_len / 16⌉, estimate = blocks × 16', () => {
  // https://github.com/vllm-project/vllm/pull/12569: "# GPU blocks: 1381 … Maximum concurrency for 2048 tokens per
  // request: 10.79x" (1381 / 128) for a dense Llama: no local-attention term.
  const hw = catalog.gpu('H100-SXM');
  const model = catalog.model('llama-3.1-8b');
  const r = resolveConfig({ max_model_len: 2048 }, hw, model);
  assert.equal(blocksPerRequest(r, model), 128);
  const mem = memoryModel(r, hw, model);
  assert.equal(mem.maxConcurrency, mem.numBlocks / 128);
  const long = resolveConfig({ max_model_len: 131_072 }, hw, model);
  assert.equal(estimatedMaxModelLen(long, model, 1381), 1381 * 16);
});

test('the C13 estimate of the longest context searches with the sliding budget, as vLLM does, and never exceeds the pool', () => {
  const { r, model, mem } = gptOss({ gpu_memory_utilization: 0.95, max_num_batched_tokens: 1024 });
  const estimate = estimatedMaxModelLen(r, model, mem.numBlocks);
  assert.ok(blocksPerRequest(r, model, estimate) <= mem.numBlocks);
  assert.ok(blocksPerRequest(r, model, estimate + 1) > mem.numBlocks);
  assert.equal(estimate, (mem.numBlocks - 73) * 16, 'the pool less the sliding group\'s 73 blocks, in tokens');
  assert.equal(estimatedMaxModelLen(r, model, 0), 0);
});
