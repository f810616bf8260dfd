import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { request } from 'undici';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { startSimServe } from '../helpers/sim-serve.js';
import { runCli, type CliRun } from '../helpers/cli.js';

// `sim run` and `sim serve` take --model as `recommend` and `tune` do (src/cli/model-flag.ts): a
// Hugging Face repo id found in a local cache, or a path to a config.json. Child processes, a cache in
// a temp dir, --offline and HF_HUB_OFFLINE=1 (never the hub); the server binds 127.0.0.1 port 0.

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/hf-configs/${name}.json`, import.meta.url), 'utf8');

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-sim-model-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A cache as `huggingface-cli download` leaves it: refs/main → snapshots/REV/config.json, a link into blobs/. */
function writeCache(root: string, repo: string, configText: string, revision = 'a1b2c3d4e5f6'): void {
  const folder = join(root, `models--${repo.split('/').join('--')}`);
  mkdirSync(join(folder, 'refs'), { recursive: true });
  mkdirSync(join(folder, 'blobs'), { recursive: true });
  mkdirSync(join(folder, 'snapshots', revision), { recursive: true });
  writeFileSync(join(folder, 'blobs', 'etag0001'), configText);
  symlinkSync(join('..', '..', 'blobs', 'etag0001'), join(folder, 'snapshots', revision, 'config.json'));
  writeFileSync(join(folder, 'refs', 'main'), revision);
}

const cli = (args: readonly string[], env: Record<string, string>): Promise<CliRun> => runCli(args, { cwd: PROJECT_ROOT, env: { HF_HUB_OFFLINE: '1', ...env }, timeoutMs: 60_000 });

const REPO = 'google/gemma-3-27b-it';

interface SimJson {
  readonly model: string | null;
  readonly model_id: string;
  readonly completed: number;
  readonly server_metrics: { readonly kv_cache_capacity_tokens: number | null };
}

test('sim run --model ORG/NAME from the local Hugging Face cache (gemma-3: text_config) simulates that model and names it', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const cache = join(dir, 'hub');
  writeCache(cache, REPO, fixture('gemma-3-27b-it'));
  const env = { HF_HUB_CACHE: cache, HF_HOME: join(dir, 'hf-home') };
  // At its whole 131,072-token context one H100 cannot hold a request, as in vLLM: the 10 full-attention
  // layers' 10 GiB and the sliding groups' budget (window − 1 and a step's 8,192 tokens) pass the 12.4
  // GiB left after the weights. A deployment sets a shorter max_model_len.
  const args = ['sim', 'run', '--gpu', 'H100-SXM', '--gpus', '1', '--model', REPO, '--offline', '--max-model-len', '32768', '--input-len', '256', '--output-len', '32', '--num-prompts', '40', '--concurrency', '8', '--profile', 'default', '--db', join(dir, 'none.db')];

  const human = await cli(args, env);
  assert.equal(human.status, 0, human.stderr);
  assert.match(human.stdout, /Model \/ hardware: +google\/gemma-3-27b-it on 1× H100-SXM/);
  assert.match(human.stdout, /Successful requests: +40\n/);

  const json = await cli([...args, '--json'], env);
  assert.equal(json.status, 0, json.stderr);
  const r = JSON.parse(json.stdout) as SimJson;
  assert.equal(r.model, REPO);
  assert.equal(r.model_id, REPO.toLowerCase());
  assert.equal(r.completed, 40);

  // The spec is the cache's config.json (gemma-3 keeps its sizes in text_config): half the layers in
  // another cache leave more room for the KV cache on the same GPU.
  const half = join(dir, 'hub-half');
  const gemma = JSON.parse(fixture('gemma-3-27b-it')) as { text_config: Record<string, unknown> & { num_hidden_layers: number } };
  writeCache(half, REPO, JSON.stringify({ ...gemma, text_config: { ...gemma.text_config, num_hidden_layers: gemma.text_config.num_hidden_layers / 2 } }));
  const halved = await cli([...args, '--json'], { ...env, HF_HUB_CACHE: half });
  assert.equal(halved.status, 0, halved.stderr);
  const h = JSON.parse(halved.stdout) as SimJson;
  assert.equal(h.model, REPO);
  assert.ok((h.server_metrics.kv_cache_capacity_tokens ?? 0) > (r.server_metrics.kv_cache_capacity_tokens ?? Infinity) * 1.5, `${h.server_metrics.kv_cache_capacity_tokens} vs ${r.server_metrics.kv_cache_capacity_tokens}`);

  // The same name with no cache holding it: the model is not guessed, and the hub is not asked.
  const missing = await cli(args, { HF_HUB_CACHE: join(dir, 'empty-hub'), HF_HOME: join(dir, 'hf-home') });
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /LMB_ERR_UNKNOWN_MODEL: unknown model "google\/gemma-3-27b-it".*--offline/);
});

test('sim serve --model PATH/config.json serves that model on loopback under the path vLLM would, and answers a completion', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const modelDir = join(dir, 'phi-4-local');
  mkdirSync(modelDir);
  const config = join(modelDir, 'config.json');
  writeFileSync(config, fixture('phi-4'));
  const sim = await startSimServe(['--gpu', 'H100-SXM', '--gpus', '1', '--model', config, '--offline', '--host', '127.0.0.1', '--speed', '50', '--startup-scale', '0', '--profile', 'default'], 60_000);
  t.after(() => sim.close());
  assert.match(sim.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.match(sim.startupLog, /simulated vLLM \(phi-4-local on H100-SXM/);

  const timeouts = { headersTimeout: 20_000, bodyTimeout: 20_000 };
  const models = await request(`${sim.url}/v1/models`, timeouts);
  assert.equal(models.statusCode, 200);
  const listed = (await models.body.json()) as { data: { id: string; root: string }[] };
  // As `vllm serve DIR`: the served name is the directory.
  assert.deepEqual(listed.data.map((m) => m.id), [modelDir]);

  const res = await request(`${sim.url}/v1/chat/completions`, {
    ...timeouts,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: modelDir, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 8, ignore_eos: true }),
  });
  assert.equal(res.statusCode, 200);
  const answer = (await res.body.json()) as { model: string; choices: { message: { content: string }; finish_reason: string }[]; usage: { completion_tokens: number } };
  assert.equal(answer.model, modelDir);
  assert.equal(answer.usage.completion_tokens, 8);
  assert.equal(answer.choices[0]?.finish_reason, 'length');
  assert.ok((answer.choices[0]?.message.content ?? '').length > 0, 'some text came back');
  assert.equal(await sim.close(), 0, 'exits 0 on SIGTERM');
});
