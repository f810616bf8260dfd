import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerConfig } from '../../src/domain/index.js';
import { pickRule } from '../../src/optimize/objectives.js';
import { attributePath, changedKnobs, effectiveFlags, simplifyPick, type Evaluate } from '../../src/optimize/simplify.js';

// A world where two knobs carry the gain and two are noise: fp8 weights +40%, a bigger batch +15%,
// block size and memory fraction ±1%. Its figures are exact, so every expectation is worked by hand.
const defaults: ServerConfig = { max_num_seqs: 256, quantization: 'none', block_size: 16, gpu_memory_utilization: 0.9 };
const pick: ServerConfig = { max_num_seqs: 1024, quantization: 'fp8', block_size: 128, gpu_memory_utilization: 0.76 };

// vLLM's resolution in this world: an unset knob takes its default.
const resolve = (c: ServerConfig): ServerConfig => ({ ...defaults, ...c });
const judges = { feasible: (): boolean => true, resolve };

function world(opts: { ttftLimitMs?: number } = {}): { evaluate: Evaluate; calls: () => number } {
  let calls = 0;
  const evaluate: Evaluate = (configs) =>
    configs.map((given) => {
      calls += 1;
      const c = resolve(given);
      const tput = 1000 * (c.quantization === 'fp8' ? 1.4 : 1) * (c.max_num_seqs === 1024 ? 1.15 : 1) * (c.block_size === 128 ? 1.01 : 1) * (c.gpu_memory_utilization === 0.76 ? 0.995 : 1);
      // The batch costs latency: 1024 sequences wait longer for their first token.
      const ttft = c.max_num_seqs === 1024 ? 300 : 200;
      return { values: { output_throughput_per_gpu: tput, ttft_p99_ms: ttft }, meetsSlo: ttft <= (opts.ttftLimitMs ?? 1000), source: 'predicted' as const };
    });
  return { evaluate, calls: () => calls };
}
const rule = pickRule('goodput');

test('knobs whose change is within the tolerance go back to vLLM’s defaults; those that carry the gain stay', () => {
  const w = world();
  const s = simplifyPick({ pick, rule, toleranceRel: 0.03, evaluate: w.evaluate, ...judges });
  assert.ok(s !== null);
  assert.deepEqual([...s.changed].sort(), ['max_num_seqs', 'quantization']);
  assert.deepEqual(s.reverted.map((r) => r.knob).sort(), ['block_size', 'gpu_memory_utilization']);
  // Together the reverts cost no more than the tolerance against the original pick.
  const before = s.pick_evaluation.values.output_throughput_per_gpu ?? 0;
  const after = s.evaluation.values.output_throughput_per_gpu ?? 0;
  assert.ok(after >= before * 0.97 && after < before, `${after} against ${before}`);
  assert.ok(Math.abs(after - 1000 * 1.4 * 1.15) < 1e-9);
  // 2n judgements at most (the pick, each knob alone, then each kept revert together): not n².
  assert.ok(w.calls() <= 1 + 2 * 4, `${w.calls()} evaluations`);
});

test('a tolerance of zero keeps every knob that gains anything; a revert that breaks an SLO is never taken', () => {
  const strict = simplifyPick({ pick, rule, toleranceRel: 0, evaluate: world().evaluate, ...judges });
  assert.deepEqual(strict?.reverted.map((r) => r.knob), ['gpu_memory_utilization'], 'only the knob that costs throughput goes back');
  // With a TTFT limit of 250 ms the pick itself misses, so there is nothing to simplify against.
  const missing = simplifyPick({ pick, rule, toleranceRel: 0.5, evaluate: world({ ttftLimitMs: 250 }).evaluate, ...judges });
  assert.deepEqual(missing?.reverted, []);
  // A knob the caller keeps is never reverted.
  const kept = simplifyPick({ pick, rule, toleranceRel: 0.03, evaluate: world().evaluate, ...judges, keep: ['block_size'] });
  assert.ok(kept?.changed.includes('block_size'));
});

