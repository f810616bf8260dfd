import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import type { ServerConfig } from '../../src/domain/index.js';
import { classifyFailure } from '../../src/optimize/failure-classes.js';
import { learnRules, matchesRule, ruleFor, type FailureEvidence, type RuleBound } from '../../src/optimize/failure-rules.js';
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

test("a stated bound is the rule: llama.cpp's n_seq_max limit rules out max_num_seqs above it, and only that", () => {
  const said = 'command exited 1: llama_init_from_model: failed to initialize the context: n_seq_max must be <= 64\nsrv  llama_server: exiting due to model loading error';
  const [r] = learnRules([evidence(1, { max_num_seqs: 128 }, said)], 's');
  assert.ok(r !== undefined);
  assert.equal(r.class, 'knob_limit');
  assert.deepEqual(r.avoid, [{ knob: 'max_num_seqs', op: '>', value: 64 }]);
  assert.match(r.text, /^max_num_seqs <= 64: trial 1 failed: the server caps n_seq_max/);
  assert.ok(matchesRule(r, resolved({ max_num_seqs: 65 })));
  assert.ok(matchesRule(r, resolved({})), "vLLM's default max_num_seqs on an H100 is above 64");
  assert.ok(!matchesRule(r, resolved({ max_num_seqs: 64 })));
});

test('a KV-cache allocation that failed outright rules out more context and more sequences, whatever the memory share', () => {
  const said = 'llama_kv_cache_init: failed to allocate buffer for kv cache\nllama_init_from_model: llama_kv_cache_init() failed for self-attention cache';
  const [r] = learnRules([evidence(2, { max_model_len: 65536, max_num_seqs: 32, gpu_memory_utilization: 0.8 }, said)], 's');
  assert.ok(r !== undefined);
  assert.equal(r.class, 'kv_cache_too_small');
  assert.match(r.text, /trial 2 failed: the KV cache could not be allocated$/);
  assert.ok(matchesRule(r, resolved({ max_model_len: 131072, max_num_seqs: 64, gpu_memory_utilization: 0.95 })));
  assert.ok(!matchesRule(r, resolved({ max_model_len: 32768, max_num_seqs: 32, gpu_memory_utilization: 0.8 })));
  assert.ok(!matchesRule(r, resolved({ max_model_len: 65536, max_num_seqs: 16 })));
});

/** A failure as the study's book records it: whether the server started, and the knobs the trial chose. */
const launchFailure = (number: number, config: ServerConfig, message: string, started: boolean | null = false): FailureEvidence => ({ ...evidence(number, config, message, started === true), started, chosen: Object.keys(config) });

/** A trial that got further than a failure: measured, or started and failed under load. */
const bound = (number: number, config: ServerConfig, measured = true): RuleBound => ({ study: 's', number, config: resolved(config), measured });
const unknownSaid = 'command exited 1: main: loading model\nllama_server: unrecognised engine error 0x7f: slot setup aborted';

test('an unclassified failure teaches by contrast: the knobs outside everything that started, bounded by it', () => {
  const worked = [bound(0, { max_num_seqs: 16 }), bound(1, { max_num_seqs: 48, enforce_eager: false })];
  const [r] = learnRules([launchFailure(2, { max_num_seqs: 96 }, unknownSaid)], 's', worked);
  assert.ok(r !== undefined, 'an unknown failure makes a rule');
  assert.equal(r.class, 'unknown');
  // One failure proves the least: at least as far out as it was, on the knob no success reached.
  assert.deepEqual(r.avoid, [{ knob: 'max_num_seqs', op: '>=', value: 96 }]);
  assert.match(r.text, /^max_num_seqs < 96: trial 2 failed \(unknown\), unlike every trial that got further: ".*slot setup aborted"$/);
  for (const w of worked) assert.ok(!matchesRule(r, w.config), `trial ${w.number} worked, so no rule may cover it`);
  // Without a trial that started there is nothing to contrast with, and without started it is not the configuration's doing.
  assert.deepEqual(learnRules([launchFailure(2, { max_num_seqs: 96 }, unknownSaid)], 's', []), []);
  assert.deepEqual(learnRules([launchFailure(2, { max_num_seqs: 96 }, unknownSaid, null)], 's', worked), []);
});

test('the same unclassified failure twice rules out the whole region past what worked, so no third trial falls in it', () => {
  const worked = [bound(0, { max_num_seqs: 16 }), bound(1, { max_num_seqs: 64 })];
  const twice = [
    launchFailure(2, { max_num_seqs: 128, enforce_eager: true }, unknownSaid),
    launchFailure(3, { max_num_seqs: 96 }, unknownSaid.replace('0x7f', '0x3a')),
  ];
  const rules = learnRules(twice, 's', worked);
  const r = rules.find((x) => x.trials.length === 2);
  assert.ok(r !== undefined, JSON.stringify(rules));
  assert.deepEqual(r.avoid, [{ knob: 'max_num_seqs', op: '>', value: 64 }]);
  assert.match(r.text, /trials 2, 3 failed the same way/);
  // Between the last success and the failures (80 was the third proposal in the report) is ruled out too.
  assert.ok(matchesRule(r, resolved({ max_num_seqs: 80 })));
  assert.ok(!matchesRule(r, resolved({ max_num_seqs: 64 })));
  // The first failure's narrower region folds into the wider rule: one rule, both trials.
  assert.equal(rules.length, 1, JSON.stringify(rules.map((x) => x.text)));
  // Different words are different failures: each rules out only its own dominance region, not the gap.
  const apart = learnRules([twice[0] as FailureEvidence, launchFailure(3, { max_num_seqs: 96 }, 'command exited 1: something else entirely went wrong')], 's', worked);
  assert.ok(apart.some((x) => matchesRule(x, resolved({ max_num_seqs: 96 }))) && !apart.some((x) => matchesRule(x, resolved({ max_num_seqs: 80 }))), JSON.stringify(apart.map((x) => x.text)));
  assert.ok(apart.every((x) => !x.text.includes('the same way')), JSON.stringify(apart.map((x) => x.text)));
});
