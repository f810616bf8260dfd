import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { defaultCatalog } from '../../src/catalog/index.js';
import { classifyFailure, FAILURE_CLASSES, type FailureClass } from '../../src/optimize/failure-classes.js';
import { createSimTarget } from '../../src/targets/sim-target.js';
import type { TrialInput } from '../../src/targets/types.js';

interface Entry {
  readonly id: string;
  readonly class: FailureClass;
  readonly where: 'startup' | 'http' | 'runtime';
  readonly http_status: number | null;
  readonly text: string;
  readonly facts: Record<string, number | string>;
}

/** Real vLLM failure messages (V0 and V1 engines, from vLLM's source and issues; see the README beside it). */
const corpus = JSON.parse(readFileSync(new URL('../fixtures/vllm-failures/corpus.json', import.meta.url), 'utf8')) as Entry[];

function classify(e: Entry): ReturnType<typeof classifyFailure> {
  return e.where === 'http'
    ? classifyFailure({ reason: '', started: true, httpErrors: [{ status: e.http_status, message: e.text, count: 1 }] })
    : classifyFailure({ reason: e.text, started: e.where !== 'startup', code: null });
}

/** llama.cpp's words for the same failures (a harness running llama-server behind the command target). */
const llama = JSON.parse(readFileSync(new URL('../fixtures/vllm-failures/llama-cpp.json', import.meta.url), 'utf8')) as Entry[];

test('the corpus covers every class with real messages', () => {
  const all = [...corpus, ...llama];
  for (const c of FAILURE_CLASSES) assert.ok(all.filter((e) => e.class === c).length >= 3, `${c}: at least three messages`);
  assert.equal(new Set(all.map((e) => e.id)).size, all.length);
});

test("llama.cpp's start-up refusals and KV-cache allocation failures get a class, with the bound a message states", () => {
  const wrong = llama.map((e) => ({ e, got: classify(e) })).filter((x) => x.got.class !== x.e.class);
  assert.deepEqual(wrong.map((x) => `${x.e.id}: ${x.got.class} (${x.got.evidence})`), []);
  for (const e of llama) {
    const got = classify(e).facts;
    for (const [k, v] of Object.entries(e.facts)) assert.equal(got[k], v, `${e.id}: ${k}`);
  }
  // The KV-cache allocation is told apart from vLLM's shortfall: its rule leaves gpu_memory_utilization out.
  assert.equal(classify(llama.find((e) => e.id === 'llama-kv-alloc-cuda') as Entry).facts['kind'], 'alloc');
});

test('every real vLLM failure message gets its class', () => {
  const wrong = corpus.map((e) => ({ e, got: classify(e).class })).filter((x) => x.got !== x.e.class);
  assert.deepEqual(wrong.map((x) => `${x.e.id}: ${x.got}`), []);
});

test('the numbers a message states are read as facts, the ones rules are made of exactly', () => {
  const keys = ['prompt_tokens', 'max_model_len', 'estimated_max_model_len', 'needed_gib', 'available_gib', 'quantization', 'capability', 'min_capability'];
  let checked = 0;
  for (const e of corpus) {
    const got = classify(e).facts;
    for (const k of keys) {
      if (e.facts[k] === undefined || got[k] === undefined) continue;
      assert.equal(got[k], e.facts[k], `${e.id}: ${k}`);
      checked++;
    }
  }
  assert.ok(checked >= 30, `${checked} facts checked`);
  // Where the length is stated, a prompt-length refusal always yields the length to require.
  for (const e of corpus.filter((x) => x.class === 'prompt_too_long' && typeof x.facts['prompt_tokens'] === 'number')) {
    assert.ok(typeof classify(e).facts['requested_tokens'] === 'number', `${e.id}: requested_tokens`);
  }
});

test('evidence is the line that decided, not the whole log', () => {
  for (const e of corpus) {
    const c = classify(e);
    assert.ok(c.evidence.length > 0 && c.evidence.length <= 300, e.id);
    assert.ok(!c.evidence.includes('\n'), e.id);
  }
});

