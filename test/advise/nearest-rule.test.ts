import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerQuestion, type Answer } from '../../src/advise/answer.js';
import { formatAnswer } from '../../src/advise/text.js';
import type { Slo } from '../../src/domain/index.js';
import { catalog, chat, loaded, space } from './trained-fixture.js';


const ask = (slo: Slo): Answer =>
  answerQuestion({
    model: { info: loaded.record, surrogate: loaded.surrogate },
    question: { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: chat, workloadRef: 'chat.yaml', slo, candidates: 3000, seed: 1, keepPrecision: false },
    space,
    catalog,
    // More GPUs are beside the point here: no simulated search of them.
    simulatorFor: () => ({ profileSource: 'none', simulate: () => null, run: () => ({ ok: false as const, reason: 'not simulated' }), runtimeOomRisk: () => null }) as never,
  });

test('the relaxed SLO offered when nothing meets the asked one is one the rule (P(meets) ≥ 0.9) then meets, not the bare predicted means', () => {
  const tight = ask({ ttft_p99_ms: 200, itl_p99_ms: 20 });
  assert.equal(tight.best, null);
  const relax = tight.nearest?.changes.find((c) => c.kind === 'relax_slo');
  assert.ok(relax !== undefined, 'a relaxed SLO is offered');
  assert.match(relax.description, /as the rule asks/);
  const again = ask(relax.slo);
  assert.ok(again.best !== null, `relaxed to ${JSON.stringify(relax.slo)}, still nothing meets it:\n${formatAnswer(again)}`);
  // Each near miss says what it meets as the rule counts it; one whose means meet the limits says so rather than "misses" nothing.
  for (const c of tight.nearest?.candidates ?? []) assert.ok(Object.keys(c.would_meet).length > 0);
  assert.doesNotMatch(formatAnswer(tight), /misses ;/);
});

test('a near miss of a p90 limit says its figure is the p99 it was judged on, not a p90', () => {
  const a = ask({ ttft_p90_ms: 20, itl_p99_ms: 200 });
  assert.equal(a.best, null);
  assert.ok(a.nearest?.candidates.some((c) => c.misses.some((m) => m.slo === 'ttft_p90_ms')));
  assert.match(formatAnswer(a), /misses ttft_p90_ms \(as p99 TTFT\) \d/);
});
