import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelSpec, ServerConfig } from '../../src/domain/index.js';
import { makeStepModel, priceDecodeMs, pricePrefillMs, resolveConfig } from '../../src/physics/index.js';
import { catalog } from '../sim/helpers.js';

const h100 = catalog.gpu('H100-SXM');
const profile = catalog.profileFor(h100);
const stepModel = (model: ModelSpec, config: ServerConfig = {}, p = profile) => makeStepModel(resolveConfig(config, h100, model), h100, model, p);
const gptOss = catalog.model('gpt-oss-120b');

test('MoE decode reads only the experts its tokens touch: a step of 1 costs far less than reading every expert', () => {
  const m = stepModel(gptOss, { tensor_parallel_size: 2 });
  const one = priceDecodeMs(m, 1, 1000);
  const big = priceDecodeMs(m, 256, 1000);
  // Every expert slice on one GPU at the HBM rate: ≈ 60.9 GB / 2 over 3.35 TB/s ≥ 9 ms; one token reads 4 of 128.
  assert.ok(one < 6, `batch 1: ${one.toFixed(2)} ms`);
  assert.ok(big > 2 * one, `batch 256: ${big.toFixed(2)} ms vs ${one.toFixed(2)}`);
  // The growth slows once every expert is touched: 8 → 16 costs more than 128 → 136.
  const d8 = priceDecodeMs(m, 16, 1000) - priceDecodeMs(m, 8, 1000);
  const d128 = priceDecodeMs(m, 136, 1000) - priceDecodeMs(m, 128, 1000);
  assert.ok(d8 > d128, `${d8} vs ${d128}`);
});

test('a dense model of the same active size would not show that curve: its weights are read whole at batch 1', () => {
  const dense = catalog.model('llama-3.1-8b');
  const m = stepModel(dense);
  const ratio = priceDecodeMs(m, 64, 1000) / priceDecodeMs(m, 1, 1000);
  const moe = stepModel(gptOss, { tensor_parallel_size: 2 });
  const moeRatio = priceDecodeMs(moe, 64, 1000) / priceDecodeMs(moe, 1, 1000);
  assert.ok(moeRatio > ratio, `MoE ×${moeRatio.toFixed(2)} vs dense ×${ratio.toFixed(2)} from batch 1 to 64`);
});

test('moe_efficiency slows prefill (compute), moe_weight_efficiency slows small decodes (weight reads)', () => {
  const base = stepModel(gptOss, { tensor_parallel_size: 2 });
  const slowCompute = stepModel(gptOss, { tensor_parallel_size: 2 }, { ...profile, moe_efficiency: profile.moe_efficiency / 2 });
  const slowReads = stepModel(gptOss, { tensor_parallel_size: 2 }, { ...profile, moe_weight_efficiency: profile.moe_weight_efficiency / 2 });
  assert.ok(pricePrefillMs(slowCompute, 8192, 8192) > 1.3 * pricePrefillMs(base, 8192, 8192));
  assert.ok(priceDecodeMs(slowCompute, 4, 1000) < 1.1 * priceDecodeMs(base, 4, 1000));
  assert.ok(priceDecodeMs(slowReads, 4, 1000) > 1.15 * priceDecodeMs(base, 4, 1000));
  assert.ok(priceDecodeMs(slowReads, 256, 1000) > 1.4 * priceDecodeMs(base, 256, 1000));
  // A dense model ignores both.
  const dense = catalog.model('llama-3.1-8b');
  assert.equal(priceDecodeMs(stepModel(dense, {}, { ...profile, moe_efficiency: 0.1, moe_weight_efficiency: 0.3 }), 8, 1000), priceDecodeMs(stepModel(dense), 8, 1000));
});

