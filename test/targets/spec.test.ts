import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TargetSpec } from '../../src/targets/spec.js';
import { formatZodIssues } from '../../src/util/zod-issues.js';

test('a command target with a stray quote is refused when the spec is parsed, at its field', () => {
  assert.equal(TargetSpec.safeParse({ kind: 'command', command: `bash -c 'run.sh "x y"'` }).success, true);
  const r = TargetSpec.safeParse({ kind: 'command', command: `run.sh --name "a b` });
  assert.equal(r.success, false);
  if (r.success) return;
  assert.match(formatZodIssues(r.error.issues), /^command: unterminated " in command$/);
  // A slurm target's vllm: line is split at parse too (the same schema as --slurm-config files).
  const s = TargetSpec.safeParse({ kind: 'slurm', partition: 'gpu', time_limit: '30', engine: 'vllm', work_dir: '/shared/x', vllm: `apptainer exec 'vllm.sif vllm` });
  assert.equal(s.success, false);
  if (s.success) return;
  assert.deepEqual(s.error.issues.map((i) => i.path.join('.')), ['vllm']);
});

test('a sim target may name the vLLM release it imitates; binding it prices that release and keeps the name', async () => {
  const { bindSimProfile } = await import('../../src/targets/sim-target.js');
  const { defaultCatalog } = await import('../../src/catalog/index.js');
  const { openStore } = await import('../../src/store/sqlite-store.js');
  const catalog = defaultCatalog();
  const h100 = catalog.gpu('H100-SXM');
  assert.equal(TargetSpec.safeParse({ kind: 'sim', vllm_version: 'soon' }).success, false);
  const spec = TargetSpec.parse({ kind: 'sim', vllm_version: '0.12.0' });
  const store = openStore(':memory:');
  try {
    const bound = bindSimProfile(spec, store, catalog, h100);
    assert.equal(bound.kind, 'sim');
    if (bound.kind !== 'sim') return;
    assert.equal(bound.vllm_version, '0.12.0');
    assert.deepEqual(bound.profile, catalog.profileFor(h100, '0.12.0'));
    assert.notDeepEqual(bound.profile, catalog.profileFor(h100));
  } finally {
    store.close();
  }
});
