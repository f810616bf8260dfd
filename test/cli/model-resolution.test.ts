import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { openStore } from '../../src/store/index.js';
import { runCli, type CliRun } from '../helpers/cli.js';

// `--model` and `--gpu` end to end through real child processes: a Hugging Face cache laid out in a
// temp dir (refs/main + snapshots/REV/config.json), real SQLite files, never the network
// (HF_HUB_OFFLINE=1; the cache is passed in the child's environment).

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/hf-configs/${name}.json`, import.meta.url), 'utf8');
const REPO = 'Qwen/Qwen2.5-32B-Instruct';
const WORKLOAD = join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml');

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-model-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A Hugging Face cache holding one repo's config.json at refs/main. */
function writeCache(root: string, repo: string, configText: string, revision = 'rev1'): string {
  const folder = join(root, `models--${repo.split('/').join('--')}`);
  mkdirSync(join(folder, 'refs'), { recursive: true });
  mkdirSync(join(folder, 'snapshots', revision), { recursive: true });
  writeFileSync(join(folder, 'snapshots', revision, 'config.json'), configText);
  writeFileSync(join(folder, 'refs', 'main'), revision);
  return join(folder, 'snapshots', revision, 'config.json');
}

/** The 32B config with fewer layers: another checkpoint published under the same name. */
const otherCheckpoint = (): string => JSON.stringify({ ...(JSON.parse(fixture('qwen2.5-32b-instruct')) as Record<string, unknown>), num_hidden_layers: 48 });

const cli = (args: readonly string[], cache: string, cwd = PROJECT_ROOT): Promise<CliRun> =>
  runCli(args, { cwd, env: { HF_HUB_CACHE: cache, HF_HUB_OFFLINE: '1', LMB_DB: join(cache, 'unused.db') } });

const RECOMMEND = ['recommend', '--gpus', '2', '--workload', WORKLOAD, '--slo', 'ttft_p99_ms=5000,itl_p99_ms=200', '--candidates', '2000', '--json'];

test('recommend --model ORG/NAME from the Hugging Face cache answers (simulated) with `vllm serve ORG/NAME`, by the GPU nvidia-smi names or a datasheet YAML, storing nothing', async (t) => {
  const dir = tempDir(t);
  const cache = join(dir, 'hub');
  writeCache(cache, REPO, fixture('qwen2.5-32b-instruct'));
  const gpuYaml = join(dir, 'my-h100.yaml');
  writeFileSync(gpuYaml, 'name: My H100\nmemory_gb: 80\nhbm_bandwidth_gbs: 3350\nbf16_tflops: 989\nfp8_tflops: 1979\ninterconnect: { kind: nvlink, bandwidth_gbs: 450 }\ntdp_w: 700\n');
  const db = join(dir, 'history.db');
  for (const gpu of ['H100-SXM', 'NVIDIA H100 80GB HBM3', gpuYaml]) {
    const r = await cli([...RECOMMEND, '--model', REPO, '--gpu', gpu, '--db', db], cache);
    assert.equal(r.status, 0, r.stderr);
    const a = JSON.parse(r.stdout) as { source: { kind: string }; vllm_command: string | null; enqueue_command: string | null; cost: { usd_per_hour: number; price_source: string } | null };
    assert.equal(a.source.kind, 'simulator');
    // The simulated answer is priced like the others: 2 GPUs at the catalog's H100 price, or none for a datasheet without one.
    if (gpu === gpuYaml) assert.equal(a.cost, null);
    else assert.ok(a.cost !== null && a.cost.usd_per_hour > 0 && /prices\.yaml/.test(a.cost.price_source), JSON.stringify(a.cost));
    assert.ok(a.vllm_command?.startsWith(`vllm serve ${REPO} --tensor-parallel-size`), a.vllm_command ?? 'no pick');
    // The command to measure next names the model so that another shell resolves it again.
    assert.ok(a.enqueue_command?.includes(`--model ${REPO} `), a.enqueue_command ?? '');
  }
  const human = await cli([...RECOMMEND.filter((x) => x !== '--json'), '--model', REPO, '--gpu', 'H100-SXM', '--db', db], cache);
  assert.equal(human.status, 0, human.stderr);
  assert.match(human.stdout, new RegExp(`vllm serve ${REPO} `));
  // A question writes nothing, not even an empty history at --db.
  assert.equal(existsSync(db), false, 'no history file created');
});

test('tune with a cached non-catalog model stores its spec and hash; a resume after the cache changed keeps them; a second checkpoint of the name gets its own id and history', async (t) => {
  const dir = tempDir(t);
  const cacheA = join(dir, 'hub-a');
  const cacheB = join(dir, 'hub-b');
  const configA = writeCache(cacheA, REPO, fixture('qwen2.5-32b-instruct'));
  writeCache(cacheB, REPO, otherCheckpoint());
  const db = join(dir, 'history.db');
  const tune = (study: string, extra: readonly string[] = []): string[] => ['tune', '--study', study, '--db', db, '--no-report', '--json', ...extra];
  const deployment = ['--model', REPO, '--gpu', 'H100-SXM', '--gpus', '2', '--workload', WORKLOAD, '--budget-trials', '3', '--parallel', '2'];

  const first = await cli(tune('first', deployment), cacheA);
  assert.equal(first.status, 0, first.stderr);
  const studyOf = (name: string) => {
    const store = openStore(db, { readonly: true });
    try {
      const s = store.getStudy(name);
      return { spec: s.spec, trials: store.listTrials(s.id), runs: store.listRuns({ model: s.spec.model }), specs: store.listModelSpecs() };
    } finally {
      store.close();
    }
  };
  const a = studyOf('first');
  assert.equal(a.spec.model, 'qwen/qwen2.5-32b-instruct');
  assert.equal(a.spec.model_spec?.hf_name, REPO);
  assert.equal(a.spec.model_spec?.layers, 64);
  assert.match(a.spec.model_config_hash ?? '', /^[0-9a-f]{64}$/);
  assert.equal(a.trials.filter((x) => x.state === 'complete').length, 3, 'the trials ran in worker threads on the derived spec');
  assert.equal(a.runs.length, 3);
  assert.deepEqual(a.specs.map((m) => [m.id, m.config_hash, m.origin]), [[a.spec.model, a.spec.model_config_hash, 'hf-cache']]);

  // The cache's config.json changes under the study (a new revision of the repo).
  writeFileSync(configA, otherCheckpoint());
  const bare = await cli(tune('first'), cacheA);
  assert.equal(bare.status, 0, bare.stderr);
  const again = await cli(tune('first', deployment), cacheA);
  assert.equal(again.status, 0, `${again.stderr}\n${again.stdout}`);
  assert.match(again.stderr, /the study keeps its model \(qwen\/qwen2\.5-32b-instruct\)/);
  const resumed = studyOf('first');
  assert.deepEqual(resumed.spec, a.spec, 'the study keeps the spec it began with');
  assert.equal(resumed.trials.length, 3);

  // Another checkpoint under the same repo id: an id of its own, and a history of its own.
  const second = await cli(tune('second', [...deployment.slice(0, -4), '--budget-trials', '2', '--parallel', '1']), cacheB);
  assert.equal(second.status, 0, second.stderr);
  const b = studyOf('second');
  assert.match(b.spec.model, /^qwen\/qwen2\.5-32b-instruct@[0-9a-f]{8}$/);
  assert.equal(b.spec.model, `qwen/qwen2.5-32b-instruct@${(b.spec.model_config_hash ?? '').slice(0, 8)}`);
  assert.notEqual(b.spec.model_config_hash, a.spec.model_config_hash);
  assert.equal(b.spec.model_spec?.layers, 48);
  assert.equal(b.runs.length, 2);
  assert.equal(studyOf('first').runs.length, 3, 'the first checkpoint’s history is its own');
  assert.deepEqual(b.specs.map((m) => m.id).sort(), [a.spec.model, b.spec.model].sort());
});

test('models show prints the resolved spec, where it came from and its sizes; --json is one document', async (t) => {
  const dir = tempDir(t);
  const cache = join(dir, 'hub');
  const config = writeCache(cache, REPO, fixture('qwen2.5-32b-instruct'));
  const human = await cli(['models', 'show', REPO], cache);
  assert.equal(human.status, 0, human.stderr);
  assert.match(human.stdout, /^Model qwen\/qwen2\.5-32b-instruct \(Qwen\/Qwen2\.5-32B-Instruct\)/);
  assert.ok(human.stdout.includes(`hf-cache: ${config}`), human.stdout);
  assert.match(human.stdout, /config hash: +[0-9a-f]{64}/);
  assert.match(human.stdout, /32\.\d\d B total, 32\.\d\d B active/);
  // 64 layers × 2 × 8 KV heads × 128 × 2 bytes.
  assert.match(human.stdout, /KV per token: +262,144 bytes \(bf16 cache\)/);
  assert.match(human.stdout, /TP1 6\d\.\d GiB, TP2 3\d\.\d GiB, TP4 1\d\.\d GiB, TP8 \d\.\d GiB/);

  const mla = join(dir, 'deepseek-v3');
  mkdirSync(mla);
  writeFileSync(join(mla, 'config.json'), fixture('deepseek-v3'));
  const json = await cli(['models', 'show', mla, '--json'], cache);
  assert.equal(json.status, 0, json.stderr);
  const doc = JSON.parse(json.stdout) as { id: string; origin: string; location: string; config_hash: string; params_b: number; active_params_b: number; kv_bytes_per_token: { bf16: number }; weights_gib_per_gpu: { tensor_parallel_size: number; gib: number }[]; spec: { mla: unknown } };
  assert.equal(doc.id, 'deepseek-v3');
  assert.equal(doc.origin, 'path');
  assert.equal(doc.location, join(mla, 'config.json'));
  assert.match(doc.config_hash, /^[0-9a-f]{64}$/);
  assert.ok(doc.params_b > 600 && doc.active_params_b < 40);
  // MLA: one latent of 512 + a rope key of 64 per layer, 61 layers, not 2 × heads × head_dim.
  assert.equal(doc.kv_bytes_per_token.bf16, 61 * (512 + 64) * 2);
  assert.deepEqual(doc.weights_gib_per_gpu.map((w) => w.tensor_parallel_size), [1, 2, 4, 8]);
  assert.ok(doc.weights_gib_per_gpu.every((w, i, all) => i === 0 || w.gib < (all[i - 1]?.gib ?? 0)));
  assert.notEqual(doc.spec.mla, null);

  const missing = await cli(['models', 'show', 'Nobody/Nothing-7B', '--offline'], cache);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /LMB_ERR_UNKNOWN_MODEL.*--offline/);
});

/** Table row counts of a SQLite file, or null when the file was never created. */
function counts(db: string): Record<string, number> | null {
  if (!existsSync(db)) return null;
  const d = new Database(db, { readonly: true });
  try {
    const n = (table: string): number => (d.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    return { studies: n('studies'), runs: n('runs'), model_specs: n('model_specs'), events: n('events') };
  } finally {
    d.close();
  }
}

test('a model that does not resolve fails with its code and stores nothing (tune, demo, ingest)', async (t) => {
  const dir = tempDir(t);
  const cache = join(dir, 'hub');
  writeCache(cache, 'Acme/Strange-7B', JSON.stringify({ architectures: ['AcmeForCausalLM'], model_type: 'acme', hidden_size: 4096 }));
  const db = join(dir, 'history.db');
  // A history that exists, so "nothing stored" is checked against a real file.
  openStore(db).close();
  const before = counts(db);
  const deployment = ['--gpu', 'H100-SXM', '--gpus', '1', '--workload', WORKLOAD, '--budget-trials', '2', '--db', db, '--no-report'];
  const cases: [readonly string[], RegExp][] = [
    [['tune', '--study', 'nope', '--model', 'Nobody/Nothing-7B', ...deployment], /LMB_ERR_UNKNOWN_MODEL: unknown model "Nobody\/Nothing-7B".*HF_HUB_OFFLINE=1/],
    [['tune', '--study', 'strange', '--model', 'Acme/Strange-7B', ...deployment], /LMB_ERR_UNSUPPORTED_ARCHITECTURE/],
    [['tune', '--study', 'nogpu', '--model', 'llama-3.1-8b', ...deployment.map((x) => (x === 'H100-SXM' ? 'Z100-Imaginary' : x))], /LMB_ERR_UNKNOWN_GPU/],
    [['demo', '--model', join(dir, 'no-such-dir'), '--db', db, '--trials', '1'], /LMB_ERR_UNKNOWN_MODEL/],
    [['ingest', join(PROJECT_ROOT, 'test', 'fixtures', 'ingest'), '--model', 'Nobody/Nothing-7B', '--gpu', 'H100-SXM', '--db', db], /LMB_ERR_UNKNOWN_MODEL/],
  ];
  for (const [args, message] of cases) {
    const r = await cli(args, cache);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.deepEqual(counts(db), before, `${args[0] ?? ''} stored nothing`);
  }
});
