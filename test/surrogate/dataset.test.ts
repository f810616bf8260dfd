import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog } from '../../src/catalog/index.js';
import { STAT_KEYS } from '../../src/domain/index.js';
import { openStore } from '../../src/store/index.js';
import { datasetFromStore, observationsFromTrials } from '../../src/surrogate/dataset.js';
import { fitSurrogate } from '../../src/surrogate/surrogate.js';
import { createRng } from '../../src/util/rng.js';
import { encoder, makeRows, names, TOY_SPEC } from './fixtures.js';
import { sampleResult, sampleRun, sampleSpec } from '../store/samples.js';

const zeroStats = Object.fromEntries(STAT_KEYS.map((k) => [k, 0]));

test('a stored run whose every request failed started: it teaches "cannot sustain this load", not "does not start"', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-dataset-'));
  const store = openStore(join(dir, 'h.db'));
  try {
    const workload = sampleSpec().workload;
    store.storeRuns([sampleRun('served', { workload })]);
    // vLLM answered every request with an error under this load: nothing completed, no output.
    const broke = sampleResult({ ...zeroStats, completed: 0, failed: 100, output_throughput: 0, total_output_tokens: 0, request_throughput: 0, total_token_throughput: 0 });
    store.storeRuns([sampleRun('all-failed', { workload, result: broke })]);
    const d = datasetFromStore(store, defaultCatalog(), encoder);
    assert.equal(d.rows.length, 2);
    const rowOf = (failedRequests: number) => d.rows[d.observations.findIndex((o) => o.result?.failed === failedRequests)];
    const served = rowOf(0);
    const failed = rowOf(100);
    assert.equal(served?.started, true);
    assert.equal(served?.saturated, false);
    assert.ok((served?.targets.output_throughput ?? 0) > 0);
    assert.equal(failed?.started, true);
    assert.equal(failed?.saturated, true);
    assert.deepEqual(failed?.targets, {});
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a study trial that started and broke under its load teaches the sustain model; a launch failure the feasibility one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-dataset-'));
  const store = openStore(join(dir, 'h.db'));
  try {
    const spec = sampleSpec();
    const study = store.createStudy(spec);
    const fail = (config: Record<string, number>, started: boolean, attrs: Record<string, unknown>) => {
      const t = store.createTrial(study.id, { config, origin: 'surrogate', state: 'running', attrs });
      return store.failTrial(t.id, { reason: 'x', started });
    };
    // A run-time OOM (the sim target's SERVER_CRASHED, classified oom_runtime): it started, then died.
    fail({ gpu_memory_utilization: 0.98 }, true, { failure: { class: 'oom_runtime', facts: {}, evidence: 'CUDA out of memory' } });
    // More requests lost than a trial may lose: the loop failed it, keeping its counts.
    fail({ max_num_seqs: 1024 }, true, { requests: { lost: 40, total: 100 } });
    // A harness that wrote no result: nothing about the configuration.
    fail({ max_num_seqs: 64 }, true, { failure: null });
    fail({ max_num_seqs: 8 }, false, {});
    const d = datasetFromStore(store, defaultCatalog(), encoder);
    const seen = d.rows.map((r, i) => ({ seqs: d.observations[i]?.config.max_num_seqs, util: d.observations[i]?.config.gpu_memory_utilization, started: r.started, saturated: r.saturated }));
    assert.deepEqual(
      seen.sort((a, b) => (a.seqs ?? 0) - (b.seqs ?? 0)),
      [
        { seqs: undefined, util: 0.98, started: true, saturated: true },
        { seqs: 8, util: undefined, started: false, saturated: false },
        { seqs: 1024, util: undefined, started: true, saturated: true },
      ],
    );
    // The tuning loop's refit reads its own trials the same way.
    const fromTrials = observationsFromTrials(store.listTrials(study.id), spec);
    assert.deepEqual(fromTrials.map((o) => o.brokeUnderLoad === true).sort(), [false, true, true]);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('runs that broke under load count toward no minimum of measured runs', async () => {
  const { rows } = makeRows(40, 2);
  const measured = rows.filter((r) => r.started).slice(0, 5);
  const broke = measured.map((r) => ({ ...r, targets: {}, saturated: true }));
  await assert.rejects(fitSurrogate([...measured, ...broke], names, TOY_SPEC, createRng(1)), /5 measured runs; at least 8/);
});
