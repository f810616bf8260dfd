import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { command } from '../../src/cli/commands/models.js';
import { isLmBenchError } from '../../src/errors.js';
import { captureIo } from '../helpers/cli.js';

// `models show` in-process on real config.json fixtures: the weights a GPU holds are printed only for the
// tensor-parallel sizes vLLM starts; a size it refuses says why, and --json lists only the sizes it starts.

/** A folder holding the fixture as its config.json, as `huggingface-cli download` leaves one. */
function modelDir(t: TestContext, fixture: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-models-show-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const model = join(dir, fixture);
  mkdirSync(model);
  copyFileSync(join(PROJECT_ROOT, 'test/fixtures/hf-configs', `${fixture}.json`), join(model, 'config.json'));
  return model;
}

async function show(dir: string, ...flags: string[]): Promise<string> {
  // --db at a file that does not exist: the user's history is never read.
  const io = captureIo(dir, { HF_HUB_OFFLINE: '1' });
  assert.equal(await command.run(['show', dir, '--offline', '--db', join(dir, 'none.db'), ...flags], io), 0, io.err());
  return io.out();
}

const tpSizes = (json: string): number[] => (JSON.parse(json) as { weights_gib_per_gpu: { tensor_parallel_size: number }[] }).weights_gib_per_gpu.map((w) => w.tensor_parallel_size);

test('phi-4 (40 heads, 10 KV heads): TP4 and TP8 are refused (C3), not priced', async (t) => {
  const dir = modelDir(t, 'phi-4');
  const text = await show(dir);
  assert.match(text, /weights\/GPU: +TP1 \d+\.\d GiB, TP2 \d+\.\d GiB, TP4 refused, TP8 refused/);
  assert.match(text, /TP4: vLLM refuses it, C3: .*10 is not divisible by 4/);
  const json = await show(dir, '--json');
  assert.deepEqual(tpSizes(json), [1, 2]);
  // The refused sizes are in the JSON too, with vLLM's reason.
  const tp = (JSON.parse(json) as { tensor_parallel: { tensor_parallel_size: number; refused?: string; gib?: number }[] }).tensor_parallel;
  assert.deepEqual(tp.map((l) => l.tensor_parallel_size), [1, 2, 4, 8]);
  assert.match(tp[2]?.refused ?? '', /^C3: .*10 is not divisible by 4/);
  assert.ok((tp[0]?.gib ?? 0) > 0 && tp[0]?.refused === undefined);
});

test('Qwen2.5-7B (28 heads) is refused at TP8 (C2); Llama 3.1 8B runs at every size', async (t) => {
  const qwen = await show(modelDir(t, 'qwen2.5-7b-instruct-awq'));
  assert.match(qwen, /TP4 \d\.\d GiB, TP8 refused/);
  assert.match(qwen, /TP8: vLLM refuses it, C2: Total number of attention heads \(28\) must be divisible by tensor parallel size \(8\)/);
  const llama = modelDir(t, 'llama-3.1-8b');
  assert.doesNotMatch(await show(llama), /refused/);
  assert.deepEqual(tpSizes(await show(llama, '--json')), [1, 2, 4, 8]);
});

test('an FP8 MoE whose expert slices break the 128-wide blocks at TP4 is priced with expert parallelism, and says so', async (t) => {
  // Qwen3-30B-A3B-FP8: experts 768 wide, 768 / 4 = 192 is not whole 128-blocks (C18) without EP.
  const text = await show(modelDir(t, 'qwen3-30b-a3b-fp8'));
  assert.match(text, /TP2 \d+\.\d GiB, TP4 \d+\.\d GiB \(with --enable-expert-parallel\), TP8 \d+\.\d GiB \(with --enable-expert-parallel\)/);
});

test('models show without MODEL names the positional MODEL and the catalog ids, not a --model flag', async () => {
  const io = captureIo(tmpdir(), { HF_HUB_OFFLINE: '1' });
  await assert.rejects(
    command.run(['show', '--offline'], io),
    (e) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT') && /models show needs a MODEL/.test(e.message) && /llama-3\.1-8b/.test(e.message) && !/--model/.test(e.message),
  );
  await assert.rejects(command.run(['list'], io), (e) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT') && /catalog models: .*qwen3-8b/.test(e.message));
});

test('an MLA model is described by its latent, not as "1 KV heads × 192" (the query head width)', async (t) => {
  const text = await show(modelDir(t, 'deepseek-v3'));
  assert.match(text, /128 attention heads × 192; MLA: KV latent 512 \+ rope 64 per layer/);
  assert.doesNotMatch(text, /KV heads? ×/);
});

test('a float16 checkpoint caches KV in fp16 (kv_cache_dtype=auto), and says so', async (t) => {
  // Llama 2 70B: 80 layers × 8 KV heads × 128 × 2 (K and V) × 2 bytes.
  assert.match(await show(modelDir(t, 'llama-2-70b-hf')), /KV per token: +327,680 bytes \(fp16 cache\)/);
});
