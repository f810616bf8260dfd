import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import type { ServerConfig } from '../../src/domain/index.js';
import { classifyFailure } from '../../src/optimize/failure-classes.js';
import { learnRules, matchesRule, ruleFor, type FailureEvidence } from '../../src/optimize/failure-rules.js';
import { resolveConfig } from '../../src/physics/index.js';

const catalog = defaultCatalog();
const hw = catalog.gpu('H100-SXM');
const model = catalog.model('llama-3.1-8b');
const resolved = (c: ServerConfig): ReturnType<typeof resolveConfig> => resolveConfig(c, hw, model);

function evidence(number: number, config: ServerConfig, message: string, started = false, study = 's'): FailureEvidence {
  return { study, number, config: resolved(config), failure: classifyFailure({ reason: message, started }) };
}

const refusal = (prompt: number, out: number, mml: number): string =>
  `This model's maximum context length is ${mml} tokens. However, you requested ${prompt + out} tokens (${prompt} in the messages, ${out} in the completion). Please reduce the length of the messages or completion.`;

test('prompt-length refusals become one requirement on max_model_len, the longest request seen', () => {
  const rules = learnRules([evidence(2, { max_model_len: 2048 }, refusal(2240, 200, 2048), true), evidence(5, { max_model_len: 2048 }, refusal(2100, 200, 2048), true)], 's');
  assert.equal(rules.length, 1);
  const [r] = rules;
  assert.ok(r !== undefined);
  assert.equal(r.class, 'prompt_too_long');
  assert.equal(r.scope, 'workload');
  assert.equal(r.text, 'max_model_len >= 2,440: trials 2, 5 failed with prompts of 2,240 tokens');
  assert.ok(matchesRule(r, resolved({ max_model_len: 2048 })));
  assert.ok(matchesRule(r, resolved({ max_model_len: 2439 })));
  assert.ok(!matchesRule(r, resolved({ max_model_len: 2440 })));
  // Unset max_model_len resolves to the model's native context: allowed.
  assert.ok(!matchesRule(r, resolved({})));
});

test('a KV-cache shortfall rules out what is at least as demanding, and only that', () => {
  const msg =
    "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.47 GiB). Based on the available memory, the estimated maximum model length is 77584. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
  const [r] = learnRules([evidence(3, { max_model_len: 131072, gpu_memory_utilization: 0.4 }, msg)], 's');
  assert.ok(r !== undefined);
  assert.equal(r.class, 'kv_cache_too_small');
  assert.match(r.text, /^avoid .*max_model_len > 77,584.*: trial 3 failed: the KV cache holds 77,584 tokens$/);
  assert.ok(matchesRule(r, resolved({ max_model_len: 131072, gpu_memory_utilization: 0.35 })));
  assert.ok(matchesRule(r, resolved({ max_model_len: 100000, gpu_memory_utilization: 0.4 })));
  // More memory, a shorter context, fp8 KV or a second GPU: not the same failure.
  assert.ok(!matchesRule(r, resolved({ max_model_len: 131072, gpu_memory_utilization: 0.6 })));
  assert.ok(!matchesRule(r, resolved({ max_model_len: 65536, gpu_memory_utilization: 0.4 })));
  assert.ok(!matchesRule(r, resolved({ max_model_len: 131072, gpu_memory_utilization: 0.4, kv_cache_dtype: 'fp8' })));
  assert.ok(!matchesRule(r, resolved({ max_model_len: 131072, gpu_memory_utilization: 0.4, tensor_parallel_size: 2 })));
});

test('overlapping regions merge; classes that name no knob make no rule', () => {
  const oom = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 480.00 MiB. GPU 0 has a total capacity of 79.18 GiB of which 400.00 MiB is free.';
  const rules = learnRules([
    evidence(4, { gpu_memory_utilization: 0.95 }, oom, true),
    evidence(7, { gpu_memory_utilization: 0.98 }, oom, true),
    evidence(8, {}, 'command outlived the 600000 ms trial timeout and was killed'),
    evidence(9, {}, 'Segmentation fault (core dumped)'),
    evidence(1, { quantization: 'fp8' }, 'ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 89. Current capability: 80.', false, 'older'),
  ], 's');
  assert.deepEqual(rules.map((r) => r.class).sort(), ['oom_runtime', 'unsupported_quantization']);
  const oomRule = rules.find((r) => r.class === 'oom_runtime');
  // The 0.98 region lies inside the 0.95 one: one rule, both trials.
  assert.deepEqual(oomRule?.trials.map((t) => t.number).sort(), [4, 7]);
  assert.match(oomRule?.text ?? '', /gpu_memory_utilization >= 0\.95.*trials 4, 7 failed: out of memory at run time/);
  const q = rules.find((r) => r.class === 'unsupported_quantization');
  assert.match(q?.text ?? '', /^avoid quantization = fp8: trial older#1 failed/);
  assert.equal(ruleFor(rules, resolved({ quantization: 'fp8' }))?.class, 'unsupported_quantization');
  assert.equal(ruleFor(rules, resolved({ gpu_memory_utilization: 0.9 })), null);
});

test('memory rules include the batch knobs that free memory; a prompt alone past the limit needs one token more', () => {
  const oom = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 480.00 MiB.';
  const [r] = learnRules([evidence(2, { gpu_memory_utilization: 0.95, max_num_seqs: 1024, max_num_batched_tokens: 16384 }, oom, true)], 's');
  assert.ok(r !== undefined);
  assert.ok(matchesRule(r, resolved({ gpu_memory_utilization: 0.96, max_num_seqs: 1024, max_num_batched_tokens: 16384 })));
  assert.ok(!matchesRule(r, resolved({ gpu_memory_utilization: 0.96, max_num_seqs: 128, max_num_batched_tokens: 2048 })), 'a smaller batch is not the same failure');
  // vLLM counts a negative completion when the prompt alone is past the limit: the rule still covers the failing length.
  const [p] = learnRules([evidence(1, { max_model_len: 4096 }, "This model's maximum context length is 4096 tokens. However, you requested 4096 tokens (5000 in the prompt, -904 in the completion).", true)], 's');
  assert.ok(p !== undefined && matchesRule(p, resolved({ max_model_len: 4096 })) && !matchesRule(p, resolved({ max_model_len: 8192 })), JSON.stringify(p));
  // bfloat16 on an old GPU names no knob, whatever the KV dtype was.
  assert.deepEqual(learnRules([evidence(1, { kv_cache_dtype: 'fp8' }, 'ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5.')], 's'), []);
});
