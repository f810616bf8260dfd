import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aicMoeMs, fitMoeEfficiency, moeModelOf, moeOverrides, moeShape, parseAicMoe, type AicMoeRow } from '../../src/calibration/aic-moe.js';
import { PROFILE_BOUNDS } from '../../src/domain/index.js';
import { defaultCatalog } from '../../src/catalog/index.js';
import { isLmBenchError } from '../../src/errors.js';

const catalog = defaultCatalog();
const h100 = catalog.gpu('H100-SXM');
const HEADER = 'gpu,vllm_version,kernel,moe_dtype,num_tokens,hidden_size,inter_size,topk,num_experts,moe_tp_size,moe_ep_size,latency_ms';

test('a MoE row of another expert format, a bad number or a shape no catalog model has is refused by name', () => {
  assert.throws(() => parseAicMoe(`${HEADER}\nB200,0.24.0,k,nvfp4,64,2880,2880,4,128,1,1,0.1\n`, 'moe.csv'), (e: unknown) => isLmBenchError(e, 'LMB_ERR_CONFIG_INVALID') && /moe\.csv:2: moe_dtype/.test(String(e)));
  assert.throws(() => parseAicMoe(`${HEADER}\nB200,0.24.0,k,bfloat16,0,2048,768,8,128,1,1,0.1\n`, 'moe.csv'), (e: unknown) => /moe\.csv:2: num_tokens/.test(String(e)));
  const [odd] = parseAicMoe(`${HEADER}\nB200,0.24.0,k,bfloat16,64,2048,999,8,128,1,1,0.1\n`, 'moe.csv');
  assert.throws(() => moeModelOf(odd as AicMoeRow, catalog), (e: unknown) => /no catalog model has bf16 experts/.test(String(e)));
});

test('rows find their catalog model by expert shape and format: gpt-oss for MXFP4, the unquantised Qwen3-30B-A3B for bf16', () => {
  const rows = parseAicMoe(`${HEADER}\nH100-SXM,0.24.0,k,w4a16_mxfp4,64,2880,2880,4,128,1,1,0.1\nH100-SXM,0.24.0,k,bfloat16,64,2048,768,8,128,1,1,0.1\n`, 'moe.csv');
  assert.deepEqual(rows.map((r) => moeModelOf(r, catalog).id), ['gpt-oss-120b', 'qwen3-30b-a3b']);
});

test('the fit recovers the MoE efficiencies that generated its rows, and the override is the profile scaled by the ratio, inside the bounds', () => {
  const truth = { moe_efficiency: 0.6, moe_weight_efficiency: 0.8 };
  const rows: AicMoeRow[] = [];
  for (const tokens of [1, 16, 256, 4096, 8192]) {
    for (const [tp, ep] of [[1, 1], [2, 1], [1, 4]] as const) {
      const row: AicMoeRow = { gpu: 'H100-SXM', dtype: 'mxfp4', version: 'x', tokens, hiddenSize: 2880, interSize: 2880, topK: 4, experts: 128, tp, ep, ms: 0 };
      rows.push({ ...row, ms: aicMoeMs(row, catalog.model('gpt-oss-120b'), h100, { ...catalog.profile, ...truth }) });
    }
  }
  const fit = fitMoeEfficiency(rows, catalog, h100, catalog.profile);
  assert.ok(Math.abs(fit.moe_efficiency - truth.moe_efficiency) <= 0.025, JSON.stringify(fit));
  assert.ok(Math.abs(fit.moe_weight_efficiency - truth.moe_weight_efficiency) <= 0.025, JSON.stringify(fit));
  const p = { ...catalog.profile, moe_efficiency: 0.4, moe_weight_efficiency: 0.9 };
  const o = moeOverrides(p, { moe_efficiency: 0.5, moe_weight_efficiency: 2 }, { moe_efficiency: 0.8, moe_weight_efficiency: 1 }, PROFILE_BOUNDS);
  assert.equal(o.moe_efficiency, 0.25, 'scaled by the ratio 0.5 / 0.8, away from the bounds');
  assert.equal(o.moe_weight_efficiency, PROFILE_BOUNDS.moe_weight_efficiency[1], 'capped');
});

test('the shape table prices the one-GPU rows at the asked token counts under each GPU’s own profile, in order', () => {
  const rows = parseAicMoe(
    `${HEADER}\nH100-SXM,0.24.0,k,bfloat16,8192,2048,768,8,128,1,1,1.5\nH100-SXM,0.24.0,k,bfloat16,16,2048,768,8,128,1,1,0.4\nH100-SXM,0.24.0,k,bfloat16,16,2048,768,8,128,1,2,0.2\nH100-SXM,0.24.0,k,bfloat16,4,2048,768,8,128,1,1,0.1\nB200,0.24.0,k,bfloat16,16,2048,768,8,128,1,1,0.2\n`,
    'moe.csv',
  );
  const slow = { ...catalog.profile, moe_efficiency: 0.2 };
  const profileOf = (gpu: string) => (gpu === 'B200' ? catalog.profile : slow);
  const shape = moeShape(rows, catalog, profileOf, [16, 8192]);
  assert.deepEqual(shape.map((r) => [r.gpu, r.tokens, r.kernelMs]), [['B200', 16, 0.2], ['H100-SXM', 16, 0.4], ['H100-SXM', 8192, 1.5]], 'TP 1 without EP, the asked sizes, by GPU then tokens');
  const q30 = catalog.model('qwen3-30b-a3b');
  for (const r of shape) assert.equal(r.simulatedMs, aicMoeMs({ ...(rows[0] as AicMoeRow), gpu: r.gpu, tokens: r.tokens }, q30, catalog.gpu(r.gpu), profileOf(r.gpu)));
  const big = shape.at(-1);
  assert.ok(big !== undefined && big.simulatedMs > aicMoeMs({ ...(rows[0] as AicMoeRow) }, q30, h100, catalog.profile), 'the slower profile is the one used');
});
