import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { captureIo } from '../helpers/cli.js';
import { SimPredictJson } from '../../src/cli/json-output.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';

// sim predict resolves each row's model as --model does (issue 24): a pre-quantized checkpoint the
// catalog knows by its Hugging Face id, a fine-tune found only in a Hugging Face cache on disk, a
// config.json path relative to the CSV, and a name nothing knows (that row's error, the rest predicted).

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/hf-configs/${name}.json`, import.meta.url), 'utf8');
const SILICON_HEADER = 'backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms';

function cacheEntry(root: string, repo: string, text: string): void {
  const snap = join(root, `models--${repo.split('/').join('--')}`);
  mkdirSync(join(snap, 'refs'), { recursive: true });
  mkdirSync(join(snap, 'snapshots', 'r1'), { recursive: true });
  writeFileSync(join(snap, 'refs', 'main'), 'r1');
  writeFileSync(join(snap, 'snapshots', 'r1', 'config.json'), text);
}

interface Row {
  line: number;
  model: string;
  ttft_ms: number | null;
  tpot_ms: number | null;
  output_throughput_tok_s: number | null;
  median_itl_ms: number | null;
  error: { code: string; message: string } | null;
}

async function predict(file: string, env: Record<string, string>): Promise<{ code: number; rows: Row[] }> {
  const io = captureIo(process.cwd(), env);
  const code = await main(['sim', 'predict', '--rows', file, '--profile', 'default', '--json'], io);
  const out = JSON.parse(io.out()) as unknown;
  assertMatchesSchema(SimPredictJson, out, 'sim predict');
  return { code, rows: (out as { rows: Row[] }).rows };
}

test('sim predict (silicon rows): an FP8 checkpoint by its Hugging Face id, from the catalog or the cache, a config.json path, and an unknown name', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-predict-models-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cache = join(dir, 'hf');
  cacheEntry(cache, 'acme/Llama-3.1-8B-FP8-ft', fixture('llama-3.1-8b-fp8'));
  mkdirSync(join(dir, 'ckpt'));
  writeFileSync(join(dir, 'ckpt', 'config.json'), fixture('llama-3.1-8b-fp8'));
  const row = (model: string, precision: string): string => `vllm,0.12.0,${model},h200_sxm,${precision},agg,1024,128,fp8,8,1,1,1,1,,`;
  const file = join(dir, 'rows.csv');
  writeFileSync(
    file,
    [
      SILICON_HEADER,
      row('nvidia/Llama-3.1-8B-Instruct-FP8', 'fp8'),
      row('acme/Llama-3.1-8B-FP8-ft', 'fp8'),
      row('ckpt', ''),
      row('meta-llama/Llama-3.1-8B-Instruct', 'fp8'),
      row('meta-llama/Llama-3.1-8B-Instruct', ''),
      row('acme/not-cached', 'fp8'),
      row('nvidia/Llama-3.1-8B-Instruct-FP8', 'fp4'),
    ].join('\n'),
  );
  const { code, rows } = await predict(file, { HF_HUB_OFFLINE: '1', HF_HUB_CACHE: cache });
  assert.equal(code, 0);
  const [catalogFp8, cachedFp8, pathFp8, onlineFp8, bf16, missing, fp4] = rows;
  for (const r of [catalogFp8, cachedFp8, pathFp8, onlineFp8, bf16]) assert.ok(r?.error === null && (r.tpot_ms ?? 0) > 0, `line ${r?.line}: ${r?.error?.message}`);
  // The same checkpoint, however named, is the same prediction: the catalog row agrees with its config.json.
  assert.equal(cachedFp8?.tpot_ms, catalogFp8?.tpot_ms);
  assert.equal(pathFp8?.ttft_ms, catalogFp8?.ttft_ms);
  // A bf16 checkpoint served in bf16 reads twice the weight bytes a decode step: slower than either fp8.
  assert.ok((bf16?.tpot_ms ?? 0) > 1.3 * (catalogFp8?.tpot_ms ?? Infinity), `bf16 ${bf16?.tpot_ms} vs fp8 ${catalogFp8?.tpot_ms}`);
  assert.ok((bf16?.tpot_ms ?? 0) > 1.3 * (onlineFp8?.tpot_ms ?? Infinity), 'online fp8 of a bf16 checkpoint is fp8 too');
  assert.equal(missing?.error?.code, 'LMB_ERR_UNKNOWN_MODEL');
  assert.match(missing?.error?.message ?? '', /acme\/not-cached.*Hugging Face cache.*not asked: HF_HUB_OFFLINE=1/);
  assert.equal(fp4?.error?.code, 'LMB_ERR_KNOB_OUT_OF_DOMAIN');
  assert.equal(rows[0]?.model, 'nvidia/Llama-3.1-8B-Instruct-FP8', 'rows keep the name the file gave');
});

test('sim predict (ML.ENERGY rows): a model outside the catalog by its Hugging Face id from the cache', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-predict-mle-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cache = join(dir, 'hf');
  cacheEntry(cache, 'acme/Qwen3-14B-chat', fixture('qwen3-14b'));
  const header = 'model_id,task,weight_precision,total_params_b,active_params_b,gpu,num_gpus,tp,dp,ep,max_num_seqs,avg_output_len';
  const file = join(dir, 'rows.csv');
  writeFileSync(file, [header, 'Qwen/Qwen3-14B,lm-arena-chat,bfloat16,14.8,14.8,H100,1,1,1,1,8,620', 'acme/Qwen3-14B-chat,lm-arena-chat,bfloat16,14.8,14.8,H100,1,1,1,1,8,620', 'acme/unknown,lm-arena-chat,bfloat16,14.8,14.8,H100,1,1,1,1,8,620'].join('\n'));
  const { code, rows } = await predict(file, { HF_HUB_OFFLINE: '1', HF_HUB_CACHE: cache });
  assert.equal(code, 0);
  const [catalogRow, cachedRow, unknown] = rows;
  assert.ok(catalogRow?.error === null && (catalogRow.output_throughput_tok_s ?? 0) > 0);
  assert.equal(cachedRow?.error, null);
  assert.equal(cachedRow?.output_throughput_tok_s, catalogRow.output_throughput_tok_s, 'the cached config.json is the catalog model');
  assert.equal(cachedRow?.median_itl_ms, catalogRow.median_itl_ms);
  assert.equal(unknown?.error?.code, 'LMB_ERR_UNKNOWN_MODEL');
});
