import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isLmBenchError } from '../../src/errors.js';
import { decodeJson, encodeJson, openStore } from '../../src/store/index.js';
import { canonicalJson } from '../../src/store/codec.js';
import { sampleResult, sampleRun } from './samples.js';

describe('store codec: -0', () => {
  it('comes back -0 from a JSON column, nested or not, beside ±Infinity and NaN', () => {
    const value = { a: -0, b: [0, -0, 1], c: { d: -0, e: Infinity, f: NaN }, g: 0, s: '-0' };
    const back = decodeJson<typeof value>(encodeJson(value));
    assert.ok(Object.is(back.a, -0), encodeJson(value));
    assert.ok(Object.is(back.b[1], -0) && Object.is(back.b[0], 0));
    assert.ok(Object.is(back.c.d, -0) && back.c.e === Infinity && Number.isNaN(back.c.f));
    assert.ok(Object.is(back.g, 0));
    assert.equal(back.s, '-0', 'a string is left alone');
    assert.ok(Object.is(decodeJson(encodeJson(-0)), -0), 'a bare -0');
  });

  it('a stored run keeps a -0 figure, and a knob filter on 0 still finds a knob stored as -0 (real SQLite file)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lmb-codec-'));
    try {
      const db = join(dir, 'h.db');
      let store = openStore(db);
      const [stored] = store.storeRuns([sampleRun('z', { result: sampleResult({ mean_ttft_ms: -0 }), serverConfig: { long_prefill_token_threshold: -0 } })]);
      assert.equal(stored?.status, 'new');
      const id = stored.id;
      store.close();
      store = openStore(db);
      const run = store.getRun(id);
      assert.ok(Object.is(run.result.mean_ttft_ms, -0), String(run.result.mean_ttft_ms));
      assert.ok(Object.is(run.server_config.long_prefill_token_threshold, -0));
      assert.deepEqual(store.listRuns({ config: { long_prefill_token_threshold: 0 } }).map((r) => r.id), [id]);
      store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('specs compare -0 as 0 (a spec stored before read back 0), and the marker string is refused, not garbled', () => {
    assert.equal(canonicalJson({ x: -0, y: [-0] }), canonicalJson({ x: 0, y: [0] }));
    const marker = '\u0000$lmb_num:-0\u0000';
    for (const v of [{ s: marker, n: -0 }, { [marker]: 1, n: -0 }]) assert.throws(() => encodeJson(v), (e: unknown) => isLmBenchError(e, 'LMB_ERR_STORE_FAILED'));
  });
});
