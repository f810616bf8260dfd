import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Diagnosis, type ModelSpec, type ServerConfig, type Workload } from '../../src/domain/index.js';
import { diagnose } from '../../src/diagnose/classify.js';
import { startupCheck } from '../../src/physics/index.js';
import { base, server } from './evidence-fixture.js';
import { catalog, run as simulateRun } from '../sim/helpers.js';

// `--quantization fp8` is advice for a 16-bit checkpoint only: a pre-quantized one's config.json names
// its method, vLLM reads it without a flag, and another method is refused (C19).

const knob = (d: Diagnosis, name: string): Diagnosis['knobs'][number] | undefined => d.knobs.find((k) => k.knob === name);

/** A decode-bound diagnosis (ITL over its limit) of the fixture's run, for `model`'s checkpoint (absent: not known). */
function decodeBound(known: ServerConfig, model?: Pick<ModelSpec, 'native_quantization'>): Diagnosis {
  return Diagnosis.parse(diagnose({ result: base, evidence: { server: server({ running_mean: 30, running_limit: 256 }), client: null, metrics: 'vllm' }, known, slo: { itl_p99_ms: 5 }, source: 'measured', model }));
}

test('a checkpoint already in FP8 (or AWQ, or MXFP4) is not advised "set quantization to fp8"; a 16-bit one is', () => {
  for (const id of ['qwen3-32b-fp8', 'llama-3.1-8b-fp8', 'gpt-oss-20b']) {
    const d = decodeBound({}, catalog.model(id));
    assert.equal(d.bottleneck, 'decode');
    assert.equal(knob(d, 'quantization'), undefined, `${id}: ${JSON.stringify(d.knobs)}`);
  }
  const awq = decodeBound({}, { native_quantization: 'awq' });
  assert.equal(knob(awq, 'quantization'), undefined);
  const bf16 = decodeBound({}, catalog.model('llama-3.1-8b'));
  assert.deepEqual(knob(bf16, 'quantization'), { knob: 'quantization', change: 'set', to: 'fp8', why: 'half the weight bytes read per step; changes numerics, so check quality' });
  // Already set: nothing to advise whatever the checkpoint.
  assert.equal(knob(decodeBound({ quantization: 'fp8' }, catalog.model('llama-3.1-8b')), 'quantization'), undefined);
});

test('when the run does not say which checkpoint it served, the advice says it is for a 16-bit one', () => {
  const d = decodeBound({});
  const q = knob(d, 'quantization');
  assert.equal(q?.to, 'fp8');
  assert.match(q.why, /for a 16-bit checkpoint/);
});

test('simulated: an FP8 checkpoint decode-bound on an H100 gets no quantization advice, and the advice it got before would not start', () => {
  // The run the report came from: Llama-3.1-8B-Instruct-FP8 (ModelOpt) under a 5 ms ITL limit.
  const workload: Workload = { name: 'decode', api: 'completions', input_len: { dist: 'fixed', value: 128 }, output_len: { dist: 'fixed', value: 256 }, arrival: { kind: 'closed', concurrency: 8 }, num_prompts: 64, ignore_eos: true, slo: { itl_p99_ms: 5 } };
  const out = simulateRun('H100-SXM', 1, 'llama-3.1-8b-fp8', {}, workload);
  const model = catalog.model('llama-3.1-8b-fp8');
  const d = diagnose({ result: out.result, evidence: out.result.evidence ?? null, known: out.resolved, slo: workload.slo ?? null, source: 'simulated', model });
  assert.equal(d.bottleneck, 'decode');
  assert.ok(d.knobs.length > 0, 'some advice for a decode-bound run');
  assert.equal(knob(d, 'quantization'), undefined, JSON.stringify(d.knobs));
  // Following the old advice: vLLM refuses `--quantization fp8` for a ModelOpt checkpoint.
  const start = startupCheck({ quantization: 'fp8' }, { hardware: catalog.gpu('H100-SXM'), gpuCount: 1, model });
  assert.equal(start.ok ? null : start.failure.rule, 'C19');
});
