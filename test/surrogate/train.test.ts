import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT, defaultCatalog } from '../../src/catalog/index.js';
import { command as modelCommand } from '../../src/cli/commands/model.js';
import { command as recommendCommand } from '../../src/cli/commands/recommend.js';
import type { CliIo } from '../../src/cli/io.js';
import { captureIo } from '../helpers/cli.js';
import { isLmBenchError } from '../../src/errors.js';
import { simulateHistory } from '../../src/surrogate/sim-history.js';
import { trainFromStore } from '../../src/surrogate/train.js';
import { loadSurrogateFor } from '../../src/surrogate/registry.js';
import { recommend } from '../../src/optimize/recommend.js';
import { spaceEncoder, spaceSource } from '../../src/optimize/space-source.js';
import { loadSpace } from '../../src/space/index.js';
import { openStore } from '../../src/store/index.js';
import { createRng } from '../../src/util/rng.js';
import { context } from './fixtures.js';
import type { FeatureContext } from '../../src/surrogate/features.js';
import { startupCheck } from '../../src/physics/index.js';

const catalog = defaultCatalog();
const space = loadSpace(join(PROJECT_ROOT, 'search-spaces/vllm.yaml'));
const workload = { ...context.workload, num_prompts: 80 };
const ctx = { ...context, workload };

function seededDb(dir: string, runs: number, deployment: FeatureContext = ctx): string {
  const path = join(dir, 'h.db');
  const store = openStore(path, { now: () => 1 });
  const configs = [{}, ...spaceSource(space, deployment).sample(runs - 1, createRng(11))];
  const obs = simulateHistory([{ hardware: { gpu: deployment.hardware.id, count: deployment.gpuCount }, model: deployment.model.id, workload, configs }], catalog, createRng(12));
  for (const o of obs) {
    if (o.result === null) continue;
    store.storeRuns([{ result: o.result, serverConfig: o.config, hardware: o.hardware, model: o.model, workload: o.workload, sourceFormat: 'lm_bench', sourcePath: null, contentHash: createHash('sha256').update(JSON.stringify(o.config)).digest('hex') }]);
  }
  store.close();
  return path;
}

function cliIo(cwd: string): { io: CliIo; out: () => string } {
  const io = captureIo(cwd);
  return { io, out: io.out };
}

const SMALL = { members: 2, xgb: { rounds: 20, maxDepth: 4 }, feasibilityMembers: 1, targets: ['output_throughput_per_gpu', 'output_throughput', 'ttft_p99_ms', 'itl_p99_ms', 'tpot_p99_ms'] as const, minRows: 8 };

test('train from a SQLite store, load it back, recommend under the SLOs', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-model-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = seededDb(dir, 16);
  const store = openStore(path);
  t.after(() => store.close());
  const q = { gpu: 'H100-SXM', model: 'llama-3.1-8b' };
  assert.throws(() => loadSurrogateFor(store, q), (e: unknown) => isLmBenchError(e, 'LMB_ERR_MODEL_NOT_TRAINED'));
  const encoder = spaceEncoder(space);
  const out = await trainFromStore(store, catalog, encoder, { spec: { ...SMALL, targets: [...SMALL.targets] }, folds: 0 });
  assert.equal(out.validation, null);
  assert.equal(out.dataset.rows.length, 16);
  const { record, surrogate } = loadSurrogateFor(store, q);
  assert.equal(record.id, out.model.id);
  assert.deepEqual(record.metadata['feature_names'], out.dataset.featureNames);

  const rec = recommend({ surrogate, context: ctx, encoder, source: spaceSource(space, ctx), slo: { ttft_p99_ms: 2000, itl_p99_ms: 60 }, historyRuns: 16, rng: createRng(1), candidates: 600, keep: 300 });
  assert.ok(rec.best !== null);
  assert.ok((rec.best.predicted.output_throughput_per_gpu?.mean ?? 0) > 0);
  assert.ok((rec.best.predicted.ttft_p99_ms?.high ?? 0) >= (rec.best.predicted.ttft_p99_ms?.low ?? 1));
  assert.equal(rec.vllm_args?.[0], 'serve');
  assert.equal(rec.vllm_args?.[1], 'meta-llama/Llama-3.1-8B-Instruct');
  const yaml = parse(rec.vllm_config_yaml ?? '') as Record<string, unknown>;
  assert.equal(yaml['model'], 'meta-llama/Llama-3.1-8B-Instruct');
  assert.ok(rec.pareto.length >= 1);
  // 16 runs are fewer than the trust threshold: the verdict says so and names runs to do next.
  assert.equal(rec.trust.level, 'thin');
  assert.ok(rec.trust.reasons[0]?.includes('16 measured runs'));
  assert.ok(rec.trust.run_next.length >= 1);
});

