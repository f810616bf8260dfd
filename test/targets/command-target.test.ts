import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCommandTarget } from '../../src/targets/command-target.js';
import { splitArgv } from '../../src/targets/argv.js';
import { normalizeHarnessResult } from '../../src/targets/harness-result.js';
import type { TrialInput } from '../../src/targets/types.js';
import type { BenchmarkResult, ServerConfig } from '../../src/domain/index.js';
import { defaultCatalog } from '../../src/catalog/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { resolveConfig } from '../../src/physics/index.js';

const harness = fileURLToPath(new URL('../fixtures/targets/harness.mjs', import.meta.url));
const input: TrialInput = {
  trial_id: 7,
  study: 's',
  seed: 1,
  config: { max_num_seqs: 64 },
  workload: { name: 'w', api: 'completions', input_len: { dist: 'fixed', value: 10 }, output_len: { dist: 'fixed', value: 5 }, arrival: { kind: 'closed', concurrency: 1 }, num_prompts: 2, ignore_eos: true },
  hardware: { gpu: 'H100-SXM', count: 1 },
  model: 'llama-3.1-8b',
  slo: {},
};
// The real target is given the ingest normaliser; here the raw JSON is passed through for inspection.
const passThrough = (raw: unknown): BenchmarkResult => raw as BenchmarkResult;

