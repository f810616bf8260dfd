import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { openStore } from '../../src/store/sqlite-store.js';
import { captureIo } from '../helpers/cli.js';
import { SMALL_CHAT_WORKLOAD_YAML } from '../helpers/workloads.js';

/**
 * `tune --objective tokens_per_joule` on the simulator: the same budget and seed as a goodput study (each
 * in a database of its own, so neither seeds the other from its history), and the energy study's pick
 * spends no more joules per output token than the goodput study's and meets the SLOs. The study keeps
 * its objective when resumed, `recommend --objective tokens_per_joule` answers by a rule that names
 * joules, and a bad objective is a usage error.
 */
const WORKLOAD = SMALL_CHAT_WORKLOAD_YAML;

interface Summary {
  study: { spec: { objective?: string; objectives: { name: string }[] } };
  trials: { number: number; meets_slo: boolean | null; metrics: { energy_per_output_token_j: number | null } | null }[];
  recommendation: {
    objective: string;
    rule: string;
    trial: number;
    measured: { energy_per_output_token_j: number | null; output_throughput_per_gpu: number; p99_ttft_ms: number; p99_itl_ms: number };
    cost: { usd_per_million_output_tokens: number | null } | null;
  } | null;
}

test('tune --objective tokens_per_joule picks no more J/token than goodput on the same seed, under the SLOs', { timeout: 240_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-energy-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'small.yaml'), WORKLOAD);
  const deployment = ['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'small.yaml'];
  const tune = async (name: string, objective: string, db: string): Promise<Summary> => {
    const io = captureIo(dir);
    assert.equal(await main(['tune', '--study', name, ...deployment, '--budget-trials', '9', '--seed', '5', '--objective', objective, '--no-report', '--db', db, '--json'], io), 0, io.err());
    return JSON.parse(io.out()) as Summary;
  };
  const goodputDb = join(dir, 'goodput.db');
  const energyDb = join(dir, 'energy.db');
  const g = await tune('g', 'goodput', goodputDb);
  const e = await tune('e', 'tokens_per_joule', energyDb);

  assert.equal(e.study.spec.objective, 'tokens_per_joule');
  assert.equal(e.study.spec.objectives[0]?.name, 'energy_per_output_token_j', 'joules per token lead the Pareto axes');
  assert.ok(g.recommendation !== null && e.recommendation !== null);
  assert.equal(g.recommendation.objective, 'goodput');
  assert.equal(e.recommendation.objective, 'tokens_per_joule');
  assert.match(e.recommendation.rule, /fewest joules per output token .* among those meeting the SLOs/);
  const jg = g.recommendation.measured.energy_per_output_token_j;
  const je = e.recommendation.measured.energy_per_output_token_j;
  assert.ok(jg !== null && je !== null, 'simulated runs carry J/token');
  assert.ok(je <= jg, `the energy pick spends ${je} J/token, the goodput pick ${jg}`);
  // The energy pick meets the SLOs, and no measured trial of its study meeting them spends fewer joules.
  const pick = e.trials.find((x) => x.number === e.recommendation?.trial);
  assert.equal(pick?.meets_slo, true);
  assert.ok(e.recommendation.measured.p99_ttft_ms <= 2000 && e.recommendation.measured.p99_itl_ms <= 100);
  const feasibleJ = e.trials.filter((x) => x.meets_slo === true).map((x) => x.metrics?.energy_per_output_token_j ?? Number.POSITIVE_INFINITY);
  assert.ok(je <= Math.min(...feasibleJ) * 1.03, 'the pick is the fewest joules among its trials, within the run-to-run noise');
  assert.ok((e.recommendation.cost?.usd_per_million_output_tokens ?? 0) > 0, 'the cost is stated beside the pick');

  // Resumed, the study keeps its objective; another one is refused before anything runs.
  const again = captureIo(dir);
  assert.equal(await main(['tune', '--study', 'e', '--objective', 'goodput', '--no-report', '--db', energyDb], again), 2);
  assert.match(again.err(), /LMB_ERR_STUDY_EXISTS.*--objective "goodput" \(the study has "tokens_per_joule"\)/);
  const resumed = captureIo(dir);
  assert.equal(await main(['tune', '--study', 'e', '--no-report', '--db', energyDb, '--json'], resumed), 0, resumed.err());
  assert.equal((JSON.parse(resumed.out()) as Summary).recommendation?.objective, 'tokens_per_joule');
  const store = openStore(energyDb);
  assert.equal(store.getStudy('e').spec.objective, 'tokens_per_joule');
  store.close();

  // recommend --objective tokens_per_joule answers from the study's model by a rule naming joules.
  const rec = captureIo(dir);
  assert.equal(await main(['recommend', ...deployment, '--objective', 'tokens_per_joule', '--candidates', '2000', '--db', energyDb, '--json'], rec), 0, rec.err());
  const answer = JSON.parse(rec.out()) as { source: { kind: string }; rule: string; best: { predicted: Record<string, { mean: number }> } | null };
  assert.equal(answer.source.kind, 'surrogate');
  assert.match(answer.rule, /lowest upper bound \(mean \+ 2σ\) of predicted joules per output token/);
  assert.ok((answer.best?.predicted['energy_per_output_token_j']?.mean ?? 0) > 0);
  const text = captureIo(dir);
  assert.equal(await main(['recommend', ...deployment, '--objective', 'tokens_per_joule', '--candidates', '2000', '--db', energyDb], text), 0, text.err());
  assert.match(text.out(), /Rule: the lowest upper bound \(mean \+ 2σ\) of predicted joules per output token/);
  assert.match(text.out(), /Energy of the pick \(predicted mean \[±2σ\]\): [\d.]+ \[[\d.]+, [\d.]+\] J per output token/);
});

test('a bad --objective is a usage error (exit 2) for tune and recommend, before anything is stored', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-energy-bad-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'small.yaml'), WORKLOAD);
  const deployment = ['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'small.yaml'];
  const db = join(dir, 'h.db');
  for (const argv of [
    ['tune', '--study', 'x', ...deployment, '--budget-trials', '2', '--objective', 'joules', '--no-report', '--db', db],
    ['recommend', ...deployment, '--objective', 'joules', '--db', db],
  ]) {
    const io = captureIo(dir);
    assert.equal(await main(argv, io), 2, argv[0]);
    assert.match(io.err(), /LMB_ERR_INVALID_ARGUMENT: --objective must be goodput, tokens_per_joule/);
  }
  // `throughput` stays an alias of goodput, `max-rate` today's rate search.
  const store = openStore(db);
  assert.equal(store.listStudies().length, 0, 'nothing stored');
  store.close();
});
