import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { main } from '../../src/cli/main.js';
import { COMMANDS, type CommandName } from '../../src/cli/registry.js';
import { DemoJson, ExportJson, IngestJson, ModelsShowJson, PlanJson, RecommendJson, ReportJson, RunDryRunJson, SimRunJson, SpaceJson, SurrogateTrainJson, TuneJson, ValidationJson, WorkloadFromTraceJson } from '../../src/cli/json-output.js';
import { captureIo } from '../helpers/cli.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { SMALL_CHAT_WORKLOAD_YAML } from '../helpers/workloads.js';
import { seedTrainedDb } from '../http/helpers.js';

// Each command's `--json` output parsed with the schema src/cli/json-output.ts declares for it
// (issue 27 §1), in-process through the CLI's entry: every key must be one the schema names, so a
// camelCase key (or any undeclared one) fails here before a user's script meets it.

const COVERED = new Set<CommandName>();

async function json(name: CommandName, argv: readonly string[], cwd: string, schema: z.ZodType): Promise<unknown> {
  const io = captureIo(cwd, { HF_HUB_OFFLINE: '1', LMB_DB: join(cwd, 'unused.db') });
  const code = await main([name, ...argv, '--json'], io);
  assert.equal(code, 0, `${name} ${argv.join(' ')}: ${io.err()}`);
  const body: unknown = JSON.parse(io.out());
  assertMatchesSchema(schema, body, `${name} ${argv[0] ?? ''}`);
  COVERED.add(name);
  return body;
}

test('each command prints the JSON its schema declares', { timeout: 600_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-json-schemas-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'small.yaml'), SMALL_CHAT_WORKLOAD_YAML);
  const empty = join(dir, 'empty.db');
  const trained = join(dir, 'trained.db');
  await seedTrainedDb(trained);
  const deployment = ['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', 'small.yaml'];

  // The simulator answers from an empty history; the saved surrogate from the trained one.
  const cold = (await json('recommend', [...deployment, '--db', empty, '--candidates', '500'], dir, RecommendJson)) as { surrogate_id: number | null };
  assert.equal(cold.surrogate_id, null);
  const warm = (await json('recommend', [...deployment, '--db', trained, '--candidates', '500'], dir, RecommendJson)) as { surrogate_id: number | null };
  assert.equal(warm.surrogate_id, 1);
  // Nothing meets this SLO: `nearest` says what comes nearest.
  const none = (await json('recommend', [...deployment, '--db', empty, '--candidates', '500', '--slo', 'ttft_p99_ms=5,itl_p99_ms=1'], dir, RecommendJson)) as { nearest: unknown };
  assert.notEqual(none.nearest, null);

  const ingested = (await json('ingest', [join(PROJECT_ROOT, 'test', 'fixtures', 'ingest', 'vllm-serve-newest.json'), '--gpu', 'H100-SXM', '--model', 'llama-3.1-8b', '--set', 'max_num_seqs=64', '--db', trained], dir, IngestJson)) as { files: { run_ids: number[] }[] };
  assert.equal(ingested.files[0]?.run_ids.length, 1);

  const surrogate = ['--db', trained, '--folds', '2', '--members', '1', '--rounds', '10', '--threads', '0', '--seed', '1'];
  const fitted = (await json('surrogate', ['train', ...surrogate], dir, SurrogateTrainJson)) as { surrogate_id: number; validation: unknown };
  assert.equal(fitted.surrogate_id, 2);
  assert.notEqual(fitted.validation, null, 'the validation block was checked too');
  await json('surrogate', ['eval', ...surrogate], dir, ValidationJson);

  await json('space', deployment, dir, SpaceJson);
  await json('sim', ['run', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--input-len', '64', '--output-len', '16', '--num-prompts', '10', '--seed', '1'], dir, SimRunJson);
  await json('plan', ['--model', 'llama-3.1-8b', '--workload', 'small.yaml', '--rate', '2', '--gpu', 'H100-SXM,L40S', '--max-gpus', '2', '--db', empty], dir, PlanJson);
  await json('run', ['--endpoint', 'http://127.0.0.1:9/v1/completions', '--model', 'llama-3.1-8b', '--workload', 'small.yaml', '--dry-run'], dir, RunDryRunJson);

  const study = (await json('tune', ['--study', 'chat', ...deployment, '--target', 'sim', '--budget-trials', '3', '--seed', '2', '--no-report', '--db', empty], dir, TuneJson)) as { recommendation: unknown; trials: unknown[] };
  assert.equal(study.trials.length, 3);
  assert.notEqual(study.recommendation, null, 'the pick was checked too');
  await json('report', ['--study', 'chat', '--out', join(dir, 'report'), '--db', empty], dir, ReportJson);
  await json('export', ['--study', 'chat', '--format', 'llm-d-br', '--out', join(dir, 'br'), '--db', empty], dir, ExportJson);
  await json('models', ['show', 'llama-3.1-8b'], dir, ModelsShowJson);
  await json('workload', ['from-trace', join(PROJECT_ROOT, 'test', 'fixtures', 'traces', 'plain-splitwise-conv-head50.jsonl')], dir, WorkloadFromTraceJson);
  // The deprecated alias prints what `surrogate train` does.
  await json('model', ['train', '--db', trained, '--folds', '0', '--members', '1', '--rounds', '10', '--threads', '0'], dir, SurrogateTrainJson);
  await json('demo', ['--trials', '3', '--parallel', '1', '--db', join(dir, 'demo.db'), '--out', join(dir, 'demo')], dir, DemoJson);

  // Every command whose usage offers --json was run here (a new one must declare its schema). `sim
  // predict` and `sim calibrate` are checked where their tests run them (test/calibration/predict-*.test.ts,
  // history.test.ts), and a `run` that sends load in test/loadgen/e2e-sim.test.ts.
  const withJson: CommandName[] = [];
  for (const name of Object.keys(COMMANDS) as CommandName[]) if ((await COMMANDS[name].usage()).usage.includes('--json')) withJson.push(name);
  assert.ok(withJson.length >= 10, 'the usage texts were read');
  assert.deepEqual(withJson.filter((n) => !COVERED.has(n)), []);
});
