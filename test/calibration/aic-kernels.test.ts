import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { aicAttentionMs, aicGemmMs, fitAicKernels, parseAicAttention, parseAicGemms, type AicAttentionRow, type AicGemmRow } from '../../src/calibration/aic-kernels.js';
import { PROJECT_ROOT, defaultCatalog } from '../../src/catalog/index.js';
import { isLmBenchError } from '../../src/errors.js';

const catalog = defaultCatalog();
const h100 = catalog.gpu('H100-SXM');
const read = (file: string): string => readFileSync(join(PROJECT_ROOT, 'data', 'calibration', 'aiconfigurator-kernels', file), 'utf8');

test('a kernel row that is not a positive number or names another dtype is refused with its file and line', () => {
  const header = 'gpu,vllm_version,kernel,dtype,m,n,k,latency_ms';
  assert.throws(() => parseAicGemms(`${header}\nH100-SXM,0.24.0,x,bfloat16,8,4096,4096,-1\n`, 'g.csv'), (e: unknown) => isLmBenchError(e, 'LMB_ERR_CONFIG_INVALID') && /g\.csv:2: latency_ms/.test(String(e)));
  assert.throws(() => parseAicGemms(`${header}\nH100-SXM,0.24.0,x,int4,8,4096,4096,0.1\n`, 'g.csv'), (e: unknown) => /g\.csv:2: dtype must be bfloat16 or fp8/.test(String(e)));
  const attn = 'gpu,vllm_version,kernel,kv_cache_dtype,batch_size,context_tokens,num_heads,num_kv_heads,head_dim,latency_ms';
  assert.throws(() => parseAicAttention(`${attn}\nB200,0.24.0,x,fp8,64,abc,32,8,128,0.1\n`, 'a.csv'), (e: unknown) => /a\.csv:2: context_tokens/.test(String(e)));
});

test('the fit recovers the efficiencies that generated its rows', () => {
  const truth = { eta: 0.7, mfuBf16: 0.6, mfuFp8: 0.45, etaKv: 0.8, launchUs: 10, fp8Kv: 0.9 };
  const gemms: AicGemmRow[] = [];
  for (const dtype of ['bf16', 'fp8'] as const) {
    for (const m of [1, 8, 64, 512, 4096]) {
      for (const [n, k] of [[8192, 4096], [16384, 8192], [4096, 16384]] as const) {
        const shape = { m, n, k, dtype };
        gemms.push({ gpu: 'H100-SXM', version: 'x', ...shape, ms: aicGemmMs(shape, h100, truth.eta, dtype === 'fp8' ? truth.mfuFp8 : truth.mfuBf16, 1.5) });
      }
    }
  }
  const attention: AicAttentionRow[] = [];
  for (const kvDtype of ['bf16', 'fp8'] as const) {
    for (const batch of [64, 128, 256]) {
      for (const contextTokens of [1024, 2048, 4096, 8192]) {
        const row = { gpu: 'H100-SXM', version: 'x', kvDtype, batch, contextTokens, qHeads: 32, kvHeads: 8, headDim: 128, ms: 0 };
        attention.push({ ...row, ms: aicAttentionMs(row, h100, kvDtype === 'fp8' ? truth.etaKv * truth.fp8Kv : truth.etaKv, truth.launchUs) });
      }
    }
  }
  const fit = fitAicKernels(gemms, attention, h100, 1.5);
  assert.ok(Math.abs(fit.eta_weights - truth.eta) <= 0.01, `eta_weights ${fit.eta_weights}`);
  assert.ok(Math.abs(fit.mfu_bf16 - truth.mfuBf16) <= 0.01, `mfu_bf16 ${fit.mfu_bf16}`);
  assert.ok(Math.abs((fit.mfu_fp8 ?? 0) - truth.mfuFp8) <= 0.01, `mfu_fp8 ${fit.mfu_fp8}`);
  assert.ok(Math.abs(fit.eta_kv - truth.etaKv) <= 0.01, `eta_kv ${fit.eta_kv}`);
  assert.ok(Math.abs((fit.fp8KvEfficiency ?? 0) - truth.fp8Kv) <= 0.02, `fp8 KV ${fit.fp8KvEfficiency}`);
  assert.ok(fit.gemmMape < 0.01 && fit.attentionMape < 0.01);
});

test('the data: Hopper decodes an fp8 KV cache below the bf16 byte rate, Blackwell and Ada at it; cached-in-L2 rows are not fitted', () => {
  const gemms = parseAicGemms(read('gemm.csv'), 'gemm.csv');
  const attention = parseAicAttention(read('decode_attention.csv'), 'decode_attention.csv');
  const fitOf = (gpu: string, version: string) =>
    fitAicKernels(
      gemms.filter((g) => g.gpu === gpu && g.version === version),
      attention.filter((a) => a.gpu === gpu && a.version === version),
      catalog.gpu(gpu),
      catalog.profile.kernel_floor_us,
    );
  const hopper = fitOf('H100-SXM', '0.24.0');
  const blackwell = fitOf('B200', '0.24.0');
  const ada = fitOf('L40S', '0.24.0');
  assert.ok((hopper.fp8KvEfficiency ?? 1) < 0.9, `H100 ${hopper.fp8KvEfficiency}`);
  assert.ok((blackwell.fp8KvEfficiency ?? 0) >= 0.95 && (ada.fp8KvEfficiency ?? 0) >= 0.95);
  // The L40S reads 67 MB of KV at up to twice its DRAM bandwidth (its 96 MB L2 holds it): the fit skips
  // those rows and stays under the datasheet.
  assert.ok(ada.eta_kv < 0.9, `L40S eta_kv ${ada.eta_kv}`);
  for (const f of [hopper, blackwell, ada]) assert.ok(f.attentionMape < 0.15 && f.gemmMape < 0.3, JSON.stringify(f));
});