test('CLI: model train --json, recommend --json; errors for an untrained store and bad flags', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // An untrained store: the simulator answers, labelled as such (test/advise has the details).
  const empty = cliIo(dir);
  assert.equal(await recommendCommand.run(['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', join(PROJECT_ROOT, 'data/workloads/chat.yaml'), '--db', join(dir, 'none.db'), '--json'], empty.io), 0);
  const cold = JSON.parse(empty.out()) as { surrogate_id: number | null; source: { kind: string } };
  assert.deepEqual([cold.surrogate_id, cold.source.kind], [null, 'simulator']);
  const path = seededDb(dir, 12);
  const train = cliIo(dir);
  assert.equal(await modelCommand.run(['train', '--db', path, '--folds', '0', '--members', '2', '--rounds', '15', '--threads', '0', '--json'], train.io), 0);
  const trained = JSON.parse(train.out()) as { surrogate_id: number; rows: number };
  assert.equal(trained.rows, 12);
  const rec = cliIo(dir);
  const args = ['--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', join(PROJECT_ROOT, 'data/workloads/chat.yaml'), '--slo', 'ttft_p99_ms=3000,itl_p99_ms=80', '--db', path, '--candidates', '500', '--json'];
  assert.equal(await recommendCommand.run(args, rec.io), 0);
  const body = JSON.parse(rec.out()) as { surrogate_id: number; trust: { level: string }; slo: Record<string, number> };
  assert.equal(body.surrogate_id, trained.surrogate_id);
  assert.equal(body.trust.level, 'thin');
  assert.deepEqual(body.slo, { ttft_p99_ms: 3000, itl_p99_ms: 80 });
  const badSlo = args.map((a) => (a === 'ttft_p99_ms=3000,itl_p99_ms=80' ? 'ttft_p99_ms=abc' : a));
  await assert.rejects(recommendCommand.run(badSlo, rec.io), (e: unknown) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT') && /ttft_p99_ms/.test(e.message));
  await assert.rejects(modelCommand.run(['eval', '--db', path, '--folds', '1'], rec.io), (e: unknown) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT'));
});

test('an MoE model end to end: runs of gpt-oss-120b on 8×H100 train a model whose recommendation starts and names its layout', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-moe-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const moeCtx: FeatureContext = { ...ctx, gpuCount: 8, model: catalog.model('gpt-oss-120b') };
  const store = openStore(seededDb(dir, 16, moeCtx));
  t.after(() => store.close());
  const encoder = spaceEncoder(space);
  const out = await trainFromStore(store, catalog, encoder, { spec: { ...SMALL, targets: [...SMALL.targets] }, folds: 0 });
  assert.ok(out.dataset.featureNames.includes('knob_enable_expert_parallel'));
  assert.ok(out.dataset.featureNames.includes('model_moe_experts'));
  const { surrogate } = loadSurrogateFor(store, { gpu: 'H100-SXM', model: 'gpt-oss-120b' });
  const rec = recommend({ surrogate, context: moeCtx, encoder, source: spaceSource(space, moeCtx), slo: { ttft_p99_ms: 2000, itl_p99_ms: 60 }, historyRuns: 16, rng: createRng(1), candidates: 600, keep: 300 });
  assert.ok(rec.best !== null);
  const best = rec.best.config;
  const started = startupCheck(best, { hardware: moeCtx.hardware, gpuCount: 8, model: moeCtx.model });
  assert.ok(started.ok, JSON.stringify(best));
  assert.notEqual(best.quantization, 'fp8', 'C19: the MXFP4 checkpoint takes no --quantization fp8');
  assert.equal(rec.vllm_args?.[1], 'openai/gpt-oss-120b');
  // The layout is in the command: a DP × TP split of the 8 GPUs, and the EP flag exactly when chosen.
  const tp = best.tensor_parallel_size ?? 1;
  const dp = best.data_parallel_size ?? 1;
  assert.ok(tp * dp <= 8);
  assert.equal(rec.vllm_args?.includes('--enable-expert-parallel'), best.enable_expert_parallel === true);
});
