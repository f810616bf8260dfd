import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { StudySpec } from '../../src/domain/index.js';
import { loadSpace } from '../../src/space/index.js';
import { openStore } from '../../src/store/sqlite-store.js';
import type { TuneEvent } from '../../src/tune/loop.js';
import { createProgress } from '../../src/tune/progress.js';
import { runStudy } from '../../src/tune/study-runner.js';
import { specOf } from '../report/study/fixture.js';

const catalog = defaultCatalog();
const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));

function sink(): { out: Writable; text: () => string } {
  let text = '';
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return { out, text: () => text };
}

test('a resumed study counts its failed trials as done on the progress bar, as the budget does', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-progress-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = openStore(join(dir, 'h.db'));
  t.after(() => store.close());
  const spec = StudySpec.parse({ ...specOf('p'), budget_trials: 2 });
  // vLLM's defaults, then a configuration the engine refuses (fewer batched tokens than sequences).
  const run = (onEvent?: (e: TuneEvent) => void) =>
    runStudy({ store, catalog, space, spec, target: { kind: 'sim' }, now: Date.now, keepSurrogate: false, candidates: 300, enqueue: [{ max_num_seqs: 512, max_num_batched_tokens: 256 }], ...(onEvent === undefined ? {} : { onEvent }) });
  await run();
  const trials = store.listTrials(store.getStudy('p').id);
  assert.deepEqual(trials.map((tr) => tr.state).sort(), ['complete', 'failed']);

  // Resumed with its budget spent: the bar starts full, one of the two failed.
  const { out, text } = sink();
  const progress = createProgress({ out, mode: 'tty', budget: 2, now: Date.now, snapshot: () => ({ bestGoodput: null, frontSize: 0 }) });
  const events: TuneEvent[] = [];
  await run((e) => {
    events.push(e);
    progress.onEvent(e);
  });
  const resumed = events.find((e) => e.kind === 'resumed');
  assert.ok(resumed !== undefined && resumed.kind === 'resumed');
  assert.deepEqual([resumed.kept, resumed.spent, resumed.failed], [1, 2, 1]);
  assert.match(text(), /\[#{20}\] 2\/2 trials · 0 running · 1 failed/);
});