test('argv is split like a user means it, quotes kept together, no shell', () => {
  assert.deepEqual(splitArgv(`run.sh --name "a b" 'c d' e\\ f`), ['run.sh', '--name', 'a b', 'c d', 'e f']);
  assert.deepEqual(splitArgv('x $(rm -rf /) ; y'), ['x', '$(rm', '-rf', '/)', ';', 'y']);
  assert.throws(() => splitArgv('a "b'), (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && /unterminated "/.test(err.message));
});

test('exit 0 with a result file is a measured trial; the trial file reached the harness', async () => {
  const t = createCommandTarget({ command: `${process.execPath} ${harness} ok "x y"`, timeoutMs: 10_000, parseResult: passThrough });
  const out = await t.runTrial(input);
  assert.equal(out.status, 'ok');
  if (out.status !== 'ok') return;
  const raw = out.result as unknown as Record<string, unknown>;
  assert.equal(raw['output_throughput'], 640);
  assert.equal(raw['echo_trial'], 7);
  assert.equal(raw['echo_arg'], 'x y');
});

test('a non-zero exit fails the trial with the last lines of stderr as the reason', async () => {
  const t = createCommandTarget({ command: `${process.execPath} ${harness} oom`, timeoutMs: 10_000, parseResult: passThrough });
  const out = await t.runTrial(input);
  assert.equal(out.status, 'failed');
  if (out.status !== 'failed') return;
  assert.equal(out.code, 'LMB_ERR_COMMAND_FAILED');
  assert.equal(out.started, false);
  assert.match(out.reason, /exited 1: .*CUDA out of memory/s);
});

test('a command outliving the timeout is killed and the trial fails as a timeout', async () => {
  const t = createCommandTarget({ command: `${process.execPath} ${harness} hang`, timeoutMs: 300, parseResult: passThrough });
  const out = await t.runTrial(input);
  assert.equal(out.status, 'failed');
  if (out.status === 'failed') assert.equal(out.code, 'LMB_ERR_TRIAL_TIMEOUT');
  assert.ok(out.durationMs < 5000, `killed promptly (${out.durationMs} ms)`);
});

test('exit 0 without a result, or a result the normaliser rejects, is a failure with the reason', async () => {
  const none = createCommandTarget({ command: `${process.execPath} ${harness} noresult`, timeoutMs: 10_000, parseResult: passThrough });
  const a = await none.runTrial(input);
  assert.ok(a.status === 'failed' && /holds no JSON result/.test(a.reason));
  const strict = createCommandTarget({
    command: `${process.execPath} ${harness} ok`,
    timeoutMs: 10_000,
    parseResult: () => {
      throw new Error('missing p99_itl_ms');
    },
  });
  const b = await strict.runTrial(input);
  assert.ok(b.status === 'failed' && /missing p99_itl_ms/.test(b.reason));
  const missing = createCommandTarget({ command: '/nonexistent/harness', timeoutMs: 10_000, parseResult: passThrough });
  const c = await missing.runTrial(input);
  assert.ok(c.status === 'failed' && /ENOENT|exited 127/.test(c.reason), c.status === 'failed' ? c.reason : '');
});

const llamaHarness = fileURLToPath(new URL('../fixtures/targets/llama-harness.mjs', import.meta.url));

test("the trial file carries every knob at vLLM's resolved value, so a harness for another engine can map the defaults", async () => {
  const catalog = defaultCatalog();
  const resolved = (c: ServerConfig): ReturnType<typeof resolveConfig> => resolveConfig(c, catalog.gpu('H100-SXM'), catalog.model('llama-3.1-8b'));
  const t = createCommandTarget({ command: `${process.execPath} ${llamaHarness}`, timeoutMs: 10_000, parseResult: passThrough });
  // vLLM's defaults trial chooses nothing: the harness still gets vLLM's value of each knob, and maps them.
  // On an H100 vLLM's default max_num_seqs is past llama-server's slot limit, which it says in its own words.
  const defaults = resolved({});
  assert.ok(defaults.max_num_seqs > 64, `vLLM's default max_num_seqs on H100 is ${defaults.max_num_seqs}`);
  const d = await t.runTrial({ ...input, config: {} });
  assert.equal(d.status, 'failed');
  if (d.status === 'failed') assert.match(d.reason, new RegExp(`--parallel ${defaults.max_num_seqs} --ctx-size ${defaults.max_model_len * defaults.max_num_seqs} --batch-size ${defaults.max_num_batched_tokens}[\\s\\S]*n_seq_max must be <= 64`));
  // A tuned trial: its own values, the rest at vLLM's, and which knobs it chose.
  const out = await t.runTrial({ ...input, config: { max_num_seqs: 32, max_model_len: 4096 } });
  assert.equal(out.status, 'ok', out.status === 'failed' ? out.reason : '');
  if (out.status !== 'ok') return;
  const raw = out.result as unknown as Record<string, unknown>;
  assert.deepEqual(raw['echo_config'], { ...resolved({ max_num_seqs: 32, max_model_len: 4096 }), max_num_seqs: 32, max_model_len: 4096 });
  assert.deepEqual(raw['echo_explicit'], ['max_model_len', 'max_num_seqs']);
});

test('a harness that leaves a process running in the background (holding its output) ends with its exit, and the process is stopped', { timeout: 20_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-bg-harness-'));
  const script = join(dir, 'harness.sh');
  const pidFile = join(dir, 'bg.pid');
  // `server &` in a wrapper: the background process inherits the harness's stdout and stderr.
  writeFileSync(script, `#!/bin/sh\nsleep 60 &\necho $! > "${pidFile}"\necho '{}' > "$LMB_RESULT_FILE"\nexit 0\n`);
  chmodSync(script, 0o755);
  // The timeout is past the test's own: before, the trial waited for the pipes, which the process held for 60 s.
  const t = createCommandTarget({ command: script, timeoutMs: 120_000, parseResult: passThrough });
  const out = await t.runTrial(input);
  assert.equal(out.status, 'ok', out.status === 'failed' ? out.reason : '');
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  assert.ok(!runs(pid), `the harness's background process ${pid} still runs after its trial`);
});

test('a result file with Python\'s bare NaN is read, and the figure it stands for refused by name', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-nan-harness-'));
  const script = join(dir, 'harness.sh');
  writeFileSync(script, `#!/bin/sh\necho '{"output_throughput": 4000, "p99_ttft_ms": NaN, "p99_tpot_ms": 20, "p99_itl_ms": 25, "p99_e2el_ms": 9000}' > "$LMB_RESULT_FILE"\n`);
  chmodSync(script, 0o755);
  const t = createCommandTarget({ command: script, timeoutMs: 10_000, parseResult: normalizeHarnessResult });
  const out = await t.runTrial(input);
  assert.equal(out.status, 'failed');
  if (out.status === 'failed') assert.match(out.reason, /result file rejected: result file: p99_ttft_ms: NaN is not a measurement/);
});

/** Whether `pid` is a live process (a zombie awaiting its reaper is not). */
function runs(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '');
  } catch {
    return false;
  }
}

test('a harness that prints megabytes without a newline fails with a reason of bounded size that still ends with its last line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-noisy-harness-'));
  const script = join(dir, 'noisy.mjs');
  // 16 MB of binary-looking noise on stderr in one "line", then the real complaint.
  writeFileSync(script, "const junk = 'x'.repeat(1 << 20);\nfor (let i = 0; i < 16; i++) process.stderr.write(junk);\nprocess.stderr.write('\\nRuntimeError: the real reason\\n', () => process.exit(3));\n");
  const t = createCommandTarget({ command: `${process.execPath} ${script}`, timeoutMs: 30_000, parseResult: passThrough });
  const out = await t.runTrial(input);
  assert.equal(out.status, 'failed');
  if (out.status !== 'failed') return;
  assert.match(out.reason, /exited 3: x+ …\nRuntimeError: the real reason$/);
  assert.ok(out.reason.length < 10_000, `reason of ${out.reason.length} characters`);
});