test('the path from the defaults takes the biggest gain first, and its steps multiply to the whole gain', () => {
  const target: ServerConfig = { max_num_seqs: 1024, quantization: 'fp8' };
  const a = attributePath({ target, rule, evaluate: world().evaluate, feasible: judges.feasible });
  assert.equal(a.defaults.figure, 1000);
  assert.deepEqual(a.steps.map((s) => Object.keys(s.knobs)), [['quantization'], ['max_num_seqs']]);
  assert.ok(Math.abs((a.steps[0]?.gain_pct ?? 0) - 40) < 1e-9);
  assert.ok(Math.abs((a.steps[1]?.gain_pct ?? 0) - 15) < 1e-9);
  assert.equal(a.steps[1]?.p99_ttft_ms, 300);
  assert.equal(a.steps.at(-1)?.figure, 1000 * 1.4 * 1.15);
});

test('knobs the rules only accept together are one step', () => {
  const target: ServerConfig = { max_num_seqs: 1024, quantization: 'fp8', block_size: 128 };
  // A rule: a batch of 1024 needs block size 128 (and the other way round).
  const bound = (c: ServerConfig): boolean => {
    const full = resolve(c);
    return (full.max_num_seqs === 1024) === (full.block_size === 128);
  };
  const a = attributePath({ target, rule, evaluate: world().evaluate, feasible: bound });
  assert.deepEqual(a.steps.map((s) => Object.keys(s.knobs).sort()), [['quantization'], ['block_size', 'max_num_seqs']]);
});

test('a flag set to what vLLM would pick anyway is no flag: the pick is stated as the flags that change something', () => {
  // A derived default, as vLLM's cudagraph size follows max_num_seqs: setting it to 2 × max_num_seqs changes nothing.
  const derived = (c: ServerConfig): ServerConfig => {
    const mns = c.max_num_seqs ?? 256;
    return { max_num_seqs: mns, max_cudagraph_capture_size: c.max_cudagraph_capture_size ?? Math.min(2 * mns, 512), block_size: c.block_size ?? 16 };
  };
  assert.deepEqual(effectiveFlags({ max_num_seqs: 32, max_cudagraph_capture_size: 64, block_size: 16 }, derived), { max_num_seqs: 32 });
  assert.deepEqual(effectiveFlags({ max_num_seqs: 32, max_cudagraph_capture_size: 512 }, derived), { max_num_seqs: 32, max_cudagraph_capture_size: 512 }, '512 is not the default for 32 sequences');
  const s = simplifyPick({ pick: { ...pick, max_cudagraph_capture_size: 512 }, rule, toleranceRel: 0.03, evaluate: world().evaluate, ...judges });
  assert.equal(Object.keys(s?.pick ?? {}).includes('max_cudagraph_capture_size'), true, 'in this world 512 is a flag the pick sets');
});

test('changed knobs keep the config’s own order and ignore knobs it leaves unset', () => {
  assert.deepEqual(changedKnobs({ quantization: 'fp8', block_size: 16, max_num_seqs: 8 }, defaults), ['quantization', 'max_num_seqs']);
  assert.deepEqual(changedKnobs({}, defaults), []);
});

test('a knob the rules hold in place goes back once the knob that held it has', () => {
  // This world's rule: a 4,096-token max_model_len is required while chunked prefill is off (as vLLM
  // requires max_model_len ≤ max_num_batched_tokens then); both knobs are noise to the figure.
  const bound: ServerConfig = { ...pick, enable_chunked_prefill: false, max_model_len: 4096 };
  const feasible = (c: ServerConfig): boolean => !(c.enable_chunked_prefill === false && c.max_model_len === undefined);
  const s = simplifyPick({ pick: bound, rule, toleranceRel: 0.03, evaluate: world().evaluate, feasible, resolve });
  assert.ok(s !== null);
  assert.deepEqual([...s.changed].sort(), ['max_num_seqs', 'quantization']);
  const order = s.reverted.map((r) => r.knob);
  assert.ok(order.indexOf('enable_chunked_prefill') < order.indexOf('max_model_len'), order.join(', '));
  // Held alone, with chunked prefill kept off by the caller, it stays.
  const held = simplifyPick({ pick: bound, rule, toleranceRel: 0.03, evaluate: world().evaluate, feasible, resolve, keep: ['enable_chunked_prefill'] });
  assert.ok(held?.changed.includes('max_model_len'));
});
