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
