import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog } from '../../src/catalog/index.js';
import { OUT_OF_CATALOG_FIXTURES, OUT_OF_CATALOG_MLENERGY_ROWS, resolveFromCache, writeHfCache } from '../../src/calibration/out-of-catalog.js';
import { main } from '../../src/cli/main.js';
import { isLmBenchError } from '../../src/errors.js';
import { captureIo } from '../helpers/cli.js';

// Issue 24: ML.ENERGY rows of checkpoints outside the catalog, named by their Hugging Face ids with
// only their config.json in a cache (offline), are all predicted by `sim predict`: a dense model, two
// sliding-window ones (one with a context shorter than the protocol's max_model_len), an MoE and an MLA
// model. And a catalog model cached under a name the catalog does not know predicts as the catalog row.

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/hf-configs/${name}.json`, import.meta.url), 'utf8');

const KINDS = {
  dense: 'microsoft/phi-4',
  slidingWindow: 'google/gemma-3-27b-it',
  slidingWindowShortContext: 'google/gemma-2-9b-it',
  moe: 'meta-llama/Llama-4-Scout-17B-16E-Instruct',
  mla: 'deepseek-ai/DeepSeek-V3',
} as const;
const RENAMED = 'acme/Qwen3-14B-ft';

function cache(t: { after: (fn: () => void) => void }): { dir: string; root: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-ooc-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const root = join(dir, 'hf');
  writeHfCache(root, [
    ...Object.values(KINDS).map((repo) => ({ repo, config: fixture(OUT_OF_CATALOG_FIXTURES[repo] ?? '') })),
    { repo: RENAMED, config: fixture('qwen3-14b') },
  ]);
  return { dir, root };
}

test('out-of-catalog checkpoints resolve by Hugging Face id from the cache, each with the architecture it is chosen for', async (t) => {
  const { root } = cache(t);
  const catalog = defaultCatalog();
  const resolved = await resolveFromCache(Object.values(KINDS), { catalog, cacheRoot: root });
  const spec = (name: string) => resolved.get(name)?.spec;
  for (const name of Object.values(KINDS)) {
    assert.equal(resolved.get(name)?.origin, 'hf-cache', name);
    assert.equal(catalog.findOwn(name), null, `${name} must be outside the catalog`);
  }
  assert.ok(spec(KINDS.dense)?.moe === null && spec(KINDS.dense)?.sliding_window === null && spec(KINDS.dense)?.mla === null);
  assert.ok(spec(KINDS.slidingWindow)?.sliding_window !== null && spec(KINDS.slidingWindowShortContext)?.sliding_window !== null);
  assert.ok((spec(KINDS.slidingWindowShortContext)?.native_context ?? Infinity) < 20480, 'gemma-2-9b-it has 8,192 tokens of context');
  assert.ok(spec(KINDS.moe)?.moe !== null && spec(KINDS.moe)?.mla === null);
  assert.ok(spec(KINDS.mla)?.mla !== null && spec(KINDS.mla)?.moe !== null);
  // A name the catalog knows is refused: it would check the catalog row, not the config.json path.
  await assert.rejects(resolveFromCache(['Qwen/Qwen3-14B'], { catalog, cacheRoot: root }), (err) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT'));
});

interface Row {
  line: number;
  model: string;
  output_throughput_tok_s: number | null;
  median_itl_ms: number | null;
  error: { code: string; message: string } | null;
}

test('sim predict: ML.ENERGY rows of dense, sliding-window, MoE and MLA models outside the catalog are all predicted; a renamed catalog model predicts as the catalog', async (t) => {
  const { dir, root } = cache(t);
  const [header, ...lines] = OUT_OF_CATALOG_MLENERGY_ROWS.trim().split('\n');
  // One row per model, the largest max_num_seqs the module lists (the fewest steps: a fast test).
  const pick = Object.values(KINDS).map((repo) => {
    const mine = lines.filter((l) => l.startsWith(`${repo},`));
    const seqs = (l: string): number => Number(l.split(',')[10]);
    const best = mine.sort((a, b) => seqs(b) - seqs(a))[0];
    assert.ok(best !== undefined, `no row for ${repo}`);
    return best;
  });
  const qwen = (model: string): string => `${model},lm-arena-chat,bfloat16,14.8,14.8,H100,1,1,1,1,128,,620,,,,,,`;
  const file = join(dir, 'rows.csv');
  writeFileSync(file, [header, ...pick, qwen('Qwen/Qwen3-14B'), qwen(RENAMED)].join('\n'));
  const io = captureIo(process.cwd(), { HF_HUB_OFFLINE: '1', HF_HUB_CACHE: root });
  const code = await main(['sim', 'predict', '--rows', file, '--profile', 'default', '--json'], io);
  assert.equal(code, 0, io.err());
  const rows = (JSON.parse(io.out()) as { rows: Row[] }).rows;
  assert.equal(rows.length, pick.length + 2);
  for (const r of rows) {
    assert.equal(r.error, null, `line ${r.line} (${r.model}): ${r.error?.message ?? ''}`);
    for (const v of [r.output_throughput_tok_s, r.median_itl_ms]) assert.ok(v !== null && Number.isFinite(v) && v > 0, `line ${r.line} (${r.model}): ${String(v)}`);
  }
  const [catalogRow, renamedRow] = rows.slice(-2);
  assert.equal(renamedRow?.output_throughput_tok_s, catalogRow?.output_throughput_tok_s, 'the cached config.json is the catalog model');
  assert.equal(renamedRow?.median_itl_ms, catalogRow?.median_itl_ms);
});
