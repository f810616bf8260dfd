import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { formatAnswer } from '../../src/advise/text.js';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { loadPrices } from '../../src/cost/prices.js';
import { simulatedFor } from '../../src/http/recommend-core.js';
import { loadYamlFile } from '../../src/util/yaml.js';
import { Workload } from '../../src/domain/index.js';

const catalog = defaultCatalog();

test('a recommendation states what its pick costs: the GPUs by the hour, and per million output tokens at its predicted throughput', () => {
  const workload = loadYamlFile(join(PROJECT_ROOT, 'data/workloads/chat.yaml'), Workload, 'LMB_ERR_WORKLOAD_INVALID');
  const a = simulatedFor(null, join(PROJECT_ROOT, 'search-spaces/vllm.yaml'), { gpu: 'H100-SXM', gpus: 2, model: 'llama-3.1-8b', workload, workloadRef: 'chat.yaml', slo: workload.slo ?? {}, candidates: 500, seed: 1, keepPrecision: false });
  const tput = a.best?.predicted['output_throughput']?.mean ?? 0;
  assert.ok(tput > 0, 'a pick with a predicted throughput');
  const hourly = 2 * (loadPrices(catalog).of(catalog.gpu('H100-SXM'))?.usdPerGpuHour ?? 0);
  assert.equal(a.cost?.usd_per_hour, hourly);
  assert.ok(Math.abs((a.cost?.usd_per_million_output_tokens ?? 0) - (hourly / (tput * 3600)) * 1e6) < 1e-9);
  assert.match(formatAnswer(a), /cost: \$\d+\.\d\d\/h, \$\d+\.\d{3} per million output tokens at its predicted throughput \(data\/prices\.yaml/);
});
