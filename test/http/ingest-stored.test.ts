/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- JSON bodies are read loosely; the assertions check their shape */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { AUTH, tempDb, testApp } from './helpers.js';

// POST /v1/runs answers what it stored, per file and run, as `lm-bench ingest --json` does; CSV and
// YAML bodies are read by the file name's extension.
const FIXTURES = join(PROJECT_ROOT, 'test', 'fixtures', 'ingest');
const text = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');

test('POST /v1/runs: files[].stored per run, null where the file has no figure; a duplicate names the stored run', async (t) => {
  const app = await testApp(t, tempDb(t));
  const body = {
    files: [
      { name: 'profile_export_aiperf.csv', content: text('aiperf/v0.1.1-records/profile_export_aiperf.csv') },
      { name: 'report.yaml', content: text('inference-perf/llm-d-yaml/inference_perf_lifecycle.yaml') },
    ],
    server_config: { max_num_seqs: 128 },
    gpu: 'H100-SXM',
    model: 'qwen2.5-7b',
  };
  const r = await app.inject({ method: 'POST', url: '/v1/runs', payload: body, headers: AUTH });
  assert.equal(r.statusCode, 201, r.body);
  const [csv, yaml] = r.json().files;
  assert.deepEqual([csv.format, yaml.format], ['aiperf', 'inference_perf']);
  assert.deepEqual(csv.stored, [{ run_id: csv.run_ids[0], completed: 89, failed: 11, duration_s: 9.32, mean_ttft_ms: 2343.22, output_throughput: 2320.72 }]);
  assert.deepEqual(yaml.stored, [{ run_id: yaml.run_ids[0], completed: 3, failed: 0, duration_s: 2.48, mean_ttft_ms: yaml.stored[0].mean_ttft_ms, output_throughput: 160 / 2.48 }]);
  assert.ok(Math.abs(yaml.stored[0].mean_ttft_ms - 33.333333333333336) < 1e-9);
  const again = await app.inject({ method: 'POST', url: '/v1/runs', payload: { ...body, files: [body.files[0]] }, headers: AUTH });
  assert.equal(again.statusCode, 201, again.body);
  assert.deepEqual([again.json().accepted, again.json().skipped], [0, 1]);
  assert.equal(again.json().files[0].stored[0].run_id, csv.run_ids[0]);
});
