import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { CONTEXT_FEATURES, featureNames } from '../../src/surrogate/features.js';
import { configKey } from '../../src/optimize/sampler.js';
import { spaceEncoder, spaceSource } from '../../src/optimize/space-source.js';
import { loadSpace } from '../../src/space/index.js';
import { createRng } from '../../src/util/rng.js';
import { context } from '../surrogate/fixtures.js';

const space = loadSpace(join(PROJECT_ROOT, 'search-spaces/vllm.yaml'));
const memoryRules = new Set(space.rules.filter((r) => r.kind === 'memory').map((r) => r.id));

test('candidates are distinct, replay from the seed and pass every non-memory rule of the space', () => {
  const src = spaceSource(space, context);
  const a = src.sample(400, createRng(1));
  const b = src.sample(400, createRng(1));
  assert.equal(a.length, 400);
  assert.deepEqual(a, b);
  assert.equal(new Set(a.map((c) => configKey(c))).size, 400);
  for (const c of a) {
    const v = space.isFeasible(c, context);
    assert.ok(v.ok || memoryRules.has(v.rule ?? ''), `${JSON.stringify(c)} broke ${v.rule}: ${v.message}`);
  }
  // 1 GPU: tensor and data parallelism must both be 1.
  assert.ok(a.every((c) => c.tensor_parallel_size === 1 && c.data_parallel_size === 1));
});

test('the encoder completes partial configs with the defaults, so {} encodes as the defaults do', () => {
  const enc = spaceEncoder(space);
  assert.deepEqual(Array.from(enc.encode({}, context)), Array.from(enc.encode(space.defaultsFor(context), context)));
  assert.equal(featureNames(enc).length, enc.featureNames.length + CONTEXT_FEATURES.length);
  const m = spaceSource(space, context).mutate(space.defaultsFor(context), createRng(2));
  assert.notDeepEqual(m, space.defaultsFor(context));
});
