import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { BenchmarkResult, Workload } from '../../src/domain/index.js';
import { parseYaml } from '../../src/util/yaml.js';
import { captureIo, runCli, type CliRun } from '../helpers/cli.js';
import { startSimServe, type SimServeProcess } from '../helpers/sim-serve.js';

// The trace commands end to end: `workload from-trace`, `sim run --trace`, `run --trace` against
// `sim serve` (its own process, on loopback) and `tune --trace` resumed after the file is gone.
const traces = fileURLToPath(new URL('../fixtures/traces/', import.meta.url));
const simArgs = ['sim', 'run', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.2-1b', '--seed', '1'];
let sim: SimServeProcess;
let dir: string;
before(async () => {
  sim = await startSimServe(['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.2-1b', '--speed', '20', '--seed', '1', '--startup-scale', '0']);
  dir = mkdtempSync(join(tmpdir(), 'lmb-trace-'));
});
after(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

const io = () => captureIo(dir, { LMB_LOOPBACK_ONLY: '1' });

test('workload from-trace writes a workload file that sim run reads; --json says what was fitted', async () => {
  const t = io();
  assert.equal(await main(['workload', 'from-trace', join(traces, 'burstgpt-1-head400.csv'), '--out', 'bg.yaml', '--trace-speed', '100'], t), 0, t.err());
  assert.match(t.out(), /383 requests over 372\.7 s \(17 rows with 0 tokens left out\)/);
  const text = readFileSync(join(dir, 'bg.yaml'), 'utf8');
  assert.match(text, /^# Derived by `lm-bench workload from-trace`/);
  const w = parseYaml(text, Workload, { file: 'bg.yaml' });
  assert.equal(w.name, 'burstgpt-1-head400');
  assert.equal(w.num_prompts, 383);
  assert.equal(w.trace?.data, undefined);
  assert.equal(w.trace?.speed, 100);
  assert.ok(w.arrival.kind === 'gamma' && Math.abs(w.arrival.rate_rps - 382 / 372.69) < 0.01);
  const s = io();
  assert.equal(await main([...simArgs, '--workload', 'bg.yaml', '--num-prompts', '50', '--json'], s), 0, s.err());
  assert.equal((JSON.parse(s.out()) as { completed: number }).completed, 50);
  const j = io();
  assert.equal(await main(['workload', 'from-trace', join(traces, 'mooncake-conversation-head300.jsonl'), '--json'], j), 0, j.err());
  const out = JSON.parse(j.out()) as { workload: Workload; trace: { format: string; requests: number }; fit: { shared_token_fraction: number } };
  assert.equal(out.trace.format, 'mooncake');
  assert.equal(out.workload.shared_prefix?.fraction, 1);
  assert.ok(out.fit.shared_token_fraction > 0.1);
});

test('sim run --trace replays the trace in virtual time; flags that would change its traffic are refused', async () => {
  const t = io();
  assert.equal(await main([...simArgs, '--trace', join(traces, 'azure-code-2023-head300.csv'), '--trace-limit', '40', '--json'], t), 0, t.err());
  const r = BenchmarkResult.parse(JSON.parse(t.out()));
  assert.equal(r.completed, 40);
  assert.equal(r.workload?.trace?.format, 'azure');
  assert.equal(r.total_input_tokens, readFileSync(join(traces, 'azure-code-2023-head300.csv'), 'utf8').split('\n').slice(1, 41).reduce((s, l) => s + Number(l.split(',')[1]), 0));
  const h = io();
  assert.equal(await main([...simArgs, '--trace', join(traces, 'splitwise-conv-head300.csv'), '--trace-limit', '10'], h), 0, h.err());
  assert.match(h.out(), /^Trace: .*splitwise-conv-head300\.csv \(splitwise, 10 requests, times ÷ 1\)/);
  for (const extra of [['--request-rate', '4'], ['--input-len', '8'], ['--workload', 'bg.yaml']]) {
    const e = io();
    assert.equal(await main([...simArgs, '--trace', join(traces, 'splitwise-conv-head300.csv'), ...extra], e), 2, extra.join(' '));
    assert.match(e.err(), /LMB_ERR_INVALID_ARGUMENT/);
  }
});

test('a bad trace exits 1 with LMB_ERR_TRACE_INVALID naming the file and line', async () => {
  const cut = readFileSync(join(traces, 'mooncake-conversation-head300.jsonl'), 'utf8').slice(0, 900);
  writeFileSync(join(dir, 'cut.jsonl'), cut);
  const lastLine = cut.split('\n').length;
  for (const argv of [['workload', 'from-trace', 'cut.jsonl'], [...simArgs, '--trace', 'cut.jsonl']]) {
    const t = io();
    assert.equal(await main(argv, t), 1, argv.join(' '));
    assert.match(t.err(), new RegExp(`LMB_ERR_TRACE_INVALID: cut\\.jsonl:${lastLine}: not a JSON object`));
  }
});

test('run --trace replays against sim serve and reports how late it sent against the trace', async () => {
  const t = io();
  const code = await main(['run', '--endpoint', `${sim.url}/v1/completions`, '--trace', join(traces, 'azure-conv-2023-head1500.csv'), '--trace-speed', '20', '--trace-limit', '30', '--json', '--output', 'replay.json'], t);
  assert.equal(code, 0, t.err());
  const out = JSON.parse(t.out()) as { completed: number; total_input_tokens: number; trace_replay: { format: string; requests: number; sent: number; speed: number; send_lateness_ms: { p50: number; p99: number; max: number } } };
  assert.equal(out.completed, 30);
  assert.equal(out.trace_replay.format, 'azure');
  assert.equal(out.trace_replay.requests, 30);
  assert.equal(out.trace_replay.sent, 30);
  assert.equal(out.trace_replay.speed, 20);
  const late = out.trace_replay.send_lateness_ms;
  assert.ok(late.p50 <= late.p99 && late.p99 <= late.max);
  // The stored result still parses as a BenchmarkResult (the replay block rides beside it).
  assert.equal(BenchmarkResult.parse(JSON.parse(readFileSync(join(dir, 'replay.json'), 'utf8'))).completed, 30);
  const text = io();
  assert.equal(await main(['run', '--endpoint', `${sim.url}/v1/completions`, '--trace', join(traces, 'plain-splitwise-conv-head50.jsonl'), '--trace-speed', '50', '--trace-limit', '8'], text), 0, text.err());
  assert.match(text.out(), /trace .*plain-splitwise-conv-head50\.jsonl \(jsonl, times ÷ 50\): sent 8 of 8 requests; sends late against the trace's schedule by p50 [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms/);
});

test('run --trace refuses what would change the trace: a traffic mode, a rate search', async () => {
  const base = ['run', '--endpoint', `${sim.url}/v1/completions`, '--trace', join(traces, 'azure-code-2023-head300.csv')];
  const c = io();
  assert.equal(await main([...base, '--concurrency', '4'], c), 2);
  assert.match(c.err(), /LMB_ERR_CONFIG_INVALID.*a trace brings its own arrival times/);
  const m = io();
  assert.equal(await main([...base, '--mode', 'slo-hold', '--slo', 'ttft_p95_ms=400'], m), 2);
  assert.match(m.err(), /LMB_ERR_INVALID_ARGUMENT.*--mode slo-hold searches the request rate/);
  const w = io();
  assert.equal(await main([...base, '--workload', 'bg.yaml'], w), 2);
});

const lmBench = (args: readonly string[]): Promise<CliRun> => runCli(args, { cwd: dir, env: { LMB_LOOPBACK_ONLY: '1' } });

test('tune --trace: the study carries the requests, so it resumes with the same ones after the file is gone', async () => {
  copyFileSync(join(traces, 'azure-code-2023-head300.csv'), join(dir, 'mine.csv'));
  const args = ['tune', '--study', 'traced', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.2-1b', '--trace', 'mine.csv', '--trace-limit', '30', '--budget-trials', '1', '--db', 'lmb.db', '--no-report', '--json'];
  const first = await lmBench(args);
  assert.equal(first.status, 0, first.stderr);
  const spec = (JSON.parse(first.stdout) as { study: { spec: { workload: Workload } } }).study.spec.workload;
  assert.equal(spec.trace?.data?.input_tokens.length, 30);
  assert.equal(spec.trace?.data?.input_tokens[0], 4808);
  rmSync(join(dir, 'mine.csv'));
  const again = await lmBench(['tune', '--study', 'traced', '--db', 'lmb.db', '--no-report', '--json']);
  assert.equal(again.status, 0, again.stderr);
  const resumed = JSON.parse(again.stdout) as { study: { spec: { workload: Workload } }; trials: { requests: { total: number } }[] };
  assert.deepEqual(resumed.study.spec.workload, spec);
  assert.ok(resumed.trials.length >= 1 && resumed.trials.every((tr) => tr.requests.total === 30));
  const maxRate = await lmBench(['tune', '--study', 'traced-rate', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.2-1b', '--trace', join(traces, 'azure-code-2023-head300.csv'), '--objective', 'max-rate', '--budget-trials', '1', '--db', 'lmb.db', '--no-report']);
  assert.equal(maxRate.status, 2);
  assert.match(maxRate.stderr, /LMB_ERR_INVALID_ARGUMENT.*max-rate searches the request rate/);
});

test('workload from-trace --out a folder, or a path through a file, is an argument error naming --out', async () => {
  for (const out of ['.', join('bg-file.csv', 'x.yaml')]) {
    writeFileSync(join(dir, 'bg-file.csv'), 'not a folder');
    const t = io();
    assert.equal(await main(['workload', 'from-trace', join(traces, 'burstgpt-1-head400.csv'), '--out', out], t), 2, t.err());
    assert.match(t.err(), /LMB_ERR_INVALID_ARGUMENT: --out .*cannot write there/);
  }
});
