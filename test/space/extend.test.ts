import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { isLmBenchError } from '../../src/errors.js';
import { loadSpace } from '../../src/space/index.js';
import { createRng } from '../../src/util/rng.js';
import { ctxOf, fixture, VLLM_SPACE } from './helpers.js';

const ctx = ctxOf('H100-SXM', 8, 'llama-3.1-8b');

test('an org policy file extends vllm.yaml: its rule prunes, its knob is added, its narrowed domain replaces, a rule is dropped', () => {
  const base = loadSpace(VLLM_SPACE);
  const org = loadSpace(fixture('org-policy.yaml'));
  assert.equal(org.name, 'vllm-org');
  assert.equal(org.files.length, 2);
  assert.ok(org.rules.some((r) => r.id === 'org.max-tp' && r.kind === 'policy'));
  assert.ok(!org.rules.some((r) => r.id === 'C10'));
  assert.equal(org.knobs.at(-1)?.name, 'long_prefill_token_threshold');
  const v = org.isFeasible({ tensor_parallel_size: 8 }, ctx);
  assert.equal(v.rule, 'org.max-tp');
  assert.equal(v.message, 'our nodes are shared: tensor_parallel_size 8 > 4');
  assert.ok(base.isFeasible({ tensor_parallel_size: 8 }, ctx).ok);
  assert.equal(org.isFeasible({ gpu_memory_utilization: 0.7 }, ctx).rule, 'domain');
  // C9 now bites: a threshold above max_model_len.
  assert.equal(org.isFeasible({ long_prefill_token_threshold: 4096, max_model_len: 2048 }, ctx).rule, 'C9');
  for (const c of org.sample(30, createRng(1), ctx)) {
    assert.ok((c.tensor_parallel_size ?? 1) <= 4);
  }
});

test('several files load in order, later rules added to earlier ones, without an extends line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-space-'));
  try {
    const policy = join(dir, 'policy.yaml');
    writeFileSync(policy, 'version: 1\nrules:\n  - id: no-fp8\n    kind: policy\n    require: config.quantization == "none"\n    message: fp8 weights are not approved\n    source: model-quality review\n');
    const s = loadSpace([VLLM_SPACE, policy]);
    assert.equal(s.rules.at(-1)?.id, 'no-fp8');
    assert.equal(s.isFeasible({ quantization: 'fp8' }, ctx).rule, 'no-fp8');
    const cycle = join(dir, 'a.yaml');
    writeFileSync(cycle, 'version: 1\nextends: a.yaml\n');
    assert.throws(() => loadSpace(cycle), (e) => isLmBenchError(e, 'LMB_ERR_SPACE_INVALID') && /extends itself/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
