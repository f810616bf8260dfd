import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/index.js';
import { backfillTrialRuns, recordTrialRun, trialRunHash } from '../../src/tune/history.js';
import { sampleResult, sampleRun, sampleSpec } from '../store/samples.js';

function history(t: { after: (fn: () => void) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-tune-history-'));
  const store = openStore(join(dir, 'h.db'), { now: () => 1 });
  t.after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const study = store.createStudy(sampleSpec('s'));
  const finish = (config: Record<string, number>, ok: boolean) => {
    const trial = store.createTrial(study.id, { config, origin: 'random', state: 'running' });
    return ok ? store.completeTrial(trial.id, { values: { output_throughput_per_gpu: 1 }, result: sampleResult() }) : store.failTrial(trial.id, { reason: 'oom', started: false });
  };
  return { store, study, finish };
}

test('a complete trial is recorded as one run in the study context, once however often it is recorded; a failed one not at all', (t) => {
  const { store, study, finish } = history(t);
  const done = finish({ max_num_seqs: 64 }, true);
  const failed = finish({ max_num_seqs: 4096 }, false);
  recordTrialRun(store, study, done);
  recordTrialRun(store, study, failed);
  // A resume backfills every complete trial: the one already recorded is found by its hash.
  backfillTrialRuns(store, study);
  recordTrialRun(store, study, done);
  const runs = store.listRuns();
  assert.equal(runs.length, 1);
  const [run] = runs;
  assert.deepEqual(
    [run?.content_hash, run?.server_config, run?.hardware, run?.model, run?.source_format, run?.source_path],
    [trialRunHash(study, done), { max_num_seqs: 64 }, study.spec.hardware, study.spec.model, 'lm_bench', 'study:s#0'],
  );
});

test('a run stored under the trial hash with another context (another history trial of the same ids, ingested) is kept, and the study goes on', (t) => {
  const { store, study, finish } = history(t);
  const done = finish({ max_num_seqs: 64 }, true);
  // Exports keep the hash, so a trial of another history with the same study and trial ids comes in under it.
  const [foreign] = store.storeRuns([sampleRun(trialRunHash(study, done), { hardware: { gpu: 'A100-80GB', count: 2 }, serverConfig: { max_num_seqs: 8 } })]);
  assert.equal(foreign?.status, 'new');
  recordTrialRun(store, study, done);
  backfillTrialRuns(store, study);
  const runs = store.listRuns();
  assert.deepEqual(
    runs.map((r) => [r.id, r.hardware, r.server_config, r.meta.notes]),
    [[foreign.id, { gpu: 'A100-80GB', count: 2 }, { max_num_seqs: 8 }, []]],
  );
});
