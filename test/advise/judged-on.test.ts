import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerQuestion, type Answer, type Question } from '../../src/advise/answer.js';
import { judgedOnLines } from '../../src/advise/judged-on.js';
import { simulatedAnswer } from '../../src/advise/simulated-answer.js';
import { formatAnswer } from '../../src/advise/text.js';
import { priorSimulator } from '../../src/calibration/prior-simulator.js';
import { RecommendationAnswer, type Slo } from '../../src/domain/index.js';
import { catalog, chat, loaded, space } from './trained-fixture.js';

/**
 * The trained model predicts each latency at p50 and p99 only, so a p90 or p95 limit is judged on the
 * predicted p99 and a mean on the predicted median. The answer says so, one line a limit, in its JSON
 * (`warnings`) and its text, whether or not it has a pick; a limit judged on its own statistic adds nothing.
 */

const question = (slo: Slo): Question => ({ gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: chat, workloadRef: 'chat.yaml', slo, candidates: 1500, seed: 1, keepPrecision: false });
const ask = (slo: Slo): Answer => answerQuestion({ model: { info: loaded.record, surrogate: loaded.surrogate }, question: question(slo), space, catalog });
const judged = (a: Pick<Answer, 'warnings'>): string[] => a.warnings.filter((w) => w.includes(' judged on the '));

test('a p90 limit is said to be judged on the predicted p99 and a mean on the median, in JSON and text', () => {
  const a = ask({ ttft_p90_ms: 3000, tpot_mean_ms: 80 });
  RecommendationAnswer.parse(a);
  const lines = judged(a);
  assert.equal(lines.length, 2, JSON.stringify(a.warnings));
  assert.match(lines[0] ?? '', /^ttft_p90_ms judged on the predicted p99 \(ttft_p99_ms\): the model predicts TTFT at p50 and p99 only; stricter than the limit asks$/);
  assert.match(lines[1] ?? '', /^tpot_mean_ms judged on the predicted p50 \(tpot_p50_ms\): the model predicts TPOT at p50 and p99 only; looser than the limit asks/);
  const text = formatAnswer(a);
  for (const l of lines) assert.ok(text.includes(`Warning: ${l}`), text);
});

test('with no pick the lines are still printed; limits on the predicted statistics add none', () => {
  const none = ask({ ttft_p95_ms: 1, itl_p99_ms: 1 });
  assert.equal(none.best, null);
  const lines = judged(none);
  assert.deepEqual(lines.map((l) => l.split(' ')[0]), ['ttft_p95_ms']);
  assert.ok(formatAnswer(none).includes(`Warning: ${lines[0] ?? ''}`), formatAnswer(none));
  assert.deepEqual(judged(ask({ ttft_p99_ms: 3000, itl_p50_ms: 30 })), []);
  // e2el is predicted at p99 only: its median is judged there too.
  assert.match(judgedOnLines({ e2el_p50_ms: 9000 }, 'predicted')[0] ?? '', /^e2el_p50_ms judged on the predicted p99 \(e2el_p99_ms\): the model predicts E2EL at p99 only; stricter/);
});

test('the simulated answer says where its probability and near misses read a stand-in statistic', () => {
  const q = { ...question({ itl_p90_ms: 60 }), candidates: 400 };
  const a = simulatedAnswer({ question: q, space, catalog, simulator: priorSimulator(null, catalog, { hardware: { gpu: q.gpu, count: 1 }, model: q.model, workload: chat, slo: q.slo }), simulateTop: 6 });
  const lines = judged(a);
  assert.equal(lines.length, 1, JSON.stringify(a.warnings));
  assert.match(lines[0] ?? '', /^itl_p90_ms judged on the simulated p99 \(itl_p99_ms\) in P\(meets the SLOs\) and the near misses: .*the simulated run's own p90 is checked too/);
});
