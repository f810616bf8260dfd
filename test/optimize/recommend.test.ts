import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Slo } from '../../src/domain/index.js';
import { recommend } from '../../src/optimize/recommend.js';
import { fitSurrogate, type Surrogate, type TrainingRow } from '../../src/surrogate/surrogate.js';
import { createRng } from '../../src/util/rng.js';
import { context, encoder, makeRows, names, source, TOY_SPEC } from '../surrogate/fixtures.js';

const SPEC = TOY_SPEC;

test('recommend leaves out the configurations its history saw fall behind the load, though they have the most throughput', async () => {
  // The toy world's largest batches (max_num_seqs ≥ 256) have the most throughput, but in this history
  // their queues grew without bound: their runs teach throughput and ITL, not TTFT (surrogate/targets.ts).
  const { rows, configs } = makeRows(240, 11);
  const history: TrainingRow[] = rows.map((r, i) => {
    if (!r.started || (configs[i]?.max_num_seqs ?? 0) < 256) return r;
    const { ttft_p99_ms: _queue, ...kept } = r.targets;
    return { ...r, targets: kept, saturated: true };
  });
  const surrogate = await fitSurrogate(history, names, SPEC, createRng(12));
  const ask = (s: Surrogate, slo: Slo = { ttft_p99_ms: 400 }) =>
    recommend({ surrogate: s, context, encoder, source, slo, historyRuns: history.length, rng: createRng(13), candidates: 400, keep: 400 });
  const rec = ask(surrogate);
  assert.ok(rec.best !== null);
  for (const c of [rec.best, ...rec.pareto]) assert.ok((c.config.max_num_seqs ?? 256) < 256, JSON.stringify(c.config));
  // With no SLO at all, a configuration that falls behind is still no answer.
  const open = ask(surrogate, {});
  assert.ok(open.best !== null);
  for (const c of [open.best, ...open.pareto]) assert.ok((c.config.max_num_seqs ?? 256) < 256, JSON.stringify(c.config));
  // Without the classifier the same regressors see nothing wrong with them, and pick one.
  const { sustain: _classifier, ...blind } = surrogate;
  assert.ok((ask(blind).best?.config.max_num_seqs ?? 0) >= 256);
});
