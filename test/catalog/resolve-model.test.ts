import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { defaultCatalog, registerModel } from '../../src/catalog/index.js';
import { resolveGpu } from '../../src/catalog/gpu-file.js';
import { resolveModel, type ResolveOptions } from '../../src/catalog/resolve-model.js';
import { isLmBenchError } from '../../src/errors.js';

// --model resolution against real files, a real Hugging Face cache layout on disk and a loopback
// stand-in for the hub's `resolve/<rev>/config.json` route; never the network.

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/hf-configs/${name}.json`, import.meta.url), 'utf8');
const catalog = defaultCatalog();

interface Hub {
  readonly url: string;
  readonly seen: { path: string; auth: string | undefined }[];
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}
let hub: Hub;
before(async () => {
  const seen: Hub['seen'] = [];
  const h: Partial<Hub> & { handler: Hub['handler'] } = { handler: (_q, r) => r.end() };
  const server: Server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', auth: req.headers.authorization });
    h.handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hub = Object.assign(h, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: (): Promise<void> => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  });
});
after(() => hub.close());

function opts(over: Partial<Omit<ResolveOptions, 'env'>> & { env?: Record<string, string> } = {}): ResolveOptions & { env: Record<string, string> } {
  const cache = mkdtempSync(join(tmpdir(), 'lmb-hf-'));
  const env = { HF_HUB_CACHE: cache, HF_ENDPOINT: hub.url, LMB_LOOPBACK_ONLY: '1', ...over.env };
  return { catalog, home: cache, timeoutMs: 2000, ...over, env };
}

/** A cache entry as `huggingface-cli download` leaves it: refs/main, a snapshot link into blobs. */
function cacheEntry(root: string, repo: string, text: string, revision = 'abc123'): string {
  const folder = join(root, `models--${repo.split('/').join('--')}`);
  mkdirSync(join(folder, 'blobs'), { recursive: true });
  mkdirSync(join(folder, 'refs'), { recursive: true });
  mkdirSync(join(folder, 'snapshots', revision), { recursive: true });
  writeFileSync(join(folder, 'blobs', 'e1'), text);
  symlinkSync('../../blobs/e1', join(folder, 'snapshots', revision, 'config.json'));
  writeFileSync(join(folder, 'refs', 'main'), revision);
  return folder;
}

test('a catalog id, alias or Hugging Face id resolves to the catalog, case-insensitive, without a file', async () => {
  for (const name of ['llama-3.1-8b', 'META-LLAMA/Llama-3.1-8B-Instruct', 'llama-3.1-8b-instruct']) {
    const r = await resolveModel(name, opts());
    assert.equal(r.origin, 'catalog');
    assert.equal(r.spec.id, 'llama-3.1-8b');
    assert.equal(r.config_hash, null);
  }
  assert.equal(hub.seen.length, 0);
});

test('a directory holding config.json, or the file, derives the spec; the hash names the checkpoint', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-model-'));
  const model = join(dir, 'Qwen2.5-32B-Instruct');
  mkdirSync(model);
  writeFileSync(join(model, 'config.json'), fixture('qwen2.5-32b-instruct'));
  const byDir = await resolveModel(model, opts());
  assert.equal(byDir.origin, 'path');
  assert.equal(byDir.spec.id, 'qwen2.5-32b-instruct');
  assert.equal(byDir.spec.hf_name, model, 'vllm serve takes the directory');
  assert.ok(Math.abs(byDir.spec.params_b - 32.8) / 32.8 < 0.02);
  const byFile = await resolveModel(join(model, 'config.json'), opts());
  assert.equal(byFile.config_hash, byDir.config_hash);
  assert.match(byDir.config_hash ?? '', /^[0-9a-f]{64}$/);
  // A directory without one says so.
  await assert.rejects(resolveModel(dir, opts()), (e) => isLmBenchError(e, 'LMB_ERR_UNKNOWN_MODEL') && /without a config\.json/.test((e as Error).message));
});

test('a directory named like a catalog model holding another checkpoint gets an id of its own, so lookups by id find its spec', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-model-'));
  // A local `Llama-3.1-8B-Instruct/` (a catalog alias) that holds a Qwen3-32B config.json.
  const model = join(dir, 'Llama-3.1-8B-Instruct');
  mkdirSync(model);
  writeFileSync(join(model, 'config.json'), fixture('qwen3-32b'));
  const r = await resolveModel(model, opts());
  assert.equal(r.spec.id, `llama-3.1-8b-instruct@${(r.config_hash ?? '').slice(0, 8)}`);
  registerModel(r.spec, r.config_hash);
  const looked = catalog.model(r.spec.id);
  assert.equal(looked.hf_name, model, 'vllm serve takes the directory, not the catalog model');
  assert.equal(looked.layers, 64);
  // A name no catalog model has keeps the directory's name.
  const other = join(dir, 'my-finetune');
  mkdirSync(other);
  writeFileSync(join(other, 'config.json'), fixture('qwen3-32b'));
  assert.equal((await resolveModel(other, opts())).spec.id, 'my-finetune');
});

test('a Hugging Face cache snapshot directory is named by its repo, as --model ORG/NAME names it, not by the revision', async () => {
  const o = opts({ env: { HF_HUB_OFFLINE: '1' } });
  const folder = cacheEntry(o.env['HF_HUB_CACHE'] as string, 'Acme/Tiny-Qwen', fixture('qwen3-8b'), '0123456789abcdef0123456789abcdef01234567');
  const snapshot = join(folder, 'snapshots', '0123456789abcdef0123456789abcdef01234567');
  const byPath = await resolveModel(snapshot, o);
  assert.equal(byPath.origin, 'path');
  assert.equal(byPath.spec.id, 'acme/tiny-qwen');
  assert.equal(byPath.spec.hf_name, snapshot, 'vllm serve takes the directory it was given');
  const byRepo = await resolveModel('Acme/Tiny-Qwen', o);
  assert.equal(byRepo.spec.id, byPath.spec.id);
  assert.equal(byRepo.config_hash, byPath.config_hash);
});

test('an ORG/NAME repo in the local cache resolves at refs/main, offline, without asking the hub', async () => {
  const o = opts({ env: { HF_HUB_OFFLINE: '1' } });
  // A fine-tune of a catalog model: its own name, so the cache answers, not the catalog.
  cacheEntry(o.env['HF_HUB_CACHE'] as string, 'acme/Llama-3.1-8B-Instruct-FP8-ft', fixture('llama-3.1-8b-fp8'));
  const before0 = hub.seen.length;
  const r = await resolveModel('acme/Llama-3.1-8B-Instruct-FP8-ft', o);
  assert.equal(r.origin, 'hf-cache');
  assert.equal(r.spec.id, 'acme/llama-3.1-8b-instruct-fp8-ft');
  assert.equal(r.spec.hf_name, 'acme/Llama-3.1-8B-Instruct-FP8-ft');
  assert.equal(r.spec.native_quantization, 'fp8');
  assert.equal(hub.seen.length, before0);
  // HF_HOME/hub is the cache when HF_HUB_CACHE is unset.
  const home = mkdtempSync(join(tmpdir(), 'lmb-hfhome-'));
  cacheEntry(join(home, 'hub'), 'microsoft/phi-4', fixture('phi-4'));
  const viaHome = await resolveModel('microsoft/phi-4', { catalog, env: { HF_HOME: home, HF_HUB_OFFLINE: '1' }, home });
  assert.equal(viaHome.origin, 'hf-cache');
});

test('a ModelOpt checkpoint whose quantization is in hf_quant_config.json beside config.json is fp8, as vLLM reads it', async () => {
  const o = opts({ env: { HF_HUB_OFFLINE: '1' } });
  const full = JSON.parse(fixture('llama-3.1-8b-fp8')) as Record<string, unknown>;
  const { quantization_config: quant, ...bare } = full;
  const folder = cacheEntry(o.env['HF_HUB_CACHE'] as string, 'acme/Llama-3.1-8B-FP8-old-modelopt', JSON.stringify(bare));
  const plain = await resolveModel('acme/Llama-3.1-8B-FP8-old-modelopt', o);
  assert.equal(plain.spec.native_quantization, 'none', 'config.json alone says bf16');
  // ModelOpt ≤ 0.29 wrote only producer and quantization, no quant_method.
  const { quant_method: _m, ...modelopt } = quant as Record<string, unknown>;
  writeFileSync(join(folder, 'snapshots', 'abc123', 'hf_quant_config.json'), JSON.stringify(modelopt));
  const r = await resolveModel('acme/Llama-3.1-8B-FP8-old-modelopt', o);
  assert.equal(r.spec.native_quantization, 'fp8');
  assert.equal(r.spec.quantization_method, 'modelopt');
  assert.notEqual(r.config_hash, plain.config_hash, 'the quantization is part of the checkpoint identity');
  // A config.json with its own quantization_config wins over the file beside it.
  writeFileSync(join(folder, 'snapshots', 'abc123', 'hf_quant_config.json'), '{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4"}}');
  const own = cacheEntry(o.env['HF_HUB_CACHE'] as string, 'acme/own-quant', fixture('llama-3.1-8b-fp8'));
  writeFileSync(join(own, 'snapshots', 'abc123', 'hf_quant_config.json'), '{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4"}}');
  assert.equal((await resolveModel('acme/own-quant', o)).spec.native_quantization, 'fp8');
  // A broken one is refused with its path.
  writeFileSync(join(folder, 'snapshots', 'abc123', 'hf_quant_config.json'), '{"producer": ');
  await assert.rejects(resolveModel('acme/Llama-3.1-8B-FP8-old-modelopt', o), (e) => isLmBenchError(e, 'LMB_ERR_MODEL_CONFIG_INVALID') && /hf_quant_config\.json: not JSON/.test((e as Error).message));
});

test('a broken or looping cache link, and a 50 MB config.json, are refused with the path and the reason', async () => {
  const o = opts({ env: { HF_HUB_OFFLINE: '1' } });
  const root = o.env['HF_HUB_CACHE'] as string;
  const broken = cacheEntry(root, 'org/broken', '{}');
  rmSync(join(broken, 'blobs', 'e1'));
  await assert.rejects(resolveModel('org/broken', o), (e) => isLmBenchError(e, 'LMB_ERR_MODEL_CONFIG_INVALID') && /broken link/.test((e as Error).message));
  const loop = join(root, 'models--org--loop');
  mkdirSync(join(loop, 'refs'), { recursive: true });
  mkdirSync(join(loop, 'snapshots', 'r1'), { recursive: true });
  writeFileSync(join(loop, 'refs', 'main'), 'r1');
  symlinkSync('config.json', join(loop, 'snapshots', 'r1', 'config.json'));
  await assert.rejects(resolveModel('org/loop', o), (e) => isLmBenchError(e, 'LMB_ERR_MODEL_CONFIG_INVALID') && /loop/.test((e as Error).message));
  const big = mkdtempSync(join(tmpdir(), 'lmb-big-'));
  writeFileSync(join(big, 'config.json'), Buffer.alloc(50 * 1024 * 1024, 32));
  await assert.rejects(resolveModel(big, o), (e) => isLmBenchError(e, 'LMB_ERR_MODEL_CONFIG_INVALID') && /50\.0 MB is not a config\.json/.test((e as Error).message));
  // Not JSON, an unknown architecture: each with its code and the file.
  const bad = mkdtempSync(join(tmpdir(), 'lmb-bad-'));
  writeFileSync(join(bad, 'config.json'), '{"architectures": ["LlamaForCausalLM"], ');
  await assert.rejects(resolveModel(bad, o), (e) => isLmBenchError(e, 'LMB_ERR_MODEL_CONFIG_INVALID') && (e as Error).message.startsWith(join(bad, 'config.json')));
  writeFileSync(join(bad, 'config.json'), JSON.stringify({ architectures: ['MambaForCausalLM'], model_type: 'mamba', hidden_size: 768 }));
  await assert.rejects(resolveModel(bad, o), (e) => isLmBenchError(e, 'LMB_ERR_UNSUPPORTED_ARCHITECTURE') && /Mamba/.test((e as Error).message));
  // A `config.json` that is a directory: the path and why, not an internal EISDIR.
  const odd = mkdtempSync(join(tmpdir(), 'lmb-odd-'));
  mkdirSync(join(odd, 'config.json'));
  await assert.rejects(resolveModel(odd, o), (e) => isLmBenchError(e, 'LMB_ERR_MODEL_CONFIG_INVALID') && /config\.json: not a file/.test((e as Error).message));
});

test('from the hub: config.json only, with HF_TOKEN, stored where huggingface_hub would, then found offline', async () => {
  hub.handler = (req, res) => {
    if (req.url === '/google/gemma-3-27b-it/resolve/main/config.json') {
      res.writeHead(200, { 'content-type': 'application/json', 'x-repo-commit': 'c0ffee', etag: '"e7a9"' });
      res.end(fixture('gemma-3-27b-it'));
    } else {
      res.writeHead(404);
      res.end();
    }
  };
  const o = opts({ env: { HF_TOKEN: 'hf_secret' } });
  const r = await resolveModel('google/gemma-3-27b-it', o);
  assert.equal(r.origin, 'hub');
  assert.equal(hub.seen.at(-1)?.auth, 'Bearer hf_secret');
  const root = o.env['HF_HUB_CACHE'] as string;
  const snapshot = join(root, 'models--google--gemma-3-27b-it', 'snapshots', 'c0ffee', 'config.json');
  assert.ok(existsSync(snapshot));
  assert.equal(readFileSync(join(root, 'models--google--gemma-3-27b-it', 'refs', 'main'), 'utf8'), 'c0ffee');
  assert.ok(existsSync(join(root, 'models--google--gemma-3-27b-it', 'blobs', 'e7a9')));
  const again = await resolveModel('google/gemma-3-27b-it', { ...o, env: { ...o.env, HF_HUB_OFFLINE: '1' } });
  assert.equal(again.origin, 'hf-cache');
  assert.equal(again.config_hash, r.config_hash);
});

test('a hub whose X-Repo-Commit is a path (../..) cannot make the resolver write outside the repo’s cache folder', async () => {
  // Three levels up from snapshots/ is the cache root's parent (the shared temporary folder): a name of this run's own.
  const escaped = `lmb-escaped-${process.pid}-${Date.now()}`;
  hub.handler = (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-repo-commit': req.url?.includes('dots') === true ? '..' : `../../../${escaped}`, etag: '"e1"' });
    res.end(fixture('qwen3-8b'));
  };
  for (const repo of ['org/slashes', 'org/dots']) {
    const o = opts();
    const root = o.env['HF_HUB_CACHE'] as string;
    const r = await resolveModel(repo, o);
    const outside = join(root, '..', escaped);
    const leaked = existsSync(outside);
    rmSync(outside, { recursive: true, force: true });
    assert.equal(r.origin, 'hub');
    const folder = join(root, `models--${repo.replace('/', '--')}`);
    // The revision asked for names the snapshot instead; nothing lands beside or above the folder.
    assert.ok(existsSync(join(folder, 'snapshots', 'main', 'config.json')), repo);
    assert.equal(readFileSync(join(folder, 'refs', 'main'), 'utf8'), 'main', repo);
    assert.ok(!existsSync(join(folder, 'config.json')) && !leaked, repo);
  }
});

test('a hub that answers 401, 404 or 500 or hangs, and HF_HUB_OFFLINE with nothing cached, each fail clearly', async () => {
  const status = (code: number): void => {
    hub.handler = (_q, res) => {
      res.writeHead(code);
      res.end();
    };
  };
  status(401);
  await assert.rejects(resolveModel('org/gated-model', opts()), (e) => isLmBenchError(e, 'LMB_ERR_HUB_UNAUTHORIZED') && /HF_TOKEN/.test((e as Error).message));
  status(404);
  await assert.rejects(resolveModel('org/nothing-here', opts()), (e) => {
    assert.ok(isLmBenchError(e, 'LMB_ERR_UNKNOWN_MODEL'));
    // What was tried, in order, and how to point at a config.json.
    const m = (e as Error).message;
    assert.ok(m.indexOf('1. the catalog') < m.indexOf('2. a path') && m.indexOf('2. a path') < m.indexOf('3. the Hugging Face cache') && m.indexOf('3. the Hugging Face cache') < m.indexOf('4. the hub'), m);
    assert.match(m, /config\.json/);
    return true;
  });
  status(500);
  await assert.rejects(resolveModel('org/flaky', opts()), (e) => isLmBenchError(e, 'LMB_ERR_HUB_UNAVAILABLE') && /HTTP 500/.test((e as Error).message));
  hub.handler = () => undefined; // never answers
  const t0 = performance.now();
  await assert.rejects(resolveModel('org/slow', opts({ timeoutMs: 300 })), (e) => isLmBenchError(e, 'LMB_ERR_HUB_UNAVAILABLE') && /no answer within 0\.3 s/.test((e as Error).message));
  assert.ok(performance.now() - t0 < 5000);
  const before0 = hub.seen.length;
  await assert.rejects(resolveModel('org/offline', opts({ env: { HF_HUB_OFFLINE: '1' } })), (e) => isLmBenchError(e, 'LMB_ERR_UNKNOWN_MODEL') && /HF_HUB_OFFLINE=1/.test((e as Error).message));
  await assert.rejects(resolveModel('org/offline', opts({ offline: true })), (e) => isLmBenchError(e, 'LMB_ERR_UNKNOWN_MODEL') && /--offline/.test((e as Error).message));
  assert.equal(hub.seen.length, before0, 'offline: the hub was not asked');
  // A hub off this machine is refused under the test runner's loopback rule, before any connection.
  await assert.rejects(resolveModel('org/remote', opts({ env: { HF_ENDPOINT: 'https://hub.example.com' } })), (e) => isLmBenchError(e, 'LMB_ERR_HUB_UNAVAILABLE') && /LMB_LOOPBACK_ONLY/.test((e as Error).message));
});

test('--gpu takes the names nvidia-smi prints and a YAML datasheet, checked field by field', () => {
  assert.equal(catalog.gpu('NVIDIA H100 80GB HBM3').id, 'H100-SXM');
  assert.equal(catalog.gpu('NVIDIA A100-SXM4-80GB').id, 'A100-80GB');
  assert.equal(catalog.gpu('NVIDIA H100 PCIe').id, 'H100-PCIe');
  assert.equal(catalog.gpu('AMD Instinct MI300X').id, 'MI300X');
  assert.throws(() => catalog.gpu('NVIDIA GeForce RTX 4090'), (e) => isLmBenchError(e, 'LMB_ERR_UNKNOWN_GPU') && /YAML file/.test((e as Error).message));
  const dir = mkdtempSync(join(tmpdir(), 'lmb-gpu-'));
  const file = join(dir, 'rtx-pro-6000.yaml');
  writeFileSync(file, 'name: NVIDIA RTX PRO 6000\nmemory_gb: 96\nhbm_bandwidth_gbs: 1792\nbf16_tflops: 500\nfp8_tflops: 1000\ninterconnect: { kind: pcie, bandwidth_gbs: 128 }\ntdp_w: 600\n');
  const hw = resolveGpu(file, catalog);
  assert.equal(hw.id, 'rtx-pro-6000');
  assert.equal(hw.memory_visible_gib, 95.04);
  assert.equal(catalog.gpu('rtx-pro-6000').hbm_bandwidth_gbs, 1792, 'registered for later lookups');
  writeFileSync(file, 'memory_gb: 96\nhbm_bandwidth_gbs: -5\nbf16_tflops: 500\nfp8_tflops: null\ninterconnect: { kind: pcie, bandwidth_gbs: 128 }\ntdp_w: 600\n');
  assert.throws(() => resolveGpu(file, catalog), (e) => isLmBenchError(e, 'LMB_ERR_CONFIG_INVALID') && /hbm_bandwidth_gbs/.test((e as Error).message) && /:2/.test((e as Error).message));
});