test('the catalog code decides only when the words say nothing', () => {
  assert.equal(classifyFailure({ code: 'LMB_ERR_TRIAL_TIMEOUT', reason: 'command outlived the 600000 ms trial timeout and was killed' }).class, 'timeout');
  assert.equal(classifyFailure({ code: 'LMB_ERR_SERVER_CRASHED', reason: 'vllm serve exited 1 during the load run' }).class, 'crash');
  assert.equal(classifyFailure({ code: 'LMB_ERR_COMMAND_FAILED', reason: 'command exited 3: something odd' }).class, 'unknown');
  // An OOM message wins over the code that carried it.
  assert.equal(classifyFailure({ code: 'LMB_ERR_SERVER_CRASHED', reason: 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB', started: true }).class, 'oom_runtime');
});

test('the simulator fails with words the classifier reads as a real vLLM log', async () => {
  const target = createSimTarget({ catalog: defaultCatalog(), now: () => 0 });
  const base: Omit<TrialInput, 'config'> = {
    trial_id: 1,
    study: 's',
    seed: 1,
    workload: {
      name: 'w',
      api: 'completions',
      input_len: { dist: 'fixed', value: 3000 },
      output_len: { dist: 'fixed', value: 64 },
      arrival: { kind: 'closed', concurrency: 8 },
      num_prompts: 16,
      ignore_eos: true,
    },
    hardware: { gpu: 'H100-SXM', count: 1 },
    model: 'llama-3.1-70b',
    slo: {},
  };
  const cases: [TrialInput['config'], string, FailureClass][] = [
    [{ tensor_parallel_size: 1 }, 'llama-3.1-70b', 'oom_load'],
    [{ max_model_len: 131072, gpu_memory_utilization: 0.3 }, 'llama-3.1-8b', 'kv_cache_too_small'],
    [{ gpu_memory_utilization: 0.22 }, 'llama-3.1-8b', 'kv_cache_too_small'],
    [{ gpu_memory_utilization: 0.99 }, 'llama-3.1-8b', 'cuda_graph'],
  ];
  for (const [config, model, want] of cases) {
    const out = await target.runTrial({ ...base, model, config });
    assert.equal(out.status, 'failed', JSON.stringify(config));
    if (out.status !== 'failed') continue;
    assert.equal(classifyFailure({ code: out.code, reason: out.reason, started: out.started }).class, want, out.reason);
  }
  // Prompts past max_model_len: the server starts and refuses them, as vLLM's OpenAI server does.
  const served = await target.runTrial({ ...base, model: 'llama-3.1-8b', config: { max_model_len: 2048, max_num_batched_tokens: 2048 } });
  assert.equal(served.status, 'ok');
  if (served.status !== 'ok') return;
  const samples = served.result.lmb.error_samples ?? [];
  assert.ok(samples.length > 0 && served.result.failed === 16);
  const c = classifyFailure({ reason: '', started: true, httpErrors: samples });
  assert.equal(c.class, 'prompt_too_long');
  assert.equal(c.facts['prompt_tokens'], 3000);
  assert.equal(c.facts['requested_tokens'], 3064);
});

test("vLLM 0.10–0.15's max_tokens refusal gives the prompt, the answer asked for and the context", () => {
  const text = "'max_tokens' or 'max_completion_tokens' is too large: 200. This model's maximum context length is 4096 tokens and your request has 4,000 input tokens (200 > 4096 - 4000). (parameter=max_tokens, value=200)";
  const c = classifyFailure({ reason: '', started: true, httpErrors: [{ status: 400, message: text, count: 1 }] });
  assert.equal(c.class, 'prompt_too_long');
  assert.deepEqual([c.facts['prompt_tokens'], c.facts['output_tokens'], c.facts['requested_tokens'], c.facts['max_model_len']], [4000, 200, 4200, 4096]);
});