test('data-parallel attention: the experts see every rank’s tokens, and pay the dispatch/combine; TP alone does not', () => {
  const tp = { tensor_parallel_size: 2 };
  const dpEp = { data_parallel_size: 2, enable_expert_parallel: true };
  const slowDispatch = { ...profile, moe_dispatch_us: profile.moe_dispatch_us * 10 };
  assert.equal(priceDecodeMs(stepModel(gptOss, tp, slowDispatch), 32, 1000), priceDecodeMs(stepModel(gptOss, tp), 32, 1000));
  assert.ok(priceDecodeMs(stepModel(gptOss, dpEp, slowDispatch), 32, 1000) > priceDecodeMs(stepModel(gptOss, dpEp), 32, 1000) + 1);
});

test('sliding-window layers read at most the window: long-context decode is cheaper than if every layer attended fully', () => {
  const full: ModelSpec = { ...gptOss, id: 'gpt-oss-full-attention', sliding_window: null };
  const real = stepModel(gptOss, { tensor_parallel_size: 2 });
  const all = stepModel(full, { tensor_parallel_size: 2 });
  assert.equal(real.windowTokens, 128);
  assert.equal(all.windowTokens, Number.POSITIVE_INFINITY);
  // Inside the window the two agree; at 32k of context the real model reads half the KV.
  assert.ok(Math.abs(priceDecodeMs(real, 64, 100) - priceDecodeMs(all, 64, 100)) < 1e-9);
  const long = priceDecodeMs(real, 64, 32_000);
  const longAll = priceDecodeMs(all, 64, 32_000);
  assert.ok(long < 0.85 * longAll, `${long.toFixed(2)} vs ${longAll.toFixed(2)}`);
});

test('an fp8 KV cache costs a decode what a bf16 one does per context token on the fit set’s vLLM (FlashAttention 3’s old fp8 decode on Hopper), and less on a current one', () => {
  const dense = catalog.model('llama-3.1-70b-fp8');
  const perContext = (m: ReturnType<typeof stepModel>): number => priceDecodeMs(m, 64, 4096) - priceDecodeMs(m, 64, 1024);
  const old = catalog.profileFor(h100, '0.10.2');
  const bf16 = stepModel(dense, { tensor_parallel_size: 4, kv_cache_dtype: 'auto' }, old);
  const fp8 = stepModel(dense, { tensor_parallel_size: 4, kv_cache_dtype: 'fp8' }, old);
  assert.ok(perContext(bf16) > 0.5, `bf16: ${perContext(bf16)} ms for 3,072 more tokens of context`);
  assert.ok(Math.abs(perContext(fp8) / perContext(bf16) - 1) < 0.02, `fp8 ${perContext(fp8).toFixed(3)} ms vs bf16 ${perContext(bf16).toFixed(3)} ms`);
  // From vLLM 0.14 the kernels read an fp8 cache at 0.807 of the bf16 byte rate: half the bytes in 0.62 of the time.
  const nowBf16 = stepModel(dense, { tensor_parallel_size: 4, kv_cache_dtype: 'auto' }, profile);
  const nowFp8 = stepModel(dense, { tensor_parallel_size: 4, kv_cache_dtype: 'fp8' }, profile);
  const ratio = perContext(nowFp8) / perContext(nowBf16);
  assert.ok(ratio > 0.55 && ratio < 0.7, `fp8 ÷ bf16 per context token on a current vLLM: ${ratio.toFixed(3)}`);
  assert.ok(perContext(nowBf16) < perContext(bf16), 'a current vLLM reads bf16 faster too');
});

test('request_step_us adds to every step per scheduled request, whether or not async scheduling hides the CPU time', () => {
  const dense = catalog.model('llama-3.1-8b');
  for (const async_scheduling of [true, false]) {
    const without = stepModel(dense, { async_scheduling }, { ...profile, request_step_us: 0 });
    const with20 = stepModel(dense, { async_scheduling }, { ...profile, request_step_us: 20 });
    for (const batch of [1, 64, 256]) {
      const added = priceDecodeMs(with20, batch, 1000) - priceDecodeMs(without, batch, 1000);
      assert.ok(Math.abs(added - (20 * batch) / 1000) < 1e-9, `async ${async_scheduling}, batch ${batch}: +${added} ms`);
    }
  }
});
