import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerQuestion, type Answer } from '../../src/advise/answer.js';
import { formatAnswer } from '../../src/advise/text.js';
import { PROJECT_ROOT, defaultCatalog } from '../../src/catalog/index.js';
import { Workload, type Slo } from '../../src/domain/index.js';
import { loadSurrogateFor } from '../../src/surrogate/registry.js';
import { loadSpace } from '../../src/space/index.js';
import { openStore } from '../../src/store/index.js';
import { loadYamlFile } from '../../src/util/yaml.js';
import { seedTrainedDb } from '../http/helpers.js';

const catalog = defaultCatalog();
const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));
const chat = loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), Workload);

const dir = mkdtempSync(join(tmpdir(), 'lmb-nearest-rule-'));
const db = join(dir, 'h.db');
await seedTrainedDb(db, 16);
const store = openStore(db);
const loaded = loadSurrogateFor(store, { gpu: 'H100-SXM', model: 'llama-3.1-8b' });
process.on('exit', () => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = (slo: Slo): Answer =>
  answerQuestion({
    model: { info: loaded.record, surrogate: loaded.surrogate },
    question: { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload: chat, workloadRef: 'chat.yaml', slo, candidates: 3000, seed: 1, keepPrecision: false },
    space,
    catalog,
    // More GPUs are beside the point here: no simulated search of them.
    simulatorFor: () => ({ profileSource: 'none', simulate: () => null, run: () => ({ ok: false as const, reason: 'not simulated' }) }) as never,
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
