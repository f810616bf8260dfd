import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { defaultCatalog } from '../../src/catalog/index.js';
import { priorSimulator } from '../../src/calibration/prior-simulator.js';
import { analyzeStudy } from '../../src/report/study/index.js';
import { loadSpace } from '../../src/space/index.js';
import { explainStudyPick } from '../../src/tune/explain-study.js';
import { makeFixture } from '../report/study/fixture.js';

test('a study’s pick whose memory leaves a run-time OOM likely is printed with that warning; one at vLLM’s default utilization is not', async (t) => {
  const fx = await makeFixture({ trials: 4, baseline: false });
  t.after(() => {
    fx.store.close();
    rmSync(fx.dir, { recursive: true, force: true });
  });
  const catalog = defaultCatalog();
  const { summary } = analyzeStudy(fx.store, 'fx', { catalog, withExplanation: false });
  const rec = summary.recommendation;
  assert.ok(rec !== null, 'the fixture study has a pick');
  const study = fx.store.getStudy('fx');
  const explain = (gpuMemoryUtilization: number) =>
    explainStudyPick({
      summary: { ...summary, recommendation: { ...rec, config: { ...rec.config, gpu_memory_utilization: gpuMemoryUtilization } } },
      trials: fx.store.listTrials(study.id),
      spec: fx.spec,
      space: loadSpace(fx.spec.space),
      catalog,
      simulator: priorSimulator(null, catalog, fx.spec),
    });
  const oom = /^the study's runs of the pick finished, but gpu_memory_utilization=0\.98 leaves 0\.\d\d GiB outside vLLM's pool: a (≥99\.9|\d+)% chance of a run-time CUDA OOM in 1,000 requests/;
  const tight = explain(0.98);
  assert.ok(tight.warnings.some((w) => oom.test(w)), tight.warnings.join('\n'));
  assert.ok(explain(0.9).warnings.every((w) => !/run-time CUDA OOM/.test(w)), 'no OOM warning at vLLM’s default');
});
