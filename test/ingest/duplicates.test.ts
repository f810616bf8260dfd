import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ingestFiles } from '../../src/ingest/index.js';
import { openStore } from '../../src/store/index.js';
import { fixture } from './helpers.js';

describe('ingest: a run already stored', () => {
  it('says so when this ingest gave it another GPU, model or config: the first context is kept, not silently', () => {
    const store = openStore(':memory:');
    const file = fixture('vllm-serve-2025.json');
    const first = ingestFiles(store, [file], { serverConfig: { max_num_seqs: 128 }, gpu: 'A100-80GB', model: 'llama-3.1-8b' });
    assert.equal(first.accepted, 1);
    const id = first.files[0]?.run_ids[0];

    // The same context again: skipped, no note about it.
    const same = ingestFiles(store, [file], { serverConfig: { max_num_seqs: 128 }, gpu: 'A100-80GB', model: 'llama-3.1-8b' });
    assert.equal(same.skipped, 1);
    assert.deepEqual(same.files[0]?.warnings.filter((w) => w.startsWith('already stored')), []);

    // A corrected GPU and config: still skipped (the figures are the dedupe key), and the report says what the run keeps.
    const fixed = ingestFiles(store, [file], { serverConfig: { max_num_seqs: 64, enforce_eager: true }, gpu: 'H100-SXM', model: 'llama-3.1-8b' });
    assert.equal(fixed.skipped, 1);
    assert.equal(fixed.files[0]?.status, 'skipped');
    const notes = fixed.files[0]?.warnings.filter((w) => w.startsWith('already stored')) ?? [];
    assert.deepEqual(notes, [
      `already stored with another context, kept as first stored: run #${String(id)} has GPUs 1× A100-80GB (this ingest: 1× H100-SXM), enforce_eager=unset max_num_seqs=128 (this ingest: enforce_eager=true max_num_seqs=64)`,
    ]);
    assert.equal(store.getRun(id ?? 0).hardware.gpu, 'A100-80GB');
    assert.equal(store.countRuns(), 1);
    store.close();
  });
});
