import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { simulate } from '../../src/sim/index.js';
import { requestLatencyOf } from '../../src/domain/request-latency.js';
import { diagnosisLines } from '../../src/diagnose/text.js';
import { Workload, type BenchmarkResult } from '../../src/domain/index.js';
import { loadYamlFile } from '../../src/util/yaml.js';
import { fileURLToPath } from 'node:url';
import { captureIo, type CapturedIo } from '../helpers/cli.js';
import { startSimServe } from '../helpers/sim-serve.js';

const dir = mkdtempSync(join(tmpdir(), 'lmb-sim-pasted-'));
const io = (): CapturedIo => captureIo(dir);
const base = ['sim', 'run', '--gpu', 'H100-SXM', '--model', 'llama-3.2-1b', '--db', join(dir, 'h.db'), '--seed', '1'];
const small = ['--input-len', '64', '--output-len', '8', '--num-prompts', '8'];

test('sim run takes the vllm serve flags a pasted command line carries, and says they are ignored', async () => {
  const pasted = ['--host', '0.0.0.0', '--port', '8000', '--trust-remote-code', '--disable-log-requests', '--dtype', 'auto', '--uvicorn-log-level', 'warning', '--served-model-name', 'm'];
  const t = io();
  assert.equal(await main([...base, ...small, ...pasted, '--json'], t), 0, t.err());
  assert.equal((JSON.parse(t.out()) as BenchmarkResult).completed, 8);
  assert.match(t.err(), /note: --trust-remote-code, --disable-log-requests, --uvicorn-log-level, --dtype: no effect on the simulation/);
  assert.match(t.err(), /note: --host, --port, --served-model-name: sim run answers no HTTP/);
  // The same run without them: the same figures.
  const plain = io();
  assert.equal(await main([...base, ...small, '--json'], plain), 0, plain.err());
  const a = JSON.parse(t.out()) as BenchmarkResult;
  const b = JSON.parse(plain.out()) as BenchmarkResult;
  assert.equal(a.mean_ttft_ms, b.mean_ttft_ms);
  assert.equal(plain.err(), '');
});

test('sim run refuses a --dtype it cannot price and a log level vLLM does not have, by name', async () => {
  for (const [flag, value, why] of [
    ['--dtype', 'float32', /--dtype float32: the simulator prices 16-bit weights/],
    ['--dtype', 'int4', /--dtype int4: vLLM's choices are auto, half/],
    ['--uvicorn-log-level', 'loud', /--uvicorn-log-level must be one of critical/],
  ] as const) {
    const t = io();
    assert.equal(await main([...base, ...small, flag, value], t), 2, `${flag} ${value}`);
    assert.match(t.err(), why);
  }
});

test('sim serve takes the same pasted flags and starts', async () => {
  const srv = await startSimServe(['--gpu', 'H100-SXM', '--model', 'llama-3.2-1b', '--startup-scale', '0', '--trust-remote-code', '--disable-log-requests', '--disable-log-stats', '--dtype', 'bfloat16', '--uvicorn-log-level', 'info']);
  try {
    assert.match(srv.startupLog, /note: --trust-remote-code, --disable-log-requests, --disable-log-stats, --uvicorn-log-level, --dtype: no effect/);
    const res = await fetch(`${srv.url}/v1/models`);
    assert.equal(res.status, 200);
  } finally {
    assert.equal(await srv.close(), 0);
  }
});

test('sim run prints why, as run does, from the simulated evidence; --json keeps it in the result', async () => {
  // A small cache for the requests: it fills and preempts.
  const load = ['--input-len', '1000', '--output-len', '300', '--num-prompts', '200', '--gpu-memory-utilization', '0.3', '--max-model-len', '4096'];
  const json = io();
  assert.equal(await main([...base.map((x) => (x === 'llama-3.2-1b' ? 'llama-3.1-8b' : x)), ...load, '--json'], json), 0, json.err());
  const r = JSON.parse(json.out()) as BenchmarkResult;
  assert.equal(r.diagnosis?.bottleneck, 'kv_cache');
  assert.doesNotMatch(json.out(), /^why:/m);
  const text = io();
  assert.equal(await main([...base.map((x) => (x === 'llama-3.2-1b' ? 'llama-3.1-8b' : x)), ...load], text), 0, text.err());
  const why = diagnosisLines(r.diagnosis);
  assert.ok(why.length > 1);
  assert.ok(text.out().includes(`${why.join('\n')}\n`), text.out());
});

test('sim run --requests-out and --records, written as requests finish, hold every request in the workload order', async () => {
  const req = join(dir, 'sub', 'req.jsonl');
  const rec = join(dir, 'rec.jsonl');
  // Lengths that make answers finish out of order.
  const chat = fileURLToPath(new URL('../../data/workloads/chat.yaml', import.meta.url));
  const t = io();
  assert.equal(await main([...base, '--workload', chat, '--num-prompts', '120', '--request-rate', '30', '--requests-out', req, '--records', rec], t), 0, t.err());
  const w = loadYamlFile(chat, Workload);
  const full = simulate({ config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.2-1b', workload: { ...w, arrival: { kind: 'poisson', rate_rps: 30 }, num_prompts: 120 }, seed: 1 });
  assert.ok(full.ok);
  const finish = full.records.map((r) => r.done_time_s ?? 0);
  assert.ok(finish.some((x, i) => i > 0 && x < (finish[i - 1] as number)), 'some request finished before an earlier one');
  assert.equal(readFileSync(req, 'utf8'), full.records.map((r) => `${JSON.stringify(requestLatencyOf(r))}\n`).join(''));
  assert.equal(readFileSync(rec, 'utf8'), full.records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  assert.deepEqual(readdirSync(join(dir, 'sub')), ['req.jsonl']);
});

test('a sim run that fails writes neither file, nor leaves a partial one', async () => {
  const req = join(dir, 'failed.jsonl');
  const t = io();
  // Every request is longer than max_model_len: the server refuses them all.
  assert.equal(await main([...base, '--input-len', '600', '--output-len', '8', '--num-prompts', '8', '--max-model-len', '512', '--requests-out', req], t), 2, t.err());
  assert.match(t.err(), /every request was refused/);
  assert.equal(existsSync(req), false);
  assert.deepEqual(readdirSync(dir).filter((f) => f.includes('partial')), []);
});
