import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { formatAnswer } from '../../src/advise/text.js';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { Workload } from '../../src/domain/index.js';
import { simulatedFor } from '../../src/http/recommend-core.js';
import { resolveConfig } from '../../src/physics/resolve.js';
import { loadYamlFile } from '../../src/util/yaml.js';

const catalog = defaultCatalog();
const spacePath = join(PROJECT_ROOT, 'search-spaces/vllm.yaml');
const workload = loadYamlFile(join(PROJECT_ROOT, 'data/workloads/chat-busy.yaml'), Workload, 'LMB_ERR_WORKLOAD_INVALID');

test('a pick on fewer GPUs than the question has says the others serve nothing, and that its throughput per GPU counts them', () => {
  // Nine H100s: no tensor × data parallel layout of the space (TP 1, 2, 4, 8; DP up to 8) makes nine ranks.
  const n = 9;
  const a = simulatedFor(null, spacePath, { gpu: 'H100-SXM', gpus: n, model: 'llama-3.1-8b', workload, workloadRef: 'chat-busy.yaml', slo: workload.slo ?? {}, candidates: 3000, seed: 1, keepPrecision: false });
  assert.ok(a.best !== null);
  const r = resolveConfig(a.best.config, catalog.gpu('H100-SXM'), catalog.model('llama-3.1-8b'));
  const used = r.tensor_parallel_size * r.data_parallel_size;
  assert.ok(used < n);
  const w = a.warnings.find((x) => x.startsWith('the pick uses'));
  assert.equal(w, `the pick uses ${used} of the ${n} GPUs (tensor_parallel_size ${r.tensor_parallel_size} × data_parallel_size ${r.data_parallel_size}): the other ${n - used === 1 ? 'GPU serves' : `${n - used} serve`} nothing, and its throughput per GPU counts all ${n}.`);
  assert.match(formatAnswer(a), /Warning: the pick uses \d of the 9 GPUs/);
  // All the GPUs in use: nothing to say.
  const full = simulatedFor(null, spacePath, { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload, workloadRef: 'chat-busy.yaml', slo: workload.slo ?? {}, candidates: 3000, seed: 1, keepPrecision: false });
  assert.ok(!full.warnings.some((x) => x.startsWith('the pick uses')));
});

test('a simulated answer claims no absence of measured runs: the history may hold some no surrogate was trained on', () => {
  const a = simulatedFor(null, spacePath, { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload, workloadRef: 'chat-busy.yaml', slo: workload.slo ?? {}, candidates: 500, seed: 1, keepPrecision: false });
  const text = [formatAnswer(a), ...a.trust.reasons].join('\n');
  assert.doesNotMatch(text, /no measured runs/);
  assert.match(text, /no surrogate trained on measured runs of llama-3\.1-8b on H100-SXM/);
  assert.match(formatAnswer(a), /not learned from measured runs of this GPU and model — SIMULATED, not measured/);
});
