// lmb-test: alone
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { BenchmarkResult } from '../../src/domain/index.js';
import { captureIo } from '../helpers/cli.js';
import { startSimServe, type SimServeProcess } from '../helpers/sim-serve.js';

// `lm-bench run` says why a run missed its SLOs on every surface it writes: the terminal (with the
// knobs to try), the JSON and the HTML summary; `--set` tells it the server's knobs and records them.
// The server runs in its own process so that its work does not count as the client's lag.
let sim: SimServeProcess;
let dir: string;
before(async () => {
  sim = await startSimServe(['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--speed', '10', '--seed', '1', '--startup-scale', '0', '--max-num-seqs', '4']);
  dir = mkdtempSync(join(tmpdir(), 'lmb-run-why-'));
});
after(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

const load = ['--input-len', '256', '--output-len', '64', '--concurrency', '32', '--num-prompts', '96', '--slo', 'ttft_p99_ms=10'];

test('a run that missed its SLO prints why and what to try, and writes it into the JSON and the HTML', async () => {
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  const code = await main(['run', '--endpoint', `${sim.url}/v1/completions`, ...load, '--set', 'max_num_seqs=4', '--output', 'out.json', '--html', 'out.html'], io);
  assert.equal(code, 0, io.err());
  const lines = io.out().trim().split('\n');
  assert.match(lines[0] ?? '', /^completed 96, failed 0/);
  assert.match(lines[1] ?? '', /^why: admission-bound: requests wait while the running batch sits at max_num_seqs \(missed ttft_p99_ms; running \(max_num_seqs × replicas\) 4/);
  assert.equal(lines[2], '  try: raise max_num_seqs to 8 (requests waited while 4 ran; the KV cache was 0% full on average)');
  const result = BenchmarkResult.parse(JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8')));
  assert.equal(result.diagnosis?.bottleneck, 'admission');
  assert.deepEqual(result.server_config, { max_num_seqs: 4 }, '--set is recorded with the result');
  assert.equal(result.evidence?.server?.running_limit_known, true);
  const html = readFileSync(join(dir, 'out.html'), 'utf8');
  assert.match(html, /<h2>Why points missed their SLOs or saturated<\/h2>/);
  assert.match(html, /<td>admission-bound<\/td><td>ttft_p99_ms<\/td>/);
  assert.match(html, /raise max_num_seqs to 8/);
});

test('--json carries the diagnosis and evidence; without --set the limit is the plateau the server reached', async () => {
  const io = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  assert.equal(await main(['run', '--endpoint', `${sim.url}/v1/completions`, ...load, '--json'], io), 0, io.err());
  const result = BenchmarkResult.parse(JSON.parse(io.out()));
  assert.equal(result.diagnosis?.bottleneck, 'admission');
  assert.equal(result.evidence?.server?.running_limit_known, false);
  assert.equal(result.evidence?.server?.running_limit, 4);
  assert.equal(result.server_config, null);
  assert.ok(result.evidence?.client !== null && (result.evidence?.client.threads ?? 0) >= 1);

  const bad = captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });
  assert.equal(await main(['run', '--endpoint', `${sim.url}/v1/completions`, ...load, '--set', 'max_num_sequences=4'], bad), 2);
  assert.match(bad.err(), /LMB_ERR_UNKNOWN_KNOB/);
});
