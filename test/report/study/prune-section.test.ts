import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pruneSection } from '../../../src/report/study/sections.js';
import type { StudyAnalysis } from '../../../src/report/study/types.js';

const prune = {
  space: 'search-spaces/vllm.yaml',
  context: { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: 'chat', max_request_tokens: 2048 },
  attribution: 'first-match' as const,
  points_before: 1000,
  points_after: 400,
  rules: [{ id: 'C13', kind: 'memory', removed: 600, require: 'true', source: 'vLLM', message: 'does not fit' }],
  evaluations: 10,
  method: 'exact' as const,
  samples: null,
  costliest: null,
};
const html = (p: object): string => {
  const s = pruneSection({ prune: p } as unknown as StudyAnalysis);
  assert.equal(s.kind, 'html');
  return (s as { html: string }).html;
};

test('the report says when the pruned counts are a sample’s estimate, and not when they are exact', () => {
  assert.doesNotMatch(html(prune), /estimated/);
  assert.match(html({ ...prune, method: 'estimate', samples: 20000 }), /These counts are estimated from 20,000 configurations drawn uniformly/);
});
