import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseCsv } from '../../src/calibration/csv.js';
import { EMPTY_BACKEND_VERSION, planRow, siliconRows } from '../../src/calibration/silicon.js';
import { defaultCatalog } from '../../src/catalog/index.js';

const SILICON = fileURLToPath(new URL('../fixtures/calibration/silicon-sample.csv', import.meta.url));
const catalog = defaultCatalog();

test('each aiconfigurator row is simulated as the vLLM release it ran: its backend_version, or 0.10.2 where InferenceX left it empty', () => {
  const { columns, records } = parseCsv(readFileSync(SILICON, 'utf8'), SILICON);
  const rows = siliconRows(columns, records, SILICON);
  const qwen = rows.find((r) => r.backendVersion === '0.12.0');
  const llama = rows.find((r) => r.backendVersion === '');
  assert.ok(qwen !== undefined && llama !== undefined, 'the fixture has both');
  const q = planRow(qwen, catalog);
  assert.equal(q.input.vllmVersion, '0.12.0');
  // vLLM 0.12 still scheduled synchronously by default (async scheduling became the default in 0.14).
  assert.equal(q.input.config.async_scheduling, false);
  const l = planRow(llama, catalog);
  assert.equal(l.input.vllmVersion, EMPTY_BACKEND_VERSION);
  assert.equal(l.protocol, 'inferencex');
});
